#if canImport(Glibc)
import Glibc
#endif

/// The journal's line format: tab-separated fields, one record per line, escaped so that a
/// field can never contain a tab or a newline. Cheap to write with one `write` and to replay
/// a million of (no JSON parsing). The inode and mtime of a done file came in later: a line
/// without them is still read (its file is then checked by size alone); so did its validators
/// (`ETag` and `Last-Modified`, an empty field for one the server did not send), after them;
/// and last the format and frame count, written only for an image that is not a still PNG, so
/// a PNG's line reads as it always did.
///
/// Fields are escaped and compared as bytes, never as Characters: a tab followed by a combining
/// mark is one Character but must still be escaped, and two spellings Unicode calls equal are
/// different URLs. A field that cannot be what the archiver wrote (a sha256 that is not 64 hex
/// digits, a width of 0, a negative size) makes the line unreadable, so its record is fetched
/// again rather than trusted.
///
/// An integer id is written in decimal, as it always was; a string id (which never spells an
/// integer canonically: see `RecordID`) as `"` and then the id, escaped like any text field, so
/// `"007` is the string `007` and `7` the integer 7, and any id survives (tabs, newlines,
/// backslashes, `%`).
///
///     done    <id> <url> <source> <bytes> <sha256> <width> <height> <attempts> [<inode> <mtime-ns> [<etag> <last-modified> [<format> <frames>]]]
///             (inode and mtime are `-` when unknown and validators follow; validators are
///             empty fields when the server sent none and the format follows)
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
            bytes.append(0x09)
            record.sha256?.appendHex(to: &bytes)
            field(record.width, &bytes)
            field(record.height, &bytes)
            field(record.attempts, &bytes)
            let typed = record.format != .png || record.frames != 1
            if let file = record.file {
                bytes.append(0x09)
                bytes.appendDecimal(file.inode)
                field(Int(file.modified), &bytes)
            } else if !record.validators.isEmpty || typed {
                field("-", &bytes)
                field("-", &bytes)
            }
            if !record.validators.isEmpty || typed {
                field(escape(record.validators.etag ?? ""), &bytes)
                field(escape(record.validators.lastModified ?? ""), &bytes)
            }
            if typed {
                field(record.format.rawValue, &bytes)
                field(record.frames, &bytes)
            }
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

    /// A tab, then the id: an integer in decimal, a string as `"` and the escaped text.
    private static func field(_ id: RecordID, _ bytes: inout [UInt8]) {
        switch id.value {
        case .integer(let value): field(value, &bytes)
        case .string(let text):
            bytes.append(0x09)
            bytes.append(0x22)
            bytes.appendUTF8(escape(text))
        }
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
        guard let kind = cursor.next(), let idField = cursor.next(), let id = recordID(idField),
            let urlField = cursor.next(), let sourceField = cursor.next()
        else { return nil }
        if kind.elementsEqual("done".utf8) {
            guard let bytes = cursor.next().flatMap(integer), bytes >= 0, let sha = cursor.next().flatMap(SHA256Digest.init(hexBytes:)),
                let width = cursor.next().flatMap(integer), dimensions.contains(width),
                let height = cursor.next().flatMap(integer), dimensions.contains(height),
                let attempts = cursor.next().flatMap(integer), attempts >= 0
            else { return nil }
            var file: FileStamp?
            var validators = Validators()
            var format = ImageFormat.png, frames = 1
            if !cursor.atEnd {
                guard let inodeField = cursor.next(), let modifiedField = cursor.next() else { return nil }
                if !(isDash(inodeField) && isDash(modifiedField)) {
                    guard let inode = unsigned(inodeField), let modified = integer(modifiedField) else { return nil }
                    file = FileStamp(inode: inode, modified: Int64(modified))
                }
                if !cursor.atEnd {
                    guard let etag = cursor.next(), let lastModified = cursor.next() else { return nil }
                    validators = Validators(
                        etag: etag.isEmpty ? nil : text(etag), lastModified: lastModified.isEmpty ? nil : text(lastModified))
                    if !cursor.atEnd {
                        guard let formatField = cursor.next(), let named = ImageFormat(rawValue: text(formatField)),
                            let count = cursor.next().flatMap(integer), dimensions.contains(count), cursor.atEnd
                        else { return nil }
                        (format, frames) = (named, count)
                    }
                }
            }
            return ItemRecord(
                id: id, url: text(urlField), source: text(sourceField), status: .done, bytes: Int64(bytes),
                sha256: sha, width: width, height: height, attempts: attempts, file: file,
                validators: validators, format: format, frames: frames)
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
    static func peek(_ line: UnsafeBufferPointer<UInt8>) -> (id: RecordID, status: ItemRecord.Status)? {
        var cursor = FieldCursor(line)
        guard let kind = cursor.next(), let id = cursor.next().flatMap(recordID) else { return nil }
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

    private static func isDash(_ field: UnsafeBufferPointer<UInt8>) -> Bool {
        field.count == 1 && field[0] == 0x2D
    }

    /// Widths and heights a PNG can have and the ledger can hold.
    private static let dimensions = 1...Int(Int32.max)

    /// An id field: a decimal integer, or `"` and an escaped string.
    static func recordID(_ field: UnsafeBufferPointer<UInt8>) -> RecordID? {
        guard field.first == 0x22 else { return integer(field).map { RecordID($0) } }
        return RecordID(text(UnsafeBufferPointer(rebasing: field[1...])))
    }

    /// A decimal integer in Int's whole range (`-` for negatives); nil for anything else,
    /// including a value that overflows.
    static func integer(_ field: UnsafeBufferPointer<UInt8>) -> Int? {
        let negative = field.first == 0x2D
        let digits = UnsafeBufferPointer(rebasing: field[(negative ? 1 : 0)...])
        guard let magnitude = unsigned(digits) else { return nil }
        if negative { return magnitude <= UInt64(Int.max) + 1 ? Int(truncatingIfNeeded: 0 &- magnitude) : nil }
        return magnitude <= UInt64(Int.max) ? Int(magnitude) : nil
    }

    /// An unsigned decimal integer that fits in 64 bits, or nil.
    private static func unsigned(_ field: UnsafeBufferPointer<UInt8>) -> UInt64? {
        guard !field.isEmpty else { return nil }
        var value: UInt64 = 0
        for byte in field {
            guard byte >= 0x30, byte <= 0x39 else { return nil }
            let (times10, over1) = value.multipliedReportingOverflow(by: 10)
            let (sum, over2) = times10.addingReportingOverflow(UInt64(byte - 0x30))
            guard !over1, !over2 else { return nil }
            value = sum
        }
        return value
    }

    private static func text(_ field: UnsafeBufferPointer<UInt8>) -> String {
        field.contains(0x5C) ? String(decoding: unescape(field), as: UTF8.self) : String(decoding: field, as: UTF8.self)
    }

    /// `text` with backslash, tab, newline and carriage return escaped, byte by byte.
    static func escape(_ text: String) -> String {
        guard text.containsUTF8Byte(where: { $0 == 0x09 || $0 == 0x0a || $0 == 0x0d || $0 == 0x5c }) else { return text }
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count + 8)
        for byte in text.utf8 {
            switch byte {
            case 0x5C: out += [0x5C, 0x5C]
            case 0x09: out += [0x5C, 0x74]
            case 0x0A: out += [0x5C, 0x6E]
            case 0x0D: out += [0x5C, 0x72]
            default: out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Undoes `escape`, byte by byte.
    static func unescape<S: StringProtocol>(_ text: S) -> String {
        var text = String(text)
        return text.withUTF8 { String(decoding: unescape($0), as: UTF8.self) }
    }

    private static func unescape(_ field: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(field.count)
        var escaping = false
        for byte in field {
            if escaping {
                switch byte {
                case 0x74: out.append(0x09)
                case 0x6E: out.append(0x0A)
                case 0x72: out.append(0x0D)
                default: out.append(byte)
                }
                escaping = false
            } else if byte == 0x5C {
                escaping = true
            } else {
                out.append(byte)
            }
        }
        return out
    }
}
