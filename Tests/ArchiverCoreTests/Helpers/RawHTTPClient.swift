import Foundation
import Glibc

/// A blocking HTTP/1.1 client on one raw socket, to see exactly what goes over a connection.
///
/// Every read has a receive timeout so a broken server fails the test instead of hanging it.
final class RawHTTPClient {
    struct Response {
        var status: Int
        var headers: [String: String]
        var body: Data
    }

    enum Failure: Error {
        case connect(Int32)
        case closed
        case malformed(String)
    }

    let fd: Int32
    private var buffer = Data()

    init(port: Int, host: String = "127.0.0.1", timeout: Int = 5) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr(host)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            let code = errno
            close(fd)
            throw Failure.connect(code)
        }
        var time = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit {
        close(fd)
    }

    /// Sends raw bytes.
    func send(_ text: String) {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent <= 0 { return }
            offset += sent
        }
    }

    /// Sends a GET for `path` with the given extra header lines.
    func get(_ path: String, headers: [String] = []) {
        send("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n" + headers.map { $0 + "\r\n" }.joined() + "\r\n")
    }

    /// Reads one response whose body length is given by Content-Length (none for a HEAD).
    func readResponse(bodyExpected: Bool = true) throws -> Response {
        let marker = Data("\r\n\r\n".utf8)
        var headEnd = buffer.range(of: marker)
        while headEnd == nil {
            try fill()
            headEnd = buffer.range(of: marker)
        }
        let head = String(decoding: buffer[buffer.startIndex..<headEnd!.lowerBound], as: UTF8.self)
        buffer = Data(buffer[headEnd!.upperBound...])
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { throw Failure.malformed(head) }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let length = bodyExpected ? Int(headers["content-length"] ?? "0") ?? 0 : 0
        while buffer.count < length { try fill() }
        let body = Data(buffer.prefix(length))
        buffer = Data(buffer.dropFirst(length))
        return Response(status: status, headers: headers, body: body)
    }

    /// Whether the server closed the connection (end of stream or reset) before the timeout.
    func waitForClose() -> Bool {
        var byte: UInt8 = 0
        while true {
            let count = recv(fd, &byte, 1, 0)
            if count == 0 { return true }
            if count < 0 { return errno == ECONNRESET }
        }
    }

    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { throw Failure.closed }
        buffer.append(contentsOf: chunk[0..<count])
    }
}
