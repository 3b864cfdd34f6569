/// A record's id (`--id`): an integer, or a string.
///
/// A string that is a canonical decimal integer (`"7"`, not `"007"`, `"+7"` or `"-0"`) is that
/// integer, so a record gives the same id, file name and manifest item whether its id came as a
/// JSON number, a JSON string or a CSV cell. Strings are compared, ordered and hashed by their
/// UTF-8 bytes, never as Characters: two spellings Unicode calls equal are two ids with two
/// files (`RecordKey` names files by bytes).
///
/// Ids are ordered integers first, numerically, then strings by their UTF-8 bytes: the order of
/// the manifest, the gallery and the compacted journal.
public struct RecordID: Sendable, Hashable, Comparable, CustomStringConvertible, ExpressibleByIntegerLiteral,
    ExpressibleByStringLiteral
{
    enum Value: Sendable {
        case integer(Int)
        case string(String)
    }

    let value: Value

    init(_ integer: Int) {
        value = .integer(integer)
    }

    /// The id a string gives: the integer it spells canonically, otherwise the string.
    init(_ text: String) {
        value = Self.canonicalInteger(text).map(Value.integer) ?? .string(text)
    }

    public init(integerLiteral value: Int) {
        self.init(value)
    }

    public init(stringLiteral value: String) {
        self.init(value)
    }

    /// The integer, for an integer id.
    var integer: Int? {
        if case .integer(let value) = value { return value }
        return nil
    }

    /// The string, for a string id.
    var string: String? {
        if case .string(let text) = value { return text }
        return nil
    }

    /// The id as text: an integer in decimal.
    var text: String {
        switch value {
        case .integer(let value): String(value)
        case .string(let text): text
        }
    }

    /// The name of the record's file in `images/` without `.png` (`RecordKey`); nil when the id
    /// cannot be made a safe name (empty, or over `RecordKey.maxIDBytes`).
    var stem: String? {
        switch value {
        case .integer(let value): String(value)
        case .string(let text): RecordKey.stem(for: text)
        }
    }

    /// The id as a message shows it, on one line: an integer in decimal, a string as a JSON
    /// string (quoted, control characters escaped), cut after 60 bytes with `...` after it.
    public var description: String {
        switch value {
        case .integer(let value):
            return String(value)
        case .string(let text):
            var out: [UInt8] = []
            JSONText.string(text.prefix(utf8Bytes: 60), into: &out)
            if text.utf8.count > 60 { out += Array("...".utf8) }
            return String(decoding: out, as: UTF8.self)
        }
    }

    public static func == (a: RecordID, b: RecordID) -> Bool {
        switch (a.value, b.value) {
        case (.integer(let x), .integer(let y)): x == y
        case (.string(let x), .string(let y)): x.hasSameBytes(as: y)
        default: false
        }
    }

    public static func < (a: RecordID, b: RecordID) -> Bool {
        switch (a.value, b.value) {
        case (.integer(let x), .integer(let y)): x < y
        case (.integer, .string): true
        case (.string, .integer): false
        case (.string(let x), .string(let y)): x.utf8.lexicographicallyPrecedes(y.utf8)
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch value {
        case .integer(let value):
            hasher.combine(0 as UInt8)
            hasher.combine(value)
        case .string(var text):
            hasher.combine(1 as UInt8)
            text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
            hasher.combine(text.utf8.count)
        }
    }

    /// The integer `text` spells in canonical decimal: digits with no leading zero, `-` before
    /// a non-zero magnitude, in Int's range; nil for anything else.
    static func canonicalInteger(_ text: String) -> Int? {
        var text = text
        return text.withUTF8 { canonicalInteger($0) }
    }

    static func canonicalInteger(_ utf8: UnsafeBufferPointer<UInt8>) -> Int? {
        let negative = utf8.first == 0x2D
        let digits = UnsafeBufferPointer(rebasing: utf8[(negative ? 1 : 0)...])
        guard let first = digits.first, (0x30...0x39).contains(first), first != 0x30 || digits.count == 1,
            !(negative && first == 0x30), digits.count <= 19
        else { return nil }
        var magnitude: UInt64 = 0
        for byte in digits {
            guard (0x30...0x39).contains(byte) else { return nil }
            magnitude = magnitude * 10 + UInt64(byte - 0x30)  // 19 digits cannot overflow UInt64
        }
        if negative { return magnitude <= UInt64(Int.max) + 1 ? Int(truncatingIfNeeded: 0 &- magnitude) : nil }
        return magnitude <= UInt64(Int.max) ? Int(magnitude) : nil
    }
}

extension RecordID: Codable {
    /// A JSON number (an integer) or a JSON string, as the manifest writes it.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let integer = try? container.decode(Int.self) {
            self.init(integer)
        } else {
            self.init(try container.decode(String.self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch value {
        case .integer(let value): try container.encode(value)
        case .string(let text): try container.encode(text)
        }
    }
}
