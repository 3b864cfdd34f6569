#if canImport(Glibc)
import Glibc
#endif

/// A strict JSON parser for one record object over raw bytes (`CatalogScanner` walks the
/// array or lines around the records). It rejects what JSON rejects (trailing commas, `007`,
/// `NaN`, control characters in strings, bad escapes, lone surrogates) and says where, by byte
/// offset; it never recurses, and values it does not use are skipped to a depth of 500.
///
/// JSONDecoder took about 30 ms of a 0.4 s run for the 5000-record catalog; this reads it in a few.
struct CatalogParser {
    /// Why parsing stopped: the text is wrong at `offset`, or it ended before the value did.
    struct Failure: Error {
        var offset: Int
        var message: String
        /// The bytes ran out: with more of the text, parsing might succeed.
        var needsMore: Bool
    }

    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0
    private let schema: CatalogSchema

    /// Which of a record's strings to make: each is checked either way, but one not asked for
    /// comes back empty. The scan needs none of them, planning only the image URL.
    struct Fields: OptionSet {
        let rawValue: UInt8
        static let title = Fields(rawValue: 1)
        static let url = Fields(rawValue: 2)
        static let thumbnailUrl = Fields(rawValue: 4)
        /// The expected SHA-256, when the schema names its key.
        static let sha256 = Fields(rawValue: 8)
        static let all: Fields = [.title, .url, .thumbnailUrl]

        /// The field that holds the image URL.
        static func image(_ field: ImageField) -> Fields {
            field == .thumbnailUrl ? .thumbnailUrl : .url
        }
    }

    init(bytes: UnsafeBufferPointer<UInt8>, at index: Int = 0, schema: CatalogSchema = .standard) {
        self.bytes = bytes
        self.index = index
        self.schema = schema
    }

    /// The record object that starts at `start` and the index just past its closing brace.
    static func record(
        in bytes: UnsafeBufferPointer<UInt8>, at start: Int, fields: Fields = .all, schema: CatalogSchema = .standard
    ) throws(Failure) -> (record: CatalogRecord, end: Int) {
        var parser = CatalogParser(bytes: bytes, at: start, schema: schema)
        let record = try parser.object(fields)
        return (record, parser.index)
    }

    /// The record, or nil for any failure (reading back a record that parsed at load time).
    static func recordIfValid(
        in bytes: UnsafeBufferPointer<UInt8>, at start: Int, fields: Fields, schema: CatalogSchema
    ) -> CatalogRecord? {
        try? record(in: bytes, at: start, fields: fields, schema: schema).record
    }

    private enum Key {
        case id, group, title, url, thumbnailUrl, sha256, other

        var bit: UInt8 {
            switch self {
            case .id: 1
            case .group: 2
            case .title: 4
            case .url: 8
            case .thumbnailUrl: 16
            case .sha256: 32
            case .other: 64
            }
        }
    }

    mutating func object(_ fields: Fields) throws(Failure) -> CatalogRecord {
        let start = index
        var group: Int?, id: RecordID?, title: String?, url: String?, thumbnailUrl: String?, sha256: String?
        var urlProblem: String?, thumbnailProblem: String?
        // Keys seen, one bit each: a Set hashed every key of every record (records are read
        // several times a run).
        var seen: UInt8 = 0
        skipSpace()
        guard try peek() == 0x7B else { throw invalid("a record is not a JSON object") }
        index += 1
        skipSpace()
        if try peek() == 0x7D {
            index += 1
        } else {
            while true {
                skipSpace()
                let keyStart = index
                let key = try key()
                // A key the run reads given twice is refused, as a CSV header naming it twice is:
                // which of the two counts would otherwise be the parser's choice.
                if key != .other, seen & key.bit != 0 {
                    throw Failure(offset: keyStart, message: "the record has the key \(keyText(key)) twice", needsMore: false)
                }
                seen |= key.bit
                skipSpace()
                guard try peek() == 0x3A else { throw invalid("expected ':' after a key") }
                index += 1
                skipSpace()
                switch key {
                case .id: id = try idValue()
                case .group: group = try groupValue()
                case .title: title = try optionalString(named: "title", making: fields.contains(.title))
                case .url: (url, urlProblem) = try urlValue(fields.contains(.url))
                case .thumbnailUrl: (thumbnailUrl, thumbnailProblem) = try urlValue(fields.contains(.thumbnailUrl))
                case .sha256: sha256 = try optionalString(named: schema.sha256Name ?? "sha256", making: fields.contains(.sha256))
                case .other: try skipValue()
                }
                skipSpace()
                let next = try peek()
                index += 1
                if next == 0x2C { continue }
                guard next == 0x7D else {
                    index -= 1
                    throw invalid("expected ',' or '}' in a record")
                }
                break
            }
        }
        guard let id else {
            throw Failure(offset: start, message: "the record has no \"\(schema.idName)\"", needsMore: false)
        }
        var record = CatalogRecord(albumId: group ?? 0, id: id, title: title ?? "", url: url ?? "", thumbnailUrl: thumbnailUrl ?? "")
        record.urlProblem = fields.contains(.url) ? urlProblem : thumbnailProblem
        record.sha256 = fields.contains(.sha256) ? sha256 : nil
        schema.redacting(&record)
        return record
    }

    /// A key the run reads, quoted, for messages.
    private func keyText(_ key: Key) -> String {
        let name: [UInt8] =
            switch key {
            case .id: schema.id
            case .url: schema.url
            case .thumbnailUrl: schema.thumbnailUrl
            case .title: schema.title
            case .sha256: schema.sha256 ?? []
            case .group, .other: schema.group
            }
        return "\"" + String(decoding: name, as: UTF8.self) + "\""
    }

    private func invalid(_ message: String) -> Failure {
        Failure(offset: index, message: message, needsMore: false)
    }

    private func peek() throws(Failure) -> UInt8 {
        guard index < bytes.count else { throw Failure(offset: index, message: "the text ends inside a record", needsMore: true) }
        return bytes[index]
    }

    mutating func skipSpace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    private mutating func key() throws(Failure) -> Key {
        guard try peek() == 0x22 else { throw invalid("expected a key in double quotes") }
        let save = index
        if let (start, end) = try plainString() {
            return match(UnsafeBufferPointer(rebasing: bytes[start..<end]))
        }
        index = save
        let text = try string(named: "key", making: true)
        var copy = text
        return copy.withUTF8 { match($0) }
    }

    private func match(_ key: UnsafeBufferPointer<UInt8>) -> Key {
        func equal(_ name: [UInt8]) -> Bool {
            name.count == key.count && name.withUnsafeBufferPointer { memcmp($0.baseAddress!, key.baseAddress!, key.count) == 0 }
        }
        if key.isEmpty { return .other }
        if equal(schema.id) { return .id }
        if equal(schema.url) { return .url }
        if equal(schema.thumbnailUrl) { return .thumbnailUrl }
        if equal(schema.title) { return .title }
        if equal(schema.group) { return .group }
        if let sha256 = schema.sha256, equal(sha256) { return .sha256 }
        return .other
    }

    /// An id: an integer, or a string (one that spells an integer canonically is that integer).
    /// A string id must be valid UTF-8: decoding would put U+FFFD for each bad byte, and two
    /// distinct ids could then collide as duplicates (or be renamed).
    private mutating func idValue() throws(Failure) -> RecordID {
        if try peek() == 0x22 {
            let start = index + 1
            let text = try string(named: schema.idName, making: true)
            if let bad = Self.invalidUTF8(UnsafeBufferPointer(rebasing: bytes[start..<(index - 1)])) {
                throw Failure(offset: start + bad, message: Self.notUTF8(schema.idName), needsMore: false)
            }
            return RecordID(text)
        }
        return RecordID(try integer(schema.idName, expected: "an integer or a string"))
    }

    /// The offset of the first byte of `bytes` that is not part of valid UTF-8; nil when all are.
    static func invalidUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        var offset = 0
        var iterator = bytes.makeIterator()
        var parser = Unicode.UTF8.ForwardParser()
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let scalar): offset += scalar.count
            case .error: return offset
            case .emptyInput: return nil
            }
        }
    }

    /// The message for an id that is not UTF-8.
    static func notUTF8(_ name: String) -> String {
        "\"\(name)\" is not valid UTF-8 (ids are compared as bytes; fix the catalog's encoding)"
    }

    /// An integer: a JSON number with no fraction or exponent, in Int's range.
    private mutating func integer(_ name: String, expected: String = "an integer") throws(Failure) -> Int {
        let start = index
        let byte = try peek()
        guard byte == 0x2D || (0x30...0x39).contains(byte) else {
            throw Failure(offset: start, message: "\"\(name)\" is not \(expected)", needsMore: false)
        }
        let (isInteger, end) = try number()
        guard isInteger else {
            throw Failure(offset: start, message: "\"\(name)\" is not \(expected)", needsMore: false)
        }
        // Digits accumulated negatively, so Int.min fits; no String is made.
        let negative = bytes[start] == 0x2D
        var value = 0
        for index in (negative ? start + 1 : start)..<end {
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (next, overflow2) = times10.subtractingReportingOverflow(Int(bytes[index] &- 0x30))
            guard !overflow1, !overflow2 else {
                throw Failure(offset: start, message: "\"\(name)\" is out of range", needsMore: false)
            }
            value = next
        }
        if negative { return value }
        guard value != Int.min else { throw Failure(offset: start, message: "\"\(name)\" is out of range", needsMore: false) }
        return -value
    }

    /// An optional string (the title, `--sha256`'s digest): null is none, as databases export an
    /// empty one, and as the group and the URL take it.
    private mutating func optionalString(named name: String, making: Bool) throws(Failure) -> String? {
        if try peek() == 0x6E {
            try literal("null")
            return nil
        }
        return try string(named: name, making: making)
    }

    /// The group (`--group`): an integer, or a string holding one (as CSV gives it); null is none.
    private mutating func groupValue() throws(Failure) -> Int? {
        let start = index
        switch try peek() {
        case 0x6E:
            try literal("null")
            return nil
        case 0x22:
            let text = try string(named: schema.groupName, making: true)
            guard let value = Int(text) else {
                throw Failure(offset: start, message: "\"\(schema.groupName)\" is not an integer (the gallery groups by integer)", needsMore: false)
            }
            return value
        default:
            return try integer(schema.groupName)
        }
    }

    /// A URL string (null or absent is empty: the record fails alone); one over 8 KiB or not
    /// UTF-8 comes back empty with the reason.
    private mutating func urlValue(_ making: Bool) throws(Failure) -> (String, String?) {
        if try peek() == 0x6E {
            try literal("null")
            return ("", nil)
        }
        let start = index
        let value = try string(named: "url", making: making)
        guard making else { return ("", nil) }
        if index - start - 2 > CatalogSchema.maxURLBytes, value.utf8.count > CatalogSchema.maxURLBytes {
            return ("", "a URL of \(value.utf8.count) bytes, over the limit of \(CatalogSchema.maxURLBytes)")
        }
        // String(decoding:) puts U+FFFD where the bytes are not UTF-8.
        if value.containsUTF8Byte(where: { $0 >= 0x80 }), value.unicodeScalars.contains("\u{FFFD}") {
            return ("", "a URL that is not valid UTF-8")
        }
        return (value, nil)
    }

    private mutating func literal(_ word: StaticString) throws(Failure) {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count else {
            if memcmp(bytes.baseAddress! + index, word.utf8Start, bytes.count - index) == 0 {
                throw Failure(offset: index, message: "the text ends inside a record", needsMore: true)
            }
            throw invalid("not a JSON value")
        }
        guard memcmp(bytes.baseAddress! + index, word.utf8Start, count) == 0 else { throw invalid("not a JSON value") }
        index += count
    }

    /// A JSON number, strictly (`-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?`); whether it is an integer.
    private mutating func number() throws(Failure) -> (isInteger: Bool, end: Int) {
        func digits(_ parser: inout CatalogParser) throws(Failure) -> Int {
            var count = 0
            while true {
                let byte = try parser.peekOrEnd()
                guard let byte, (0x30...0x39).contains(byte) else { return count }
                parser.index += 1
                count += 1
            }
        }
        var isInteger = true
        if try peek() == 0x2D { index += 1 }
        let first = try peek()
        guard (0x30...0x39).contains(first) else { throw invalid("not a JSON number") }
        if first == 0x30 {
            index += 1
            if let next = try peekOrEnd(), (0x30...0x39).contains(next) { throw invalid("a number with a leading zero") }
        } else {
            _ = try digits(&self)
        }
        if try peekOrEnd() == 0x2E {
            index += 1
            isInteger = false
            guard try digits(&self) > 0 else { throw invalid("a number with no digits after '.'") }
        }
        if let e = try peekOrEnd(), e == 0x65 || e == 0x45 {
            index += 1
            isInteger = false
            if let sign = try peekOrEnd(), sign == 0x2B || sign == 0x2D { index += 1 }
            guard try digits(&self) > 0 else { throw invalid("a number with no digits in its exponent") }
        }
        return (isInteger, index)
    }

    /// The next byte; at the end of the bytes, more text is needed to know where a number ends.
    private func peekOrEnd() throws(Failure) -> UInt8? {
        guard index < bytes.count else { throw Failure(offset: index, message: "the text ends inside a record", needsMore: true) }
        return bytes[index]
    }

    /// The bounds of a string without escapes or control characters, taken; nil (and nothing
    /// taken) for any other string.
    private mutating func plainString() throws(Failure) -> (start: Int, end: Int)? {
        let start = index + 1
        var end = Self.plainRun(bytes, from: start)
        while end < bytes.count {
            let byte = bytes[end]
            if byte == 0x22 {
                index = end + 1
                return (start, end)
            }
            if byte == 0x5C || byte < 0x20 { return nil }
            end += 1
        }
        throw Failure(offset: bytes.count, message: "the text ends inside a string", needsMore: true)
    }

    /// Where the first quote, backslash or control character at or after `from` is (or, short
    /// of that, a place under 8 bytes before the end): eight bytes at a time, as a catalog is
    /// mostly string bytes and each record is read more than once a run. In a word, a byte's
    /// flag can be set wrongly only above a byte whose flag is set rightly (a borrow carries
    /// upwards), so the lowest flag is always a true one.
    static func plainRun(_ bytes: UnsafeBufferPointer<UInt8>, from: Int) -> Int {
        guard let base = bytes.baseAddress else { return from }
        let ones: UInt64 = 0x0101_0101_0101_0101
        var at = from
        while at + 8 <= bytes.count {
            let word = UInt64(littleEndian: UnsafeRawPointer(base + at).loadUnaligned(as: UInt64.self))
            let quote = word ^ (0x22 &* ones), backslash = word ^ (0x5C &* ones)
            let flags = ((quote &- ones) & ~quote | (backslash &- ones) & ~backslash | (word &- 0x20 &* ones) & ~word) & (0x80 &* ones)
            if flags != 0 { return at + flags.trailingZeroBitCount / 8 }
            at += 8
        }
        return at
    }

    /// A string value, with escapes decoded; with `making` false, checked the same way but
    /// returned empty.
    private mutating func string(named name: String, making: Bool) throws(Failure) -> String {
        guard try peek() == 0x22 else { throw invalid("\"\(name)\" is not a string") }
        let save = index
        if let (start, end) = try plainString() {
            return making ? String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self) : ""
        }
        index = save + 1
        var utf8: [UInt8] = []
        while true {
            let byte = try peek()
            index += 1
            switch byte {
            case 0x22:
                return making ? String(decoding: utf8, as: UTF8.self) : ""
            case 0x5C:
                let escape = try peek()
                index += 1
                switch escape {
                case 0x22, 0x5C, 0x2F: utf8.append(escape)
                case 0x62: utf8.append(0x08)
                case 0x66: utf8.append(0x0C)
                case 0x6E: utf8.append(0x0A)
                case 0x72: utf8.append(0x0D)
                case 0x74: utf8.append(0x09)
                case 0x75:
                    var code = try hex4()
                    if (0xD800..<0xDC00).contains(code) {
                        guard try peek() == 0x5C else { throw invalid("a lone surrogate in a \\u escape") }
                        index += 1
                        guard try peek() == 0x75 else { throw invalid("a lone surrogate in a \\u escape") }
                        index += 1
                        let low = try hex4()
                        guard (0xDC00..<0xE000).contains(low) else { throw invalid("a lone surrogate in a \\u escape") }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let scalar = Unicode.Scalar(code) else { throw invalid("a lone surrogate in a \\u escape") }
                    utf8.append(contentsOf: Array(String(Character(scalar)).utf8))
                default:
                    index -= 1
                    throw invalid("an invalid escape in a string")
                }
            case 0..<0x20:
                index -= 1
                throw invalid("a control character in a string")
            default: utf8.append(byte)
            }
        }
    }

    private mutating func hex4() throws(Failure) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let digit = try peek().hexDigitValue else { throw invalid("an invalid \\u escape") }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    /// How deep a skipped value may nest (JSONDecoder refuses over 512 levels).
    static let maxSkipDepth = 500

    /// Skips a value of any type (for fields the catalog does not use). Iterative, with the open
    /// arrays and objects on a stack of closing bytes, so no nesting can exhaust the thread's stack.
    mutating func skipValue() throws(Failure) {
        var closers: [UInt8] = []
        while true {
            skipSpace()
            switch try peek() {
            case 0x7B, 0x5B:
                let close: UInt8 = bytes[index] == 0x7B ? 0x7D : 0x5D
                index += 1
                skipSpace()
                if try peek() == close {
                    index += 1
                } else {
                    guard closers.count < Self.maxSkipDepth else { throw invalid("values nested more than \(Self.maxSkipDepth) deep") }
                    closers.append(close)
                    try member(closedBy: close)
                    continue
                }
            case 0x22: _ = try string(named: "value", making: false)
            case 0x74: try literal("true")
            case 0x66: try literal("false")
            case 0x6E: try literal("null")
            default: _ = try number()
            }
            // A value ended: close every container it ends, then start the next member, if any.
            while let close = closers.last {
                skipSpace()
                let next = try peek()
                if next == 0x2C {
                    index += 1
                    try member(closedBy: close)
                    break
                }
                guard next == close else { throw invalid(close == 0x7D ? "expected ',' or '}'" : "expected ',' or ']'") }
                index += 1
                closers.removeLast()
            }
            if closers.isEmpty { return }
        }
    }

    /// Inside an object (`close` is `}`), takes a member's key and colon; inside an array, nothing.
    private mutating func member(closedBy close: UInt8) throws(Failure) {
        guard close == 0x7D else { return }
        skipSpace()
        guard try peek() == 0x22 else { throw invalid("expected a key in double quotes") }
        _ = try string(named: "key", making: false)
        skipSpace()
        guard try peek() == 0x3A else { throw invalid("expected ':' after a key") }
        index += 1
    }

    /// A string at `index` (after white space), decoded: pointer navigation's keys.
    mutating func keyText() throws(Failure) -> String {
        skipSpace()
        return try string(named: "key", making: true)
    }
}
