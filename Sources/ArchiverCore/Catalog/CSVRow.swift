/// One row of a CSV or TSV catalog: fields split at the delimiter, RFC 4180 quoting (a field in
/// double quotes may hold the delimiter, line breaks and `""` for a quote), ended by LF or CRLF.
struct CSVRow {
    struct Field {
        var start: Int
        var end: Int
        var quoted: Bool
    }

    var fields: [Field]
    /// Just past the row's line break (or the end of the text).
    var end: Int

    /// The row at `start`; `atEnd` says the bytes end where the text does (a last row needs no
    /// line break), otherwise running out of bytes asks for more.
    static func parse(
        _ bytes: UnsafeBufferPointer<UInt8>, at start: Int, delimiter: UInt8, atEnd: Bool
    ) throws(CatalogParser.Failure) -> CSVRow {
        var fields: [Field] = []
        var index = start
        func more() -> CatalogParser.Failure {
            CatalogParser.Failure(offset: index, message: "the text ends inside a quoted field", needsMore: true)
        }
        while true {
            if index < bytes.count, bytes[index] == 0x22 {
                let fieldStart = index + 1
                index += 1
                while true {
                    guard index < bytes.count else {
                        if atEnd { throw CatalogParser.Failure(offset: fieldStart - 1, message: "a quoted field is never closed", needsMore: false) }
                        throw more()
                    }
                    if bytes[index] == 0x22 {
                        if index + 1 < bytes.count, bytes[index + 1] == 0x22 {
                            index += 2
                            continue
                        }
                        if index + 1 >= bytes.count, !atEnd { throw more() }
                        break
                    }
                    index += 1
                }
                fields.append(Field(start: fieldStart, end: index, quoted: true))
                index += 1
                guard index < bytes.count else {
                    if atEnd { return CSVRow(fields: fields, end: index) }
                    throw more()
                }
                let next = bytes[index]
                if next == delimiter {
                    index += 1
                    continue
                }
                if next == 0x0A { return CSVRow(fields: fields, end: index + 1) }
                if next == 0x0D, index + 1 < bytes.count, bytes[index + 1] == 0x0A { return CSVRow(fields: fields, end: index + 2) }
                if next == 0x0D, index + 1 >= bytes.count, !atEnd { throw more() }
                throw CatalogParser.Failure(offset: index, message: "text after a quoted field's closing quote", needsMore: false)
            }
            let fieldStart = index
            while index < bytes.count {
                let byte = bytes[index]
                if byte == delimiter || byte == 0x0A { break }
                if byte == 0x22 {
                    throw CatalogParser.Failure(offset: index, message: "a quote inside an unquoted field (quote the whole field)", needsMore: false)
                }
                index += 1
            }
            guard index < bytes.count else {
                guard atEnd else { throw more() }
                fields.append(Field(start: fieldStart, end: trimCR(bytes, fieldStart, index), quoted: false))
                return CSVRow(fields: fields, end: index)
            }
            if bytes[index] == delimiter {
                fields.append(Field(start: fieldStart, end: index, quoted: false))
                index += 1
                continue
            }
            fields.append(Field(start: fieldStart, end: trimCR(bytes, fieldStart, index), quoted: false))
            return CSVRow(fields: fields, end: index + 1)
        }
    }

    private static func trimCR(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> Int {
        end > start && bytes[end - 1] == 0x0D ? end - 1 : end
    }

    /// A field's text, `""` made `"` in a quoted one.
    static func text(_ bytes: UnsafeBufferPointer<UInt8>, _ field: Field) -> String {
        let raw = UnsafeBufferPointer(rebasing: bytes[field.start..<field.end])
        guard field.quoted, raw.contains(0x22) else { return String(decoding: raw, as: UTF8.self) }
        var out: [UInt8] = []
        out.reserveCapacity(raw.count)
        var skip = false
        for byte in raw {
            if skip {
                skip = false
                continue
            }
            out.append(byte)
            if byte == 0x22 { skip = true }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Whether the row is empty (a blank line), which the scan skips.
    var isBlank: Bool {
        fields.count == 1 && !fields[0].quoted && fields[0].start == fields[0].end
    }
}

/// Where the columns a catalog uses sit in its CSV or TSV header.
struct CSVColumns: Sendable {
    var delimiter: UInt8
    var count: Int
    var id: Int
    var url: Int?
    var thumbnailUrl: Int?
    var title: Int?
    var group: Int?
    var sha256: Int?

    /// The record in `row`, its values read as a JSON record's strings would be.
    func record(_ bytes: UnsafeBufferPointer<UInt8>, _ row: CSVRow, fields: CatalogParser.Fields, schema: CatalogSchema) throws(CatalogParser.Failure) -> CatalogRecord {
        func text(_ column: Int?) -> String? {
            column.map { CSVRow.text(bytes, row.fields[$0]) }
        }
        // Every cell is a string: one that spells an integer canonically is that integer id, as
        // in JSON, and an empty one is the empty id (which fails alone as `unsafe-key`).
        let cell = row.fields[id]
        if let bad = CatalogParser.invalidUTF8(UnsafeBufferPointer(rebasing: bytes[cell.start..<cell.end])) {
            throw CatalogParser.Failure(offset: cell.start + bad, message: CatalogParser.notUTF8(schema.idName), needsMore: false)
        }
        let idValue = RecordID(text(id) ?? "")
        var groupValue = 0
        if let groupText = text(group), !groupText.isEmpty {
            guard let value = Int(groupText) else {
                throw CatalogParser.Failure(
                    offset: row.fields[group!].start, message: "\"\(schema.groupName)\" is not an integer (the gallery groups by integer)",
                    needsMore: false)
            }
            groupValue = value
        }
        var record = CatalogRecord(
            albumId: groupValue, id: idValue, title: fields.contains(.title) ? text(title) ?? "" : "",
            url: fields.contains(.url) ? text(url) ?? "" : "",
            thumbnailUrl: fields.contains(.thumbnailUrl) ? text(thumbnailUrl) ?? "" : "")
        if fields.contains(.sha256) { record.sha256 = text(sha256) }
        let image = fields.contains(.url) ? record.url : record.thumbnailUrl
        if image.utf8.count > CatalogSchema.maxURLBytes {
            record.urlProblem = "a URL of \(image.utf8.count) bytes, over the limit of \(CatalogSchema.maxURLBytes)"
        } else if image.containsUTF8Byte(where: { $0 >= 0x80 }), image.unicodeScalars.contains("\u{FFFD}") {
            record.urlProblem = "a URL that is not valid UTF-8"
        }
        if record.urlProblem != nil {
            if fields.contains(.url) { record.url = "" } else { record.thumbnailUrl = "" }
        }
        schema.redacting(&record)
        return record
    }
}
