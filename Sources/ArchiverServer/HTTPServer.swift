import ArchiverCore
import Foundation
import Glibc

/// A small blocking HTTP/1.1 server on a loopback socket, for `archiver serve` and for tests.
///
/// One thread accepts; every connection gets its own thread, which reads requests one after
/// another (keep-alive) and calls the handler for each. A handler may block on purpose: the
/// server never waits for it except on that connection. `stop()` closes the listener and shuts
/// every open connection down, which wakes any thread blocked on the socket.
///
/// What a client can hold is bounded (`Limits`): at most `maxConnections` open at once (one
/// more is answered 503 and closed at once), a request head must arrive within
/// `headerTimeout` (else 408 and close), and a keep-alive connection idle for `idleTimeout`
/// is closed, as is one whose peer stops reading a response for that long.
package final class HTTPServer: Sendable {
    /// How much a client can hold of the server.
    struct Limits: Sendable {
        /// Connections open at once; one more is answered 503 and closed.
        var maxConnections: Int
        /// Seconds from a connection's start, or a request's first byte, to the end of its head.
        var headerTimeout: Double
        /// Seconds a keep-alive connection may wait for its next request, or a send may stall.
        var idleTimeout: Double

        init(maxConnections: Int = 256, headerTimeout: Double = 10, idleTimeout: Double = 30) {
            self.maxConnections = maxConnections
            self.headerTimeout = headerTimeout
            self.idleTimeout = idleTimeout
        }
    }

    /// Starts `body` on a new detached thread; false when no thread could be made.
    typealias ThreadStarter = @Sendable (@escaping @Sendable () -> Void) -> Bool

    private struct State {
        var started = false
        var stopped = false
        var connections: Set<Int32> = []
        var accepted = 0
        var peakOpen = 0
        var refused = 0
    }

    /// The port the server listens on (the real one when 0 was asked for).
    let port: Int
    /// The address the server listens on.
    let host: String
    /// The limits this server enforces.
    let limits: Limits
    private let listener: Int32
    private let handler: @Sendable (HTTPRequest) -> HTTPResponse
    private let startThread: ThreadStarter
    private let state = Locked(State())
    private let acceptLoopDone = DispatchGroup()

    /// `http://HOST:PORT`, with no trailing slash.
    package var baseURL: String { "http://\(host):\(port)" }

    /// Binds `host:port` and listens; `port` 0 picks a free ephemeral port.
    ///
    /// Requests are served only after `start()`. Throws `HTTPServer.Error`.
    package convenience init(
        host: String = "127.0.0.1", port: UInt16 = 0, handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse
    ) throws {
        try self.init(host: host, port: port, limits: Limits(), handler: handler)
    }

    /// As the public initializer, with other limits.
    convenience init(
        host: String = "127.0.0.1", port: UInt16 = 0, limits: Limits, handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse
    ) throws {
        try self.init(host: host, port: port, limits: limits, startThread: Self.startDetachedThread, handler: handler)
    }

    /// As the public initializer, with the way connection threads are started injected (tests
    /// make it fail).
    init(
        host: String, port: UInt16, limits: Limits, startThread: @escaping ThreadStarter,
        handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse
    ) throws {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else { throw Error.invalidHost(host) }

        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Error.systemCall("socket", errno: errno) }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))

        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        if bound != 0 {
            let code = errno
            close(fd)
            if code == EADDRINUSE { throw Error.addressInUse(host: host, port: port) }
            throw Error.systemCall("bind", errno: code)
        }
        guard listen(fd, 512) == 0 else {
            let code = errno
            close(fd)
            throw Error.systemCall("listen", errno: code)
        }

        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else {
            let code = errno
            close(fd)
            throw Error.systemCall("getsockname", errno: code)
        }

        self.host = host
        self.port = Int(UInt16(bigEndian: actual.sin_port))
        self.listener = fd
        self.handler = handler
        self.limits = limits
        self.startThread = startThread
    }

    deinit {
        // Running threads hold the server, so reaching here means it was never started, or
        // was stopped; only the never-stopped listener is left to close.
        if !state.withLock({ $0.stopped }) { close(listener) }
    }

    /// Starts accepting connections on a thread of its own. Calling it again does nothing.
    package func start() {
        let shouldStart = state.withLock { state -> Bool in
            guard !state.started, !state.stopped else { return false }
            state.started = true
            return true
        }
        guard shouldStart else { return }
        acceptLoopDone.enter()
        let thread = Thread { [self] in
            acceptLoop()
            acceptLoopDone.leave()
        }
        thread.name = "HTTPServer.accept:\(port)"
        thread.start()
    }

    /// Closes the listener and every open connection, and returns once the accept thread is done.
    ///
    /// Threads blocked reading, writing or in `.hang` wake up and close their connection; a
    /// handler that blocks on its own is not interrupted. Safe to call more than once.
    package func stop() {
        let first = state.withLock { state -> Bool in
            guard !state.stopped else { return false }
            state.stopped = true
            // Under the lock: a connection leaves this set before its thread closes the
            // descriptor, so every number here is still ours.
            for fd in state.connections { shutdown(fd, Int32(SHUT_RDWR)) }
            return true
        }
        guard first else {
            acceptLoopDone.wait()
            return
        }
        // On Linux, shutdown on a listening socket wakes a blocked accept() with EINVAL.
        shutdown(listener, Int32(SHUT_RDWR))
        acceptLoopDone.wait()
        close(listener)
    }

    /// The number of connections open right now.
    var openConnections: Int { state.withLock { $0.connections.count } }

    /// Connections accepted since the start, and the most that were open at once.
    var connectionCounts: (accepted: Int, peakOpen: Int) {
        state.withLock { ($0.accepted, $0.peakOpen) }
    }

    /// Connections closed at once since the start: over `maxConnections`, or no thread for them.
    var refusedConnections: Int { state.withLock { $0.refused } }

    private func acceptLoop() {
        while true {
            let fd: Int32
            do {
                fd = try FileDescriptor(rawValue: listener).accept().rawValue
            } catch {
                if state.withLock({ $0.stopped }) { return }
                switch error.rawValue {
                case ECONNABORTED, EPROTO:
                    continue
                case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                    usleep(10_000)  // Out of descriptors: let some connections finish.
                    continue
                default:
                    return
                }
            }
            enum Admission { case stopped, full, admitted }
            let admission = state.withLock { state -> Admission in
                guard !state.stopped else { return .stopped }
                state.accepted += 1
                guard state.connections.count < limits.maxConnections else {
                    state.refused += 1
                    return .full
                }
                state.connections.insert(fd)
                state.peakOpen = max(state.peakOpen, state.connections.count)
                return .admitted
            }
            switch admission {
            case .stopped:
                close(fd)
                return
            case .full:
                refuse(fd)
                continue
            case .admitted:
                break
            }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)  // accept4 is not imported from Glibc.
            var yes: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
            // A peer that stops reading a response must not hold the thread forever.
            var sendTimeout = Self.timeval(seconds: limits.idleTimeout)
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &sendTimeout, socklen_t(MemoryLayout<timeval>.size))
            let started = startThread { [self] in
                serve(fd)
                finish(fd)
            }
            if !started {
                // Without a thread nobody would ever close it: the peer would wait, and the
                // socket sit in CLOSE_WAIT once it gave up.
                state.withLock { $0.refused += 1 }
                finish(fd)
            }
        }
    }

    /// Forgets and closes a connection (in that order: a number in the set is always ours).
    private func finish(_ fd: Int32) {
        state.withLock { _ = $0.connections.remove(fd) }
        close(fd)
    }

    /// Answers a connection over the limit 503 without waiting for it, and closes it.
    private func refuse(_ fd: Int32) {
        let text = "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        _ = Array(text.utf8).withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
        shutdown(fd, Int32(SHUT_WR))
        close(fd)
    }

    private func serve(_ fd: Int32) {
        var connection = HTTPConnection(fd: fd)
        var timeouts = HTTPConnection.Timeouts(idle: nil, header: limits.headerTimeout)
        while true {
            switch connection.readRequest(timeouts) {
            case .closed:
                return
            case .timedOut(let midRequest):
                if midRequest {
                    let message = "request head not received within \(limits.headerTimeout) s\n"
                    _ = connection.send(.text(408, message), for: nil, keepAlive: false)
                }
                return
            case .malformed(let status, let message):
                _ = connection.send(.text(status, message + "\n"), for: nil, keepAlive: false)
                return
            case .request(let request):
                let response = handler(request)
                let keepAlive = request.wantsKeepAlive && !state.withLock { $0.stopped }
                guard connection.send(response, for: request, keepAlive: keepAlive) else { return }
                timeouts.idle = limits.idleTimeout
            }
        }
    }

    /// `seconds` as a `timeval` (at least a microsecond: zero would mean no timeout).
    static func timeval(seconds: Double) -> Glibc.timeval {
        let micros = max(1, Int((seconds * 1e6).rounded()))
        return Glibc.timeval(tv_sec: micros / 1_000_000, tv_usec: micros % 1_000_000)
    }

    /// Starts `body` on a detached POSIX thread; false when `pthread_create` fails (out of
    /// memory or over the process's thread limit), which `Thread.start()` would not report.
    static func startDetachedThread(_ body: @escaping @Sendable () -> Void) -> Bool {
        final class Box {
            let body: @Sendable () -> Void
            init(_ body: @escaping @Sendable () -> Void) { self.body = body }
        }
        let box = Unmanaged.passRetained(Box(body))
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        var thread = pthread_t()
        let created = pthread_create(&thread, &attributes, { context in
            Unmanaged<Box>.fromOpaque(context!).takeRetainedValue().body()
            return nil
        }, box.toOpaque())
        if created != 0 {
            box.release()
            return false
        }
        return true
    }
}
