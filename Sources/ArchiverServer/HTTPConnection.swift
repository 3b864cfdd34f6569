import ArchiverCore
import Dispatch
import Foundation
import Glibc

/// One accepted socket: reads requests off it and writes responses, blocking.
///
/// Owned by the connection's thread; the server closes the descriptor.
struct HTTPConnection {
    enum ReadResult {
        case request(HTTPRequest)
        /// The peer closed, the socket failed, or the server shut it down.
        case closed
        /// The bytes were not an HTTP/1.x request; answer `status` and close.
        case malformed(status: Int, message: String)
        /// No request in time: idle between requests, or (`midRequest`) a head that did not
        /// arrive whole within the header timeout.
        case timedOut(midRequest: Bool)
    }

    /// How long `readRequest` waits, in seconds.
    struct Timeouts {
        /// For the first byte of a request after an earlier one; nil: the first request,
        /// whose whole head must come within `header` of the connection's start.
        var idle: Double?
        /// From the first byte of a request to the end of its head.
        var header: Double
    }

    private enum Fill { case data, closed, timedOut }

    static let maxHeaderBytes = 64 * 1024
    private static let headerEnd: [UInt8] = Array("\r\n\r\n".utf8)

    let fd: Int32
    private var buffer: [UInt8] = []
    private var start = 0

    /// `fd`, for the calls that retry when a signal interrupts them.
    private var socket: FileDescriptor { FileDescriptor(rawValue: fd) }

    init(fd: Int32) {
        self.fd = fd
    }

    /// Reads the next request line and headers, and skips any `Content-Length` body, within
    /// `timeouts`.
    mutating func readRequest(_ timeouts: Timeouts) -> ReadResult {
        var scanned = start
        var begun = start < buffer.count
        var deadline = Self.now + (begun ? timeouts.header : timeouts.idle ?? timeouts.header)
        while true {
            if let end = findHeaderEnd(from: scanned) {
                let head = String(decoding: buffer[start..<end], as: UTF8.self)
                start = end + Self.headerEnd.count
                let result = Self.parse(head)
                if case .request(let request) = result {
                    if request.headers["transfer-encoding"] != nil {
                        return .malformed(status: 501, message: "chunked request bodies are not supported")
                    }
                    if let value = request.headers["content-length"] {
                        guard let length = Int(value), length >= 0 else {
                            return .malformed(status: 400, message: "bad Content-Length")
                        }
                        guard skipBody(length, idle: timeouts.idle ?? timeouts.header) else { return .closed }
                    }
                }
                compact()
                return result
            }
            if buffer.count - start > Self.maxHeaderBytes {
                return .malformed(status: 431, message: "request head larger than \(Self.maxHeaderBytes) bytes")
            }
            scanned = max(start, buffer.count - (Self.headerEnd.count - 1))
            switch fill(until: deadline) {
            case .data: break
            case .closed: return .closed
            case .timedOut: return .timedOut(midRequest: begun)
            }
            if !begun, start < buffer.count {
                begun = true
                // A request after an idle wait has begun: its head gets the header timeout from
                // now (the first request's runs from the connection's start).
                if timeouts.idle != nil { deadline = Self.now + timeouts.header }
            }
        }
    }

    /// Monotonic seconds.
    private static var now: Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

    /// Writes `response`; returns whether the connection may serve another request.
    mutating func send(_ response: HTTPResponse, for request: HTTPRequest?, keepAlive: Bool) -> Bool {
        let headOnly = request?.method == "HEAD"
        switch response.body {
        case .data(let data):
            let head = Self.head(response, contentLength: Int64(data.count), keepAlive: keepAlive)
            var bytes = Data(head.utf8)
            if !headOnly { bytes.append(data) }
            return write(bytes) && keepAlive
        case .truncated(let data, let declaredLength):
            let head = Self.head(response, contentLength: Int64(declaredLength), keepAlive: false)
            var bytes = Data(head.utf8)
            if !headOnly { bytes.append(data) }
            _ = write(bytes)
            return false
        case .reset(let data):
            let head = Self.head(response, contentLength: Int64(data.count), keepAlive: false)
            var bytes = Data(head.utf8)
            if !headOnly { bytes.append(data.prefix(data.count / 2)) }
            _ = write(bytes)
            var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
            setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
            return false
        case .stream(let chunk, let totalLength):
            let head = Self.head(response, contentLength: totalLength, keepAlive: keepAlive)
            guard write(Data(head.utf8)) else { return false }
            if headOnly { return keepAlive }
            return writeRepeating(chunk, total: totalLength) && keepAlive
        case .hang:
            drainUntilClosed()
            return false
        }
    }

    private static func head(_ response: HTTPResponse, contentLength: Int64, keepAlive: Bool) -> String {
        var head = "HTTP/1.1 \(response.status) \(HTTPResponse.reason(for: response.status))\r\n"
        let written: Set<String> = ["content-length", "connection", "transfer-encoding"]
        for (name, value) in response.headers where !written.contains(name.lowercased()) {
            head += "\(name): \(value)\r\n"
        }
        if response.status != 204 && !(100..<200).contains(response.status) {
            head += "Content-Length: \(contentLength)\r\n"
        }
        head += keepAlive ? "Connection: keep-alive\r\n" : "Connection: close\r\n"
        head += "\r\n"
        return head
    }

    private static func parse(_ head: String) -> ReadResult {
        var lines = head.split(separator: "\r\n", omittingEmptySubsequences: false)[...]
        // Tolerate empty lines before a request line (RFC 9112, section 2.2).
        while let first = lines.first, first.isEmpty { lines = lines.dropFirst() }
        guard let requestLine = lines.popFirst() else {
            return .malformed(status: 400, message: "empty request")
        }
        let parts = requestLine.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 3, parts[2].hasPrefix("HTTP/1.") else {
            return .malformed(status: 400, message: "bad request line")
        }
        var headers: [String: String] = [:]
        for line in lines where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else {
                return .malformed(status: 400, message: "bad header line")
            }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            if let existing = headers[name] {
                headers[name] = existing + ", " + value
            } else {
                headers[name] = value
            }
        }
        return .request(HTTPRequest(
            method: String(parts[0]), path: String(parts[1]), headers: headers, version: String(parts[2])
        ))
    }

    private func findHeaderEnd(from index: Int) -> Int? {
        let marker = Self.headerEnd
        guard buffer.count >= marker.count else { return nil }
        var i = max(index, start)
        while i + marker.count <= buffer.count {
            if buffer[i] == marker[0] && buffer[i + 1] == marker[1]
                && buffer[i + 2] == marker[2] && buffer[i + 3] == marker[3] {
                return i
            }
            i += 1
        }
        return nil
    }

    /// Reads more bytes into the buffer, waiting until `deadline` (monotonic seconds) at most.
    private mutating func fill(until deadline: Double) -> Fill {
        while true {
            let remaining = deadline - Self.now
            guard remaining > 0 else { return .timedOut }
            do {
                if try socket.waitReadable(milliseconds: Int32(min(remaining * 1000, 3_600_000).rounded(.up))) {
                    return fill() ? .data : .closed
                }
            } catch {
                return .closed
            }
        }
    }

    /// Reads more bytes into the buffer; false at end of stream or on error.
    private mutating func fill() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        guard let count = chunk.withUnsafeMutableBytes({ try? socket.receive(into: $0) }), count > 0 else { return false }
        buffer.append(contentsOf: chunk[0..<count])
        return true
    }

    /// Skips a body of `length` bytes; false when it ends early or stalls for `idle` seconds.
    private mutating func skipBody(_ length: Int, idle: Double) -> Bool {
        var remaining = length
        while true {
            let available = min(remaining, buffer.count - start)
            start += available
            remaining -= available
            if remaining == 0 { return true }
            compact()
            guard case .data = fill(until: Self.now + idle) else { return false }
        }
    }

    private mutating func compact() {
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
        } else if start > 32 * 1024 {
            buffer.removeFirst(start)
            start = 0
        }
    }

    /// Reads and discards until the peer closes or the server shuts the socket down.
    private mutating func drainUntilClosed() {
        while fill() { buffer.removeAll(keepingCapacity: true) }
        start = 0
    }

    private func write(_ data: Data) -> Bool {
        data.withUnsafeBytes { bytes in (try? socket.send(all: bytes)) != nil }
    }

    private func writeRepeating(_ chunk: Data, total: Int64) -> Bool {
        let unit = chunk.isEmpty ? Data(count: 1) : chunk
        var block = Data()
        repeat { block.append(unit) } while block.count < 64 * 1024
        var remaining = total
        while remaining > 0 {
            let count = Int(min(Int64(block.count), remaining))
            guard write(count == block.count ? block : block.prefix(count)) else { return false }
            remaining -= Int64(count)
        }
        return true
    }
}
