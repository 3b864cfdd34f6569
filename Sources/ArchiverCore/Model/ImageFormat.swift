import Foundation

/// An image format the archiver can check and keep, decided by a body's first bytes only: never
/// by the URL, the file name or the `Content-Type` a server sends.
public enum ImageFormat: String, Sendable, CaseIterable, Comparable, Codable {
    case png, jpeg, webp, gif

    /// The extension of the format's files in `images/`: `7.png`, `7.jpg`, `7.webp`, `7.gif`.
    public var fileExtension: String {
        switch self {
        case .png: "png"
        case .jpeg: "jpg"
        case .webp: "webp"
        case .gif: "gif"
        }
    }

    /// The format's usual name in messages: `PNG`, `JPEG`, `WebP`, `GIF`.
    public var displayName: String {
        switch self {
        case .png: "PNG"
        case .jpeg: "JPEG"
        case .webp: "WebP"
        case .gif: "GIF"
        }
    }

    /// The format whose files end in `.ext` (`jpg` and `jpeg` both name JPEG); nil for others.
    init?(fileExtension ext: some StringProtocol) {
        switch ext {
        case "png": self = .png
        case "jpg", "jpeg": self = .jpeg
        case "webp": self = .webp
        case "gif": self = .gif
        default: return nil
        }
    }

    /// The format of a body from its signature (the first 12 bytes are enough); nil when it has
    /// none of them.
    public static func sniff(_ bytes: UnsafeRawBufferPointer) -> ImageFormat? {
        func starts(_ prefix: [UInt8], at offset: Int = 0) -> Bool {
            bytes.count >= offset + prefix.count && zip(bytes[offset...], prefix).allSatisfy { $0 == $1 }
        }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if starts([0xFF, 0xD8, 0xFF]) { return .jpeg }
        if starts(Array("RIFF".utf8)), starts(Array("WEBP".utf8), at: 8) { return .webp }
        if starts(Array("GIF87a".utf8)) || starts(Array("GIF89a".utf8)) { return .gif }
        return nil
    }

    /// The format of `data` from its signature.
    public static func sniff(_ data: Data) -> ImageFormat? {
        data.prefix(12).withUnsafeBytes { sniff($0) }
    }

    /// The format of a file name's extension in `images/` (`7.jpg`); nil for any other name.
    static func of(fileName name: some StringProtocol) -> ImageFormat? {
        guard let dot = name.lastIndex(of: ".") else { return nil }
        return ImageFormat(fileExtension: name[name.index(after: dot)...])
    }

    public static func < (lhs: ImageFormat, rhs: ImageFormat) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }

    /// What a body that is no image looks like, for the `not-image` message: `empty body`,
    /// `body looks like HTML or XML (120 bytes)`, `body looks like JSON`, or what it starts with.
    static func describeNonImage(_ data: Data) -> String {
        guard !data.isEmpty else { return "empty body" }
        let head = data.prefix(64)
        let skipped = head.drop { [0x20, 0x09, 0x0D, 0x0A, 0xEF, 0xBB, 0xBF].contains($0) }
        let size = "\(data.count) bytes"
        switch skipped.first {
        case UInt8(ascii: "<"): return "body looks like HTML or XML (\(size))"
        case UInt8(ascii: "{"), UInt8(ascii: "["): return "body looks like JSON (\(size))"
        default: break
        }
        if data.count >= 12, data.dropFirst(4).starts(with: "ftyp".utf8) {
            let brand = String(decoding: data.dropFirst(8).prefix(4), as: UTF8.self).filter { $0.isLetter || $0.isNumber }
            return "body is an ISO media file of brand '\(brand)', such as AVIF or HEIF (\(size))"
        }
        let known: [(prefix: [UInt8], name: String)] = [
            (Array("%PDF".utf8), "a PDF"), (Array("BM".utf8), "a BMP"), ([0x49, 0x49, 0x2A, 0x00], "a TIFF"),
            ([0x4D, 0x4D, 0x00, 0x2A], "a TIFF"), (Array("PK".utf8), "a ZIP archive"), ([0x1F, 0x8B], "gzip data"),
        ]
        if let match = known.first(where: { data.starts(with: $0.prefix) }) {
            return "body is \(match.name) (\(size))"
        }
        return "no image signature (\(size))"
    }
}

/// The formats `--accept` lets through; every other image fails as `unaccepted-format`.
public struct AcceptedFormats: Sendable, Equatable {
    public var formats: Set<ImageFormat>

    /// Every format: `png,jpeg,webp,gif`.
    public static let all = AcceptedFormats(formats: Set(ImageFormat.allCases))

    public init(formats: Set<ImageFormat>) {
        self.formats = formats
    }

    /// Parses `png,jpeg` (`jpg` names JPEG too); nil when a name is unknown or the list is empty.
    package init?(parsing list: String) {
        var formats = Set<ImageFormat>()
        for name in list.split(separator: ",", omittingEmptySubsequences: false) {
            let trimmed = name.trimmingCharacters(in: .whitespaces).lowercased()
            guard let format = ImageFormat(rawValue: trimmed) ?? ImageFormat(fileExtension: trimmed) else { return nil }
            formats.insert(format)
        }
        guard !formats.isEmpty else { return nil }
        self.formats = formats
    }

    /// The list as `--accept` spells it, in a fixed order.
    package var list: String {
        formats.sorted().map(\.rawValue).joined(separator: ",")
    }

    public func contains(_ format: ImageFormat) -> Bool {
        formats.contains(format)
    }
}
