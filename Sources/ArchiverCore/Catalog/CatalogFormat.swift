/// How a catalog's text holds its records.
public enum CatalogFormat: String, Sendable, CaseIterable, Codable {
    /// A JSON array of record objects (at `--records`, the document itself by default).
    case json
    /// JSON Lines (NDJSON): one record object per line.
    case jsonl
    /// Comma-separated values with a header row, RFC 4180 quoting.
    case csv
    /// Tab-separated values with a header row, quoted as CSV.
    case tsv

    /// The format a catalog's first bytes say it is: `[` (or nothing, or a number) is a JSON array; `{` is JSON Lines, or
    /// a JSON document when a `--records` pointer names the array inside it; anything else is a
    /// header row, tab-separated if it has more tabs than commas.
    static func detect(_ head: UnsafeBufferPointer<UInt8>, hasPointer: Bool) -> CatalogFormat {
        var index = 0
        while index < head.count, [0x20, 0x0A, 0x0D, 0x09].contains(head[index]) { index += 1 }
        // Nothing, or a JSON scalar: read as JSON, which says the top level is not an array.
        if index == head.count || [0x5B, 0x2D, 0x30, 0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39].contains(head[index]) {
            return .json
        }
        if index < head.count, head[index] == 0x7B { return hasPointer ? .json : .jsonl }
        var tabs = 0, commas = 0
        for byte in head[index...] {
            if byte == 0x0A { break }
            if byte == 0x09 { tabs += 1 }
            if byte == 0x2C { commas += 1 }
        }
        return tabs > commas ? .tsv : .csv
    }
}

/// What the user said about a catalog's shape (`--format`, `--records`, `--id`, `--field`,
/// `--title`, `--group`); the defaults read the JSONPlaceholder array.
public struct CatalogOptions: Sendable, Equatable {
    /// nil: detected from the content.
    public var format: CatalogFormat?
    /// An RFC 6901 JSON Pointer to the array of records inside a JSON document ("" is the document).
    public var records = ""
    public var idKey = "id"
    /// The key of the image URL (`--field`).
    var field: ImageField = .url
    public var titleKey = "title"
    public var groupKey = "albumId"
    /// The key (CSV: column) of each image's expected SHA-256 in hex (`--sha256`); nil for none.
    public var sha256Key: String?
    /// Where passwords in image URLs go as records are read (each URL keeps `***` in their
    /// place); nil leaves URLs as they are.
    public var passwords: URLPasswords?
    /// The most records a catalog may hold: `Int32.max`, as the plan, the ledger and the jobs
    /// keep a record's position in 32 bits. Lower only in tests, which cannot write 2^31 records.
    var maxRecords = Int(Int32.max)

    init() {}

    /// The pointer's reference tokens, unescaped (`~1` is `/`, `~0` is `~`); nil if it is not a pointer.
    var pointerTokens: [String]? {
        if records.isEmpty { return [] }
        guard records.hasPrefix("/") else { return nil }
        return records.dropFirst().split(separator: "/", omittingEmptySubsequences: false).map {
            $0.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
        }
    }
}

/// The keys a record parser matches, as bytes, made once per catalog (a class: every record
/// parse holds it, and one reference costs less to pass around than five arrays).
final class CatalogSchema: Sendable {
    let id: [UInt8]
    let title: [UInt8]
    let group: [UInt8]
    /// The key of the expected SHA-256 (`--sha256`); nil when none was named.
    let sha256: [UInt8]?
    let sha256Name: String?
    /// The key whose value goes in `CatalogRecord.url`: `--field`, or `url` when that is `thumbnailUrl`.
    let url: [UInt8]
    let thumbnailUrl: [UInt8] = Array("thumbnailUrl".utf8)
    let idName: String
    let groupName: String
    let passwords: URLPasswords?

    init(_ options: CatalogOptions) {
        id = Array(options.idKey.utf8)
        title = Array(options.titleKey.utf8)
        group = Array(options.groupKey.utf8)
        sha256 = options.sha256Key.map { Array($0.utf8) }
        sha256Name = options.sha256Key
        url = Array((options.field == .thumbnailUrl ? "url" : options.field.rawValue).utf8)
        idName = options.idKey
        groupName = options.groupKey
        passwords = options.passwords
    }

    /// `record` with any password in its image URLs taken out (`URLPasswords`).
    func redacting(_ record: inout CatalogRecord) {
        guard let passwords else { return }
        // Assigned only when there may be a password: most records have none, and writing the
        // same string back cost a retain and a release per field.
        if URLPasswords.mayHoldPassword(record.url) { record.url = passwords.redacting(record.url) }
        if URLPasswords.mayHoldPassword(record.thumbnailUrl) { record.thumbnailUrl = passwords.redacting(record.thumbnailUrl) }
    }

    static let standard = CatalogSchema(CatalogOptions())

    /// Longest image URL a record may have; a longer one fails its record alone as `invalid-url`.
    static let maxURLBytes = 8192
}
