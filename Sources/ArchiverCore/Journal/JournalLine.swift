#if canImport(Glibc)
import Glibc
#endif

/// The journal's line format: tab-separated fields, one record per line, escaped so that a
/// field can never contain a tab or a newline. Cheap to write with one `write` and to replay
/// a million of (no JSON parsing).
///
///     done    <id> <url> <source> <bytes> <sha256> <width> <height> <attempts>
///     failed  <id> <url> <source> <attempts> <kind> <status or -> <message>
///     pending <id> <url> <source>        (an earlier line no longer holds: fetch again)
enum JournalLine {
    static func encode(_ record: ItemRecord) -> String {
        var bytes: [UInt8] = []
        append(record, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `record`'s line, newline included, as UTF-8: what `Journal.append` writes, built
    /// without a String per field.
    static func append(_ record: ItemRecord, to bytes: inout [UInt8]) {
        bytes.appendUTF8(record.status.rawValue)
        field(record.id, &bytes)
        field(escape(record.url), &bytes)
        field(escape(record.source), &bytes)
        switch record.status {
        case .pending:
            break
        case .done:
            field(Int(record.bytes), &bytes)
            field(record.sha256, &bytes)
            field(record.width, &bytes)
            field(record.height, &bytes)
            field(record.attempts, &bytes)
        case .failed:
            let error = record.error ?? RecordedError(kind: "io", message: "unknown")
            field(record.attempts, &bytes)
            field(escape(error.kind), &bytes)
            if let status = error.status { field(status, &bytes) } else { field("-", &bytes) }
            field(escape(error.message), &bytes)
        }
        bytes.append(0x0A)
    }

    /// A tab, then `text`.
    private static func field(_ text: String, _ bytes: inout [UInt8]) {
        bytes.append(0x09)
        bytes.appendUTF8(text)
    }

    /// A tab, then `value` in decimal.
    private static func field(_ value: Int, _ bytes: inout [UInt8]) {
        bytes.append(0x09)
        bytes.appendDecimal(value)
    }

    /// Parses one line (without its newline); nil for anything malformed.
    static func decode<S: StringProtocol>(_ line: S) -> ItemRecord? {
        var bytes = Array(line.utf8)
        return bytes.withUnsafeMutableBufferPointer { decode(UnsafeBufferPointer($0)) }
    }

    /// Parses one line from raw bytes: replay reads a million of these, so it walks tab to tab
    /// with `memchr` and parses integers without Character-level String APIs or a fields array.
    static func decode(_ line: UnsafeBufferPointer<UInt8>) -> ItemRecord? {
        var cursor = FieldCursor(line)
        guard let kind = cursor.next(), let idField = cursor.next(), let id = integer(idField),
            let urlField = cursor.next(), let sourceField = cursor.next()
        else { return nil }
        if kind.elementsEqual("done".utf8) {
            guard let bytes = cursor.next().flatMap(integer), let sha = cursor.next(),
                let width = cursor.next().flatMap(integer), let height = cursor.next().flatMap(integer),
                let attempts = cursor.next().flatMap(integer), cursor.atEnd
            else { return nil }
            return ItemRecord(
                id: id, url: text(urlField), source: text(sourceField), status: .done, bytes: Int64(bytes),
                sha256: text(sha), width: width, height: height, attempts: attempts)
        }
        if kind.elementsEqual("pending".utf8) {
            guard cursor.atEnd else { return nil }
            return ItemRecord(id: id, url: text(urlField), source: text(sourceField), status: .pending)
        }
        if kind.elementsEqual("failed".utf8) {
            guard let attempts = cursor.next().flatMap(integer), let errorKind = cursor.next(),
                let status = cursor.next(), let message = cursor.next(), cursor.atEnd
            else { return nil }
            let error = RecordedError(kind: text(errorKind), status: integer(status), message: text(message))
            return ItemRecord(
                id: id, url: text(urlField), source: text(sourceField), status: .failed, attempts: attempts,
                error: error)
        }
        return nil
    }

    /// Just the status and id of a line, without decoding the rest: what replay needs.
    static func peek(_ line: UnsafeBufferPointer<UInt8>) -> (id: Int, status: ItemRecord.Status)? {
        var cursor = FieldCursor(line)
        guard let kind = cursor.next(), let id = cursor.next().flatMap(integer) else { return nil }
        if kind.elementsEqual("done".utf8) { return (id, .done) }
        if kind.elementsEqual("failed".utf8) { return (id, .failed) }
        if kind.elementsEqual("pending".utf8) { return (id, .pending) }
        return nil
    }

    /// Walks the tab-separated fields of one line.
    private struct FieldCursor {
        let line: UnsafeBufferPointer<UInt8>
        var start = 0
        var exhausted = false

        init(_ line: UnsafeBufferPointer<UInt8>) {
            self.line = line
        }

        var atEnd: Bool { exhausted }

        mutating func next() -> UnsafeBufferPointer<UInt8>? {
            guard !exhausted, let base = line.baseAddress else { return nil }
            let remaining = line.count - start
            if let tab = memchr(base + start, 0x09, remaining) {
                let end = base.distance(to: tab.assumingMemoryBound(to: UInt8.self))
                defer { start = end + 1 }
                return UnsafeBufferPointer(start: base + start, count: end - start)
            }
            exhausted = true
            return UnsafeBufferPointer(start: base + start, count: remaining)
        }
    }

    private static func integer(_ field: UnsafeBufferPointer<UInt8>) -> Int? {
        guard !field.isEmpty, field.count <= 18 else { return nil }
        var negative = false
        var value = 0
        for (index, byte) in field.enumerated() {
            if index == 0, byte == 0x2D, field.count > 1 {
                negative = true
                continue
            }
            guard byte >= 0x30, byte <= 0x39 else { return nil }
            value = value * 10 + Int(byte - 0x30)
        }
        return negative ? -value : value
    }

    private static func text(_ field: UnsafeBufferPointer<UInt8>) -> String {
        let raw = String(decoding: field, as: UTF8.self)
        return field.contains(0x5C) ? unescape(raw) : raw
    }

    static func escape(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 == 0x09 || $0 == 0x0a || $0 == 0x0d || $0 == 0x5c }) else { return text }
        var out = ""
        for character in text {
            switch character {
            case "\\": out += "\\\\"
            case "\t": out += "\\t"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\r\n": out += "\\r\\n"
            default: out.append(character)
            }
        }
        return out
    }

    static func unescape<S: StringProtocol>(_ text: S) -> String {
        guard text.contains("\\") else { return String(text) }
        var out = ""
        var escaping = false
        for character in text {
            if escaping {
                switch character {
                case "t": out += "\t"
                case "n": out += "\n"
                case "r": out += "\r"
                default: out.append(character)
                }
                escaping = false
            } else if character == "\\" {
                escaping = true
            } else {
                out.append(character)
            }
        }
        return out
    }
}
