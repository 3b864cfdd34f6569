#if canImport(Glibc)
import Glibc
#endif

/// A fast path for the catalog's one shape, a JSON array of flat records, over raw bytes: one
/// record object at a time (`CatalogScanner` walks the array around them).
///
/// JSONDecoder took about 30 ms of a 0.4 s run for the 5000-record catalog. This parser reads
/// the common case in a few; on anything it does not expect (a syntax error, a missing field, a
/// wrong type, a number that is not a plain integer) it returns nil, and `Catalog` decodes with
/// JSONDecoder instead, which names the problem and where it is.
struct CatalogParser {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0

    /// Which of a record's strings to make: each is checked either way, but one not asked for
    /// comes back empty. The scan needs none of them, planning only the image URL.
    struct Fields: OptionSet {
        let rawValue: UInt8
        static let title = Fields(rawValue: 1)
        static let url = Fields(rawValue: 2)
        static let thumbnailUrl = Fields(rawValue: 4)
        static let all: Fields = [.title, .url, .thumbnailUrl]

        /// The field that holds the image URL.
        static func image(_ field: ImageField) -> Fields {
            switch field {
            case .url: .url
            case .thumbnailUrl: .thumbnailUrl
            }
        }
    }

    /// The record object that starts at `start` and the index just past its closing brace; nil
    /// for anything unexpected, including an object cut off by the end of `bytes`.
    static func record(
        in bytes: UnsafeBufferPointer<UInt8>, at start: Int, fields: Fields = .all
    ) -> (record: CatalogRecord, end: Int)? {
        var parser = CatalogParser(bytes: bytes)
        parser.index = start
        guard let record = parser.object(fields), parser.index <= bytes.count else { return nil }
        return (record, parser.index)
    }

    private init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    private enum Key {
        case albumId, id, title, url, thumbnailUrl, other
    }

    private mutating func object(_ fields: Fields) -> CatalogRecord? {
        var albumId: Int?, id: Int?, title: String?, url: String?, thumbnailUrl: String?
        guard consume(0x7B) else { return nil }  // {
        if !consume(0x7D) {
            repeat {
                guard let key = key(), consume(0x3A) else { return nil }
                skipSpace()
                switch key {
                case .albumId: albumId = integer()
                case .id: id = integer()
                case .title: title = string(making: fields.contains(.title))
                case .url: url = string(making: fields.contains(.url))
                case .thumbnailUrl: thumbnailUrl = string(making: fields.contains(.thumbnailUrl))
                case .other: guard skipValue() else { return nil }
                }
                if index > bytes.count { return nil }
            } while consume(0x2C)
            guard consume(0x7D) else { return nil }
        }
        guard let albumId, let id, let title, let url, let thumbnailUrl else { return nil }
        return CatalogRecord(albumId: albumId, id: id, title: title, url: url, thumbnailUrl: thumbnailUrl)
    }

    private mutating func skipSpace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    /// Skips white space, then takes `byte` if it is next.
    private mutating func consume(_ byte: UInt8) -> Bool {
        skipSpace()
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    /// A key, matched as bytes (keys are always plain: one with an escape goes to JSONDecoder).
    private mutating func key() -> Key? {
        guard let (start, end) = plainString() else { return nil }
        func matches(_ name: StaticString) -> Bool {
            end - start == name.utf8CodeUnitCount && memcmp(bytes.baseAddress! + start, name.utf8Start, end - start) == 0
        }
        if matches("id") { return .id }
        if matches("albumId") { return .albumId }
        if matches("title") { return .title }
        if matches("url") { return .url }
        if matches("thumbnailUrl") { return .thumbnailUrl }
        return .other
    }

    /// A plain integer (no fraction or exponent: those go to JSONDecoder).
    private mutating func integer() -> Int? {
        let start = index
        if index < bytes.count, bytes[index] == 0x2D { index += 1 }
        var value = 0
        var digits = 0
        while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 {
            let (product, overflow) = value.multipliedReportingOverflow(by: 10)
            guard !overflow, digits < 18 else { return nil }
            value = product + Int(bytes[index] - 0x30)
            digits += 1
            index += 1
        }
        guard digits > 0, index >= bytes.count || ![0x2E, 0x65, 0x45].contains(bytes[index]) else {
            index = bytes.count + 1  // a fraction or exponent: let JSONDecoder judge
            return nil
        }
        return bytes[start] == 0x2D ? -value : value
    }

    /// The bounds of a string without escapes or control characters, taken; nil (and nothing
    /// taken) for any other string.
    private mutating func plainString() -> (start: Int, end: Int)? {
        skipSpace()
        guard index < bytes.count, bytes[index] == 0x22 else { return nil }
        let start = index + 1
        var end = start
        while end < bytes.count, bytes[end] != 0x22 {
            if bytes[end] == 0x5C || bytes[end] < 0x20 { return nil }
            end += 1
        }
        guard end < bytes.count else { return nil }
        index = end + 1
        return (start, end)
    }

    /// A string value, with escapes decoded; with `making` false, checked the same way but
    /// returned empty.
    private mutating func string(making: Bool = true) -> String? {
        let save = index
        if let (start, end) = plainString() {
            return making ? String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self) : ""
        }
        index = save
        skipSpace()
        guard index < bytes.count, bytes[index] == 0x22 else { return fail() }
        index += 1
        var scalars = String.UnicodeScalarView()
        var utf8: [UInt8] = []
        func flush() {
            scalars.append(contentsOf: String(decoding: utf8, as: UTF8.self).unicodeScalars)
            utf8.removeAll(keepingCapacity: true)
        }
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case 0x22:
                flush()
                return making ? String(scalars) : ""
            case 0x5C:
                guard index < bytes.count else { return fail() }
                let escape = bytes[index]
                index += 1
                switch escape {
                case 0x22, 0x5C, 0x2F: utf8.append(escape)
                case 0x62: utf8.append(0x08)
                case 0x66: utf8.append(0x0C)
                case 0x6E: utf8.append(0x0A)
                case 0x72: utf8.append(0x0D)
                case 0x74: utf8.append(0x09)
                case 0x75:
                    guard var code = hex4() else { return fail() }
                    if (0xD800..<0xDC00).contains(code) {
                        guard index + 1 < bytes.count, bytes[index] == 0x5C, bytes[index + 1] == 0x75 else { return fail() }
                        index += 2
                        guard let low = hex4(), (0xDC00..<0xE000).contains(low) else { return fail() }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let scalar = Unicode.Scalar(code) else { return fail() }
                    flush()
                    scalars.append(scalar)
                default: return fail()
                }
            case 0..<0x20: return fail()
            default: utf8.append(byte)
            }
        }
        return fail()
    }

    private mutating func hex4() -> UInt32? {
        guard index + 4 <= bytes.count else { return nil }
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let digit = bytes[index].hexDigitValue else { return nil }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    /// How deep a skipped value may nest: deeper goes to JSONDecoder, which refuses over 512 levels.
    static let maxSkipDepth = 500

    /// Skips a value of any type (for fields the catalog does not use). Iterative, with the open
    /// arrays and objects on a stack of closing bytes, so no nesting can exhaust the thread's stack.
    private mutating func skipValue() -> Bool {
        var closers: [UInt8] = []
        while true {
            skipSpace()
            guard index < bytes.count else { return false }
            switch bytes[index] {
            case 0x7B, 0x5B:
                let close: UInt8 = bytes[index] == 0x7B ? 0x7D : 0x5D
                index += 1
                if !consume(close) {
                    guard closers.count < Self.maxSkipDepth, member(closedBy: close) else { return false }
                    closers.append(close)
                    continue
                }
            case 0x22:
                guard string(making: false) != nil else { return false }
            default:
                let start = index
                while index < bytes.count, !([0x2C, 0x7D, 0x5D, 0x20, 0x0A, 0x0D, 0x09] as [UInt8]).contains(bytes[index]) {
                    index += 1
                }
                let word = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
                guard ["true", "false", "null"].contains(word) || Double(word) != nil else { return false }
            }
            // A value ended: close every container it ends, then start the next member, if any.
            while let close = closers.last, !consume(0x2C) {
                guard consume(close) else { return false }
                closers.removeLast()
            }
            guard let close = closers.last else { return true }
            guard member(closedBy: close) else { return false }
        }
    }

    /// Inside an object (`close` is `}`), takes a member's key and colon; inside an array, nothing.
    private mutating func member(closedBy close: UInt8) -> Bool {
        close == 0x5D || (string(making: false) != nil && consume(0x3A))
    }

    private mutating func fail<T>() -> T? {
        index = bytes.count + 1
        return nil
    }
}
