import Foundation
import Glibc
@testable import ArchiverCore
@testable import ArchiverServer

/// A loopback server that answers every connection with `200` and a body of `total` bytes
/// delimited only by closing the connection (no `Content-Length`), so a client's size cap can
/// only act while the body streams in. `HTTPServer` always sends `Content-Length`.
final class UnsizedBodyServer: @unchecked Sendable {
    let port: Int
    private let listener: Int32
    private let total: Int64
    private let sent = Locked<Int64>(0)
    private let done = DispatchGroup()

    init(total: Int64) throws {
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
        self.total = total
        done.enter()
        Thread { [self] in
            acceptLoop()
            done.leave()
        }.start()
    }

    /// Body bytes written to clients so far.
    var bytesSent: Int64 { sent.withLock { $0 } }

    func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }

    /// Stops accepting and waits for the accept thread.
    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        done.wait()
        close(listener)
    }

    private func acceptLoop() {
        while true {
            let fd = accept(listener, nil, nil)
            guard fd >= 0 else { return }
            serve(fd)
            close(fd)
        }
    }

    private func serve(_ fd: Int32) {
        var request = [UInt8](repeating: 0, count: 4096)
        _ = recv(fd, &request, request.count, 0)
        let head = Array("HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nConnection: close\r\n\r\n".utf8)
        guard Glibc.send(fd, head, head.count, Int32(MSG_NOSIGNAL)) == head.count else { return }
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
