import ArchiverCore
import Foundation

/// The routes of the retired image host via.placeholder.com: `GET /<size>/<colour>` answers a
/// solid square PNG of that size and colour.
///
/// `size` is 1...2000. `colour` is 3 to 6 hex digits: 3 expand like CSS (`abc` -> `aabbcc`),
/// 4 or 5 are left-padded with `0` (`61a65` -> `061a65`). A query string is ignored. Anything
/// else is a 404. Images are made by the injected encoder and the most recently used ones kept
/// (`ImageCache`: at most `maxCachedImages` and `maxCachedBytes`), so repeated requests are
/// cheap; an image made again after eviction has the same bytes (the encoder is deterministic).
package struct PlaceholderImages: Sendable {
    /// One image to make: edge length in pixels and colour.
    struct Key: Hashable, Sendable {
        var size: Int
        var red: UInt8
        var green: UInt8
        var blue: UInt8
    }


    /// The largest edge length served.
    static let maxSize = 2000
    /// The most images kept by default: the 5000-record demo's distinct 600 px images fit.
    static let defaultMaxCachedImages = 8192
    /// The most bytes of images kept by default.
    static let defaultMaxCachedBytes = 64 << 20

    private let encode: @Sendable (Int, UInt8, UInt8, UInt8) -> Data
    private let cache: Locked<ImageCache<Key>>

    /// Creates the routes; `encode(size, red, green, blue)` must return a `size` x `size` PNG.
    package init(encode: @escaping @Sendable (Int, UInt8, UInt8, UInt8) -> Data) {
        self.init(maxCachedImages: Self.defaultMaxCachedImages, maxCachedBytes: Self.defaultMaxCachedBytes, encode: encode)
    }

    /// As the public initializer, with a cache of another size.
    init(maxCachedImages: Int, maxCachedBytes: Int, encode: @escaping @Sendable (Int, UInt8, UInt8, UInt8) -> Data) {
        self.encode = encode
        cache = Locked(ImageCache(maxCount: maxCachedImages, maxBytes: maxCachedBytes))
    }

    /// Answers one request: a PNG for a valid `/<size>/<colour>`, 404 text otherwise.
    package func respond(to request: HTTPRequest) -> HTTPResponse {
        guard request.method == "GET" || request.method == "HEAD" else {
            return .text(404, "not found: only GET /<size>/<colour> is served\n")
        }
        guard let key = Self.parse(path: request.pathWithoutQuery) else {
            return .text(404, "not found: expected /<size 1-\(Self.maxSize)>/<colour of 3-6 hex digits>\n")
        }
        return .png(image(for: key))
    }

    /// The number of images kept now.
    var cachedImageCount: Int { cache.withLock { $0.count } }

    /// The bytes of the images kept now.
    var cachedBytes: Int { cache.withLock { $0.bytes } }

    private func image(for key: Key) -> Data {
        if let cached = cache.withLock({ $0.value(for: key) }) { return cached }
        // Encode outside the lock; if two requests race, the first stored copy wins.
        let made = encode(key.size, key.red, key.green, key.blue)
        return cache.withLock { $0.insert(made, for: key) }
    }

    /// Parses `/<size>/<colour>` (no query string); nil when it is not one.
    static func parse(path: String) -> Key? {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].isEmpty else { return nil }
        guard let size = parseSize(parts[1]), let rgb = parseColour(parts[2]) else { return nil }
        return Key(size: size, red: rgb.0, green: rgb.1, blue: rgb.2)
    }

    static func parseSize(_ text: Substring) -> Int? {
        guard (1...4).contains(text.count), text.allSatisfy({ $0.isASCII && $0.isNumber }),
            let size = Int(text), (1...maxSize).contains(size)
        else { return nil }
        return size
    }

    static func parseColour(_ text: Substring) -> (UInt8, UInt8, UInt8)? {
        guard (3...6).contains(text.count), text.allSatisfy({ $0.isHexDigit && $0.isASCII }) else { return nil }
        let digits: String
        if text.count == 3 {
            digits = text.map { "\($0)\($0)" }.joined()
        } else {
            digits = String(repeating: "0", count: 6 - text.count) + text
        }
        guard let value = UInt32(digits, radix: 16) else { return nil }
        return (UInt8(value >> 16 & 0xff), UInt8(value >> 8 & 0xff), UInt8(value & 0xff))
    }
}
