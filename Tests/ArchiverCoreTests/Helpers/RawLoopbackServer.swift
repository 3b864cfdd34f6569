import Foundation
import Glibc
@testable import ArchiverCore
@testable import ArchiverServer

/// A loopback server that hands every accepted connection to `serve`, one at a time, and closes
/// it after: for answers `HTTPServer` cannot give (it always sends `Content-Length` and never
/// resets a kept connection).
final class RawLoopbackServer: @unchecked Sendable {
    let port: Int
    private let listener: Int32
    private let done = DispatchGroup()

    init(serve: @escaping @Sendable (Int32) -> Void) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && listen(fd, 8) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else {
            close(fd)
            throw RawHTTPClient.Failure.connect(errno)
        }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        done.enter()
        Thread { [done] in
            while true {
                let connection = accept(fd, nil, nil)
                guard connection >= 0 else { break }
                serve(connection)
                close(connection)
            }
            done.leave()
        }.start()
    }

    func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }

    /// Stops accepting and waits for the accept thread.
    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        done.wait()
        close(listener)
    }

    /// Reads a request head (what fits in 4 KiB: the fetchers' requests do).
    static func readRequest(_ fd: Int32) {
        var request = [UInt8](repeating: 0, count: 4096)
        _ = recv(fd, &request, request.count, 0)
    }

    /// Sends all of `bytes`; false when the client went away.
    static func send(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        Glibc.send(fd, bytes, bytes.count, Int32(MSG_NOSIGNAL)) == bytes.count
    }
}

/// A loopback server that answers every connection with `200` and a body of `total` bytes
/// delimited only by closing the connection (no `Content-Length`), so a client's size cap can
/// only act while the body streams in.
final class UnsizedBodyServer: @unchecked Sendable {
    private let sent = Locked<Int64>(0)
    private var server: RawLoopbackServer!

    init(total: Int64) throws {
        server = try RawLoopbackServer { [sent] fd in
            RawLoopbackServer.readRequest(fd)
            guard RawLoopbackServer.send(fd, Array("HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nConnection: close\r\n\r\n".utf8))
            else { return }
            let block = [UInt8](repeating: 0x2A, count: 64 * 1024)
            var remaining = total
            while remaining > 0 {
                let count = Int(min(Int64(block.count), remaining))
                let written = Glibc.send(fd, block, count, Int32(MSG_NOSIGNAL))
                if written <= 0 { return }
                remaining -= Int64(written)
                sent.withLock { $0 += Int64(written) }
            }
        }
    }

    /// Body bytes written to clients so far.
    var bytesSent: Int64 { sent.withLock { $0 } }

    func url(_ path: String) -> URL { server.url(path) }

    func stop() { server.stop() }
}
