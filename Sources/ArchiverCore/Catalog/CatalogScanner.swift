#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// How a catalog's records are read back: its format, the keys, and for CSV the columns.
struct CatalogLayout: Sendable {
    var format: CatalogFormat
    var schema: CatalogSchema
    var columns: CSVColumns?

    static let standard = CatalogLayout(format: .json, schema: .standard, columns: nil)
}

/// The first pass over a catalog: reads it a window at a time, hashing every byte, checks all of
/// it (strict JSON, or CSV), and notes where each record starts, its id and its group (a string
/// id in an `IDArena`). Nothing else is kept, so loading costs memory for the records, not for
/// the text, and a bad catalog fails in memory that does not grow with its size: the error's
/// line and column come from the scan itself (lines are counted as windows are dropped).
struct CatalogScanner {
    private let read: (UnsafeMutableRawBufferPointer, Int) throws(Errno) -> Int
    private let hasher = SHA256Hasher()
    private var buffer: [UInt8]
    private var base = 0  // file offset of buffer[0]
    private var count = 0  // bytes in buffer
    private var position = 0  // next unread byte in buffer
    private var atEOF = false
    /// Why the last read failed, if one did.
    private var failure: Errno?
    private var linesBefore = 0  // line breaks before buffer[0]
    private var lastLineBreak = -1  // file offset of the last line break before buffer[0]
    private var rows = 0  // CSV rows taken, header included
    private var arena: IDArena?  // the string ids, once there is one
    private let options: CatalogOptions
    private let schema: CatalogSchema
    /// Longest record (or value around the records) the scan reads.
    static let maxRecord = 4 << 20

    /// Why the scan stopped: a one-line detail naming where.
    struct Failure: Error {
        var detail: String
        var unreadable = false
        /// Set when the catalog has more records than this, the most it may hold.
        var recordLimit: Int?

        /// The catalog error this failure is, for the catalog `source`.
        func catalogError(source: String) -> CatalogError {
            if let recordLimit { return .tooManyRecords(source: source, limit: recordLimit) }
            return unreadable ? .unreadable(source: source, reason: detail) : .malformed(source: source, detail: detail)
        }
    }

    /// Scans catalog bytes held in memory.
    static func scan(_ data: Data, options: CatalogOptions = CatalogOptions()) throws(Failure) -> Result {
        var scanner = CatalogScanner(options: options) { (into, offset) throws(Errno) in
            let n = min(into.count, max(0, data.count - offset))
            // Offsets count from the first byte, which for a slice is not index 0.
            let from = data.startIndex + offset
            if n > 0 { data.copyBytes(to: into.bindMemory(to: UInt8.self), from: from..<(from + n)) }
            return n
        }
        return try scanner.scan()
    }

    /// `read(into, offset)` fills `into` from `offset` and returns the bytes read (0 at the end).
    init(options: CatalogOptions = CatalogOptions(), read: @escaping (UnsafeMutableRawBufferPointer, Int) throws(Errno) -> Int) {
        self.read = read
        self.options = options
        schema = CatalogSchema(options)
        buffer = [UInt8](repeating: 0, count: 256 * 1024)
    }

    struct Result {
        var entries: [CatalogRecords.Entry]
        var arena: IDArena?
        var end: Int
        var sha256: String
        var layout: CatalogLayout
    }

    mutating func scan() throws(Failure) -> Result {
        guard ensure(64 * 1024) else { throw readFailure() }
        if count >= 3, buffer[0] == 0xEF, buffer[1] == 0xBB, buffer[2] == 0xBF { position = 3 }  // a UTF-8 byte order mark
        guard let tokens = options.pointerTokens else {
            throw Failure(detail: "--records takes a JSON Pointer such as /data, not '\(options.records)'")
        }
        let format = options.format
            ?? buffer.withUnsafeBufferPointer { CatalogFormat.detect(UnsafeBufferPointer(rebasing: $0[position..<count]), hasPointer: !tokens.isEmpty) }
        if !tokens.isEmpty, format != .json {
            throw Failure(detail: "--records applies to a JSON document, not to \(format.rawValue)")
        }
        var layout = CatalogLayout(format: format, schema: schema, columns: nil)
        var entries: [CatalogRecords.Entry] = []
        var end = 0
        switch format {
        case .json: try scanJSON(tokens, &entries, &end)
        case .jsonl: try scanLines(&entries, &end)
        case .csv, .tsv: layout.columns = try scanRows(format == .tsv ? 0x09 : 0x2C, &entries, &end)
        }
        guard failure == nil else { throw readFailure() }
        return Result(entries: entries, arena: arena, end: end, sha256: hasher.finish(), layout: layout)
    }

    private mutating func scanJSON(_ tokens: [String], _ entries: inout [CatalogRecords.Entry], _ end: inout Int) throws(Failure) {
        var closers: [UInt8] = []
        var path = ""
        for token in tokens {
            let open = nextByte()
            if open == 0x7B {
                position += 1
                while true {
                    guard let next = nextByte(), next != 0x7D else {
                        throw located(position, "the document has no \(path)/\(Self.escaped(token)) (--records \(options.records))")
                    }
                    let key = try parse { try $0.keyText() }
                    guard nextByte() == 0x3A else { throw located(position, "expected ':' after a key") }
                    position += 1
                    if key == token { break }
                    try parse { try $0.skipValue() }
                    try separator(0x7D, path + "/" + Self.escaped(token))
                }
                closers.append(0x7D)
            } else if open == 0x5B, let wanted = Int(token), wanted >= 0 {
                position += 1
                for _ in 0..<wanted {
                    guard nextByte() != 0x5D else { throw located(position, "the document has no \(path)/\(Self.escaped(token))") }
                    try parse { try $0.skipValue() }
                    try separator(0x5D, path + "/" + Self.escaped(token))
                }
                guard nextByte() != 0x5D else { throw located(position, "the document has no \(path)/\(Self.escaped(token))") }
                closers.append(0x5D)
            } else {
                throw located(position, "the document has no \(path)/\(Self.escaped(token)): \(path.isEmpty ? "the top level" : path) is not an object")
            }
            path += "/" + Self.escaped(token)
        }
        guard nextByte() == 0x5B else {
            throw located(position, path.isEmpty ? "the top level is not an array (for records inside an object, use --records, e.g. --records /data)" : "\(path) is not an array")
        }
        position += 1
        if nextByte() == 0x5D {
            position += 1
        } else {
            while true {
                _ = nextByte()
                let start = base + position
                let record = try parse(record: entries.count + 1) { try $0.object([]) }
                try append(record, at: start, to: &entries)
                end = base + position
                let next = nextByte()
                if next == 0x2C {
                    position += 1
                    continue
                }
                guard next == 0x5D else { throw located(position, "expected ',' or ']' after record \(entries.count)") }
                position += 1
                break
            }
        }
        // Whatever follows the array inside the document is checked, not used.
        for close in closers.reversed() {
            while true {
                let next = nextByte()
                if next == close {
                    position += 1
                    break
                }
                guard next == 0x2C else { throw located(position, "expected ',' or '\(UnicodeScalar(close))'") }
                position += 1
                if close == 0x7D {
                    _ = try parse { try $0.keyText() }
                    guard nextByte() == 0x3A else { throw located(position, "expected ':' after a key") }
                    position += 1
                }
                try parse { try $0.skipValue() }
            }
        }
        guard nextByte() == nil else { throw located(position, "text after the end of the JSON document") }
    }

    /// After a skipped member or element: `,` (taken) or the container's end (an error: what
    /// was looked for is not there).
    private mutating func separator(_ close: UInt8, _ wanted: String) throws(Failure) {
        let next = nextByte()
        if next == 0x2C {
            position += 1
            return
        }
        if next == close { throw located(position, "the document has no \(wanted) (--records \(options.records))") }
        throw located(position, "expected ',' or '\(UnicodeScalar(close))'")
    }

    private mutating func scanLines(_ entries: inout [CatalogRecords.Entry], _ end: inout Int) throws(Failure) {
        while nextByte() != nil {
            let start = base + position
            let record: CatalogRecord
            do {
                record = try parse(record: entries.count + 1) { try $0.object([]) }
            } catch where entries.isEmpty && options.format == nil && error.detail.contains("has no") {
                throw Failure(detail: error.detail + " (read as JSON Lines; for records in an array inside an object, use --records, e.g. --records /data)")
            }
            try append(record, at: start, to: &entries)
            end = base + position
            while true {
                guard ensure(1), position < count else { break }
                let byte = buffer[position]
                if byte == 0x20 || byte == 0x09 || byte == 0x0D {
                    position += 1
                    continue
                }
                guard byte == 0x0A else { throw located(position, "expected a line break after record \(entries.count) (JSON Lines: one record per line)") }
                position += 1
                break
            }
        }
    }

    private mutating func scanRows(_ delimiter: UInt8, _ entries: inout [CatalogRecords.Entry], _ end: inout Int) throws(Failure) -> CSVColumns {
        // Rows end in LF or CRLF. A header ended by a lone CR (old Mac line ends) would swallow
        // the whole text as one row and give no records at all: refuse it instead.
        if let firstBreak = buffer[position..<count].firstIndex(where: { $0 == 0x0A || $0 == 0x0D }), buffer[firstBreak] == 0x0D,
            firstBreak + 1 < count, buffer[firstBreak + 1] != 0x0A
        {
            throw located(firstBreak, "the header ends in a lone CR: rows must end in LF or CRLF (convert CR-only line ends, e.g. tr '\\r' '\\n')")
        }
        let header = try parse { bytes, at, atEnd in try CSVRow.parse(bytes, at: at, delimiter: delimiter, atEnd: atEnd) }
        rows = 1
        let names = buffer.withUnsafeBufferPointer { raw in header.fields.map { CSVRow.text(UnsafeBufferPointer(rebasing: raw[..<count]), $0) } }
        func column(_ key: String) -> Int? { names.firstIndex(of: key) }
        guard let id = column(options.idKey) else {
            throw Failure(detail: "row 1: the header has no \"\(options.idKey)\" column (it has \(names.prefix(8).map { "\"\(Self.printable($0))\"" }.joined(separator: ", ")))")
        }
        if let key = options.sha256Key, column(key) == nil {
            throw Failure(detail: "row 1: the header has no \"\(Self.printable(key))\" column for --sha256")
        }
        let urlKey = options.field == .thumbnailUrl ? "url" : options.field.rawValue
        // A column the run reads named twice is refused, as a JSON record with the key twice is.
        for key in [options.idKey, urlKey, "thumbnailUrl", options.titleKey, options.groupKey] where names.count(where: { $0 == key }) > 1 {
            throw Failure(detail: "row 1: the header has the column \"\(Self.printable(key))\" twice")
        }
        let columns = CSVColumns(
            delimiter: delimiter, count: names.count, id: id, url: column(urlKey), thumbnailUrl: column("thumbnailUrl"),
            title: column(options.titleKey), group: column(options.groupKey), sha256: options.sha256Key.flatMap(column))
        while true {
            guard ensure(1) else { throw readFailure() }
            if position >= count, atEOF { break }
            let start = base + position
            let row = try parse { bytes, at, atEnd in try CSVRow.parse(bytes, at: at, delimiter: delimiter, atEnd: atEnd) }
            rows += 1
            if row.isBlank { continue }
            guard row.fields.count == columns.count else {
                throw Failure(detail: "row \(rows), line \(line(at: start - base)): \(row.fields.count) fields where the header has \(columns.count)")
            }
            let record: CatalogRecord
            do {
                record = try buffer.withUnsafeBufferPointer { raw in
                    try columns.record(UnsafeBufferPointer(rebasing: raw[..<count]), row, fields: [], schema: schema)
                }
            } catch {
                if let failure = error as? CatalogParser.Failure, failure.message == CatalogParser.notUTF8(schema.idName) {
                    // Where the bad byte is (`located` names the row after the last one taken).
                    rows -= 1
                    throw located(failure.offset, failure.message)
                }
                throw Failure(detail: "row \(rows), line \(line(at: start - base)): \((error as? CatalogParser.Failure)?.message ?? "\(error)")")
            }
            try append(record, at: start, to: &entries)
            end = base + position
        }
        return columns
    }

    /// Notes `record`, whose text starts at file offset `start`; refuses one past `maxRecords`,
    /// as a position past `Int32.max` would trap where the plan and the ledger number records.
    private mutating func append(_ record: CatalogRecord, at start: Int, to entries: inout [CatalogRecords.Entry]) throws(Failure) {
        guard entries.count < options.maxRecords else {
            throw Failure(detail: "more than \(options.maxRecords) records", recordLimit: options.maxRecords)
        }
        entries.append(.init(id: record.id, offset: start, albumId: record.albumId, arena: &arena))
    }

    /// Runs the record parser at `position`, reading more of the text as it needs (up to
    /// `maxRecord`), and takes what it parsed.
    @discardableResult
    private mutating func parse<T>(record: Int? = nil, _ body: (inout CatalogParser) throws -> T) throws(Failure) -> T {
        let schema = schema
        return try parse(record: record) { bytes, at, _ in
            var parser = CatalogParser(bytes: bytes, at: at, schema: schema)
            let value = try body(&parser)
            return (value, parser.index)
        }
    }

    private mutating func parse(
        _ body: (UnsafeBufferPointer<UInt8>, Int, Bool) throws -> CSVRow
    ) throws(Failure) -> CSVRow {
        try parse(record: nil) { bytes, at, atEnd in
            let row = try body(bytes, at, atEnd)
            return (row, row.end)
        }
    }

    private mutating func parse<T>(
        record: Int?, _ body: (UnsafeBufferPointer<UInt8>, Int, Bool) throws -> (T, Int)
    ) throws(Failure) -> T {
        var lookahead = 64 * 1024
        while true {
            guard ensure(lookahead) else { throw readFailure() }
            let outcome: Swift.Result<(T, Int), CatalogParser.Failure> = buffer.withUnsafeBufferPointer { raw in
                do {
                    return .success(try body(UnsafeBufferPointer(rebasing: raw[..<count]), position, atEOF))
                } catch {
                    return .failure(error as? CatalogParser.Failure ?? CatalogParser.Failure(offset: position, message: "\(error)", needsMore: false))
                }
            }
            switch outcome {
            case .success(let (value, end)):
                position = end
                return value
            case .failure(let failure):
                let prefix = record.map { "record \($0): " } ?? ""
                if failure.needsMore, !atEOF {
                    if lookahead < Self.maxRecord {
                        lookahead *= 4
                        continue
                    }
                    throw located(position, prefix + "longer than \(Self.maxRecord >> 20) MiB (the most a record may be)")
                }
                throw located(failure.offset, prefix + failure.message)
            }
        }
    }

    /// A pointer's reference token as the pointer spells it (`~0` for `~`, `~1` for `/`).
    static func escaped(_ token: String) -> String {
        token.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1")
    }

    /// A header name fit for a one-line message: at most 40 characters, control characters and
    /// what is not UTF-8 shown as `?`.
    static func printable(_ text: String) -> String {
        let shown = String(text.unicodeScalars.prefix(40).map { $0.value < 0x20 || $0 == "\u{FFFD}" ? "?" : Character($0) })
        return text.unicodeScalars.count > 40 ? shown + "..." : shown
    }

    private func readFailure() -> Failure {
        Failure(detail: "read failed: \(failure ?? Errno(rawValue: EIO))", unreadable: true)
    }

    /// `line L, column C: message` for the byte at buffer index `index` (columns count bytes);
    /// for CSV, the row too.
    private func located(_ index: Int, _ message: String) -> Failure {
        let index = min(index, count)
        var breaks = 0
        var last = lastLineBreak
        for i in 0..<index where buffer[i] == 0x0A {
            breaks += 1
            last = base + i
        }
        let row = rows > 0 ? "row \(rows + 1), " : ""
        return Failure(detail: "\(row)line \(linesBefore + breaks + 1), column \(base + index - last): \(message)")
    }

    private func line(at index: Int) -> Int {
        var breaks = 0
        for i in 0..<min(index, count) where buffer[i] == 0x0A { breaks += 1 }
        return linesBefore + breaks + 1
    }

    /// The next byte that is not white space, reading more as needed; nil at the end.
    private mutating func nextByte() -> UInt8? {
        while true {
            while position < count {
                let byte = buffer[position]
                guard byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 else { return byte }
                position += 1
            }
            guard ensure(1), position < count else { return nil }
        }
    }

    /// Makes at least `wanted` bytes available from `position`, unless the text ends sooner.
    private mutating func ensure(_ wanted: Int) -> Bool {
        if count - position >= wanted || atEOF { return failure == nil }
        // Count the line breaks of what is dropped, keep the unread tail, then read until the
        // buffer is full or the text ends.
        buffer.withUnsafeBufferPointer { raw in
            var from = 0
            while from < position, let hit = memchr(raw.baseAddress! + from, 0x0A, position - from) {
                let at = raw.baseAddress!.distance(to: hit.assumingMemoryBound(to: UInt8.self))
                linesBefore += 1
                lastLineBreak = base + at
                from = at + 1
            }
        }
        let tail = count - position
        if buffer.count < 2 * wanted { buffer += [UInt8](repeating: 0, count: 2 * wanted - buffer.count) }
        buffer.withUnsafeMutableBytes { raw in
            if position > 0, tail > 0 { memmove(raw.baseAddress!, raw.baseAddress! + position, tail) }
        }
        base += position
        count = tail
        position = 0
        while count < buffer.count {
            let n: Int
            switch buffer.withUnsafeMutableBytes({ raw in
                Swift.Result { () throws(Errno) in try read(UnsafeMutableRawBufferPointer(rebasing: raw[count...]), base + count) }
            }) {
            case .success(let got): n = got
            case .failure(let error):
                failure = error
                return false
            }
            if n == 0 {
                atEOF = true
                break
            }
            buffer.withUnsafeBytes { hasher.update(UnsafeRawBufferPointer(rebasing: $0[count..<(count + n)])) }
            count += n
        }
        return true
    }
}
