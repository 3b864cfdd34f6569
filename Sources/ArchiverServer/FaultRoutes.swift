import ArchiverCore
import Foundation

/// Paths that misbehave on purpose, the way real image hosts do, so the archiver's handling of
/// each fault can be shown and tested: `archiver serve --faults` and the project's tests.
///
/// Every path is `/fault/<name>/<key>`; the key only makes URLs distinct. Faults that clear up
/// ("-then-ok", "-retry-after") count requests per path, so each distinct URL misbehaves on its
/// own; the counts are kept for the last `maxCountedPaths` paths first asked for, so a client
/// asking for endless distinct paths does not grow the server.
package final class FaultRoutes: Sendable {
    /// Every fault name, with what it does.
    package static let catalog: [(name: String, behaviour: String)] = [
        ("500-then-ok", "HTTP 500 twice, then the image"),
        ("503-retry-after", "HTTP 503 with Retry-After: 1 once, then the image"),
        ("429-retry-after", "HTTP 429 with Retry-After as an HTTP date 1-2 s ahead once, then the image"),
        ("reset-then-ok", "connection reset mid-body once, then the image"),
        ("redirect", "302 to a good image"),
        ("octet-stream", "a good PNG served as application/octet-stream"),
        ("truncated", "a body always cut short"),
        ("corrupt-idat", "a PNG with one IDAT byte flipped"),
        ("html", "an HTML error page with status 200"),
        ("jpeg", "a JPEG header and no image"),
        ("empty", "an empty body with status 200"),
        ("404", "HTTP 404"),
        ("410", "HTTP 410"),
        ("huge", "a 2 GiB body"),
        ("hang", "never answers"),
        ("loop", "redirects to itself forever"),
        ("giant", "a PNG whose header claims 60000 x 60000"),
    ]

    private let image: Data
    /// Requests per path, by the path's hash (seeded per process): a path of 64 KiB, the most a
    /// request head holds, costs the table no more than a short one.
    private let counts = Locked(RecentCounts<Int>(capacity: FaultRoutes.maxCountedPaths))
    /// The most paths whose requests are counted: far more than a run of the tests or the demo
    /// asks for, in under 3 MiB of table.
    static let maxCountedPaths = 65_536

    /// `image` is the good PNG the faults serve when they do answer well.
    package init(image: Data) {
        self.image = image
    }

    /// How many paths the request counts are kept for.
    var countedPaths: Int { counts.withLock { $0.count } }

    /// The response for a `/fault/...` path, or nil for any other path.
    package func respond(to request: HTTPRequest) -> HTTPResponse? {
        let path = request.pathWithoutQuery
        let parts = path.split(separator: "/")
        guard parts.count >= 2, parts[0] == "fault" else { return nil }
        // Only the faults that clear up count, and each request to them once.
        func seen() -> Int { counts.withLock { $0.increment(path.hashValue) } }
        switch parts[1] {
        case "500-then-ok": return seen() <= 2 ? .text(500, "try again\n") : .png(image)
        case "503-retry-after":
            return seen() == 1 ? HTTPResponse(status: 503, headers: [("Retry-After", "1")]) : .png(image)
        case "429-retry-after":
            return seen() == 1 ? HTTPResponse(status: 429, headers: [("Retry-After", Self.httpDate(secondsAhead: 2))]) : .png(image)
        case "reset-then-ok":
            return seen() == 1 ? HTTPResponse(status: 200, headers: [("Content-Type", "image/png")], body: .reset(image)) : .png(image)
        case "redirect": return .redirect(to: "/fault/octet-stream/\(parts.dropFirst(2).joined(separator: "/"))")
        case "octet-stream": return HTTPResponse(status: 200, headers: [("Content-Type", "application/octet-stream")], body: .data(image))
        case "truncated":
            return HTTPResponse(status: 200, headers: [("Content-Type", "image/png")], body: .truncated(image.prefix(image.count / 2), declaredLength: image.count))
        case "corrupt-idat": return .png(Self.corruptIDAT(image))
        case "html": return .text(200, "<!doctype html><html><body><h1>Image not found</h1></body></html>\n")
        case "jpeg": return HTTPResponse(status: 200, headers: [("Content-Type", "image/jpeg")], body: .data(Data([0xFF, 0xD8, 0xFF, 0xE0, 0, 16]) + Data("JFIF".utf8) + Data(count: 64)))
        case "empty": return HTTPResponse(status: 200, headers: [("Content-Type", "image/png")], body: .data(Data()))
        case "404": return .text(404, "not found\n")
        case "410": return .text(410, "gone\n")
        case "huge": return HTTPResponse(status: 200, headers: [("Content-Type", "image/png")], body: .stream(chunk: image, totalLength: 2 << 30))
        case "hang": return HTTPResponse(status: 200, body: .hang)
        case "loop": return .redirect(to: path)
        case "giant": return .png(Self.giantHeader())
        default: return .text(404, "unknown fault \(parts[1]); see 'archiver serve --faults'\n")
        }
    }

    static func httpDate(secondsAhead: Double) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: Date(timeIntervalSinceNow: secondsAhead))
    }

    /// The image with one byte of its first IDAT chunk's data flipped (its CRC left as it was).
    static func corruptIDAT(_ png: Data) -> Data {
        var bytes = [UInt8](png)
        var offset = 8
        while offset + 8 <= bytes.count {
            let length = Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            if bytes[(offset + 4)..<(offset + 8)].elementsEqual("IDAT".utf8), length > 0 {
                bytes[offset + 8 + length / 2] ^= 0x5A
                break
            }
            offset += 12 + length
        }
        return Data(bytes)
    }

    /// A well-formed PNG signature and IHDR (valid CRC) claiming 60000 x 60000 RGB, then a token IDAT and IEND.
    static func giantHeader() -> Data {
        func chunk(_ type: String, _ body: [UInt8]) -> [UInt8] {
            let typed = Array(type.utf8) + body
            return bigEndian(UInt32(body.count)) + typed + bigEndian(CRC32.checksum(typed))
        }
        func bigEndian(_ value: UInt32) -> [UInt8] { [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) } }
        let ihdr = bigEndian(60000) + bigEndian(60000) + [8, 2, 0, 0, 0]
        return Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", ihdr) + chunk("IDAT", [0x78, 0x9C, 0x03, 0, 0, 0, 0, 1]) + chunk("IEND", []))
    }
}

/// CRC-32 as PNG chunks use it.
enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { n in
        (0..<8).reduce(UInt32(n)) { c, _ in c & 1 == 1 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
    }

    static func checksum(_ bytes: [UInt8]) -> UInt32 {
        ~bytes.reduce(UInt32.max) { table[Int(($0 ^ UInt32($1)) & 0xFF)] ^ ($0 >> 8) }
    }
}
