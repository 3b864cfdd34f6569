import ArchiverCore
import Foundation
import Glibc

/// A small blocking HTTP/1.1 server on a loopback socket, for `archiver serve` and for tests.
///
/// One thread accepts; every connection gets its own thread, which reads requests one after
/// another (keep-alive) and calls the handler for each. A handler may block on purpose: the
/// server never waits for it except on that connection. `stop()` closes the listener and shuts
/// every open connection down, which wakes any thread blocked on the socket.
public final class HTTPServer: Sendable {
    private struct State {
        var started = false
        var stopped = false
        var connections: Set<Int32> = []
        var accepted = 0
        var peakOpen = 0
    }

    /// The port the server listens on (the real one when 0 was asked for).
    public let port: Int
    /// The address the server listens on.
    public let host: String
    private let listener: Int32
    private let handler: @Sendable (HTTPRequest) -> HTTPResponse
    private let state = Locked(State())
    private let acceptLoopDone = DispatchGroup()

    /// `http://HOST:PORT`, with no trailing slash.
    public var baseURL: String { "http://\(host):\(port)" }

    /// Binds `host:port` and listens; `port` 0 picks a free ephemeral port.
    ///
    /// Requests are served only after `start()`. Throws `HTTPServer.Error`.
    public init(
        host: String = "127.0.0.1",
        port: UInt16 = 0,
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
    }

    deinit {
        // Running threads hold the server, so reaching here means it was never started, or
        // was stopped; only the never-stopped listener is left to close.
        if !state.withLock({ $0.stopped }) { close(listener) }
    }

    /// Starts accepting connections on a thread of its own. Calling it again does nothing.
    public func start() {
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
    public func stop() {
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
    public var openConnections: Int { state.withLock { $0.connections.count } }

    /// Connections accepted since the start, and the most that were open at once.
    public var connectionCounts: (accepted: Int, peakOpen: Int) {
        state.withLock { ($0.accepted, $0.peakOpen) }
    }

    private func acceptLoop() {
        while true {
            let fd = accept(listener, nil, nil)
            if fd < 0 {
                let code = errno
                if state.withLock({ $0.stopped }) { return }
                switch code {
                case EINTR, ECONNABORTED, EPROTO:
                    continue
                case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                    usleep(10_000)  // Out of descriptors: let some connections finish.
                    continue
                default:
                    return
                }
            }
            let registered = state.withLock { state -> Bool in
                guard !state.stopped else { return false }
                state.connections.insert(fd)
                state.accepted += 1
                state.peakOpen = max(state.peakOpen, state.connections.count)
                return true
            }
            guard registered else {
                close(fd)
                return
            }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)  // accept4 is not imported from Glibc.
            var yes: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
            let thread = Thread { [self] in
                serve(fd)
                state.withLock { _ = $0.connections.remove(fd) }
                close(fd)
            }
            thread.name = "HTTPServer.connection:\(port)"
            thread.start()
        }
    }

    private func serve(_ fd: Int32) {
        var connection = HTTPConnection(fd: fd)
        while true {
            switch connection.readRequest() {
            case .closed:
                return
            case .malformed(let status, let message):
                _ = connection.send(.text(status, message + "\n"), for: nil, keepAlive: false)
                return
            case .request(let request):
                let response = handler(request)
                let keepAlive = request.wantsKeepAlive && !state.withLock { $0.stopped }
                guard connection.send(response, for: request, keepAlive: keepAlive) else { return }
            }
        }
    }
}
