import Foundation

/// The parsers `make fuzz` feeds with libFuzzer, each behind one entry point that the fuzz
/// executables (`Fuzz/`) and the test replaying their corpora call alike. Whatever the bytes,
/// a parser must answer (a value or an error): never trap, leak, or allocate without bound.
public enum FuzzTarget: String, CaseIterable, Sendable {
    /// `PNGValidator` in both modes on the whole body, and the streaming check of `verify` and
    /// `pack` fed in pieces whose size the first byte picks: the two verdicts must agree.
    case png
    /// `ShimValidator` (libjpeg-turbo, libwebp, giflib) in both modes: whatever full mode accepts,
    /// structure mode accepts with the same size and frames (full mode only adds the decode).
    case jpeg, webp, gif
    /// `Catalog(source:data:)`: the scanner (JSON, JSON Lines, CSV or TSV), then every record read by the parser.
    case catalog
    /// One journal line: `peek`, `decode`, and a decoded record must survive its own encoding.
    case journal
    /// The CSV and TSV reader: the bytes as a catalog with `--format csv`, and with every comma
    /// and tab swapped as one with `--format tsv`, every record read back; both must agree (read
    /// or refused alike, the same ids with their delimiters swapped).
    case csv
    /// `ManifestReader`, handed the bytes a few at a time (the first byte picks how many, so every
    /// window refill is met mid-token); every item it decodes, written again by
    /// `ManifestEncoding`, must read back equal, header and all.
    case manifest

    /// Runs the target on `bytes`; a broken invariant traps, which libFuzzer reports.
    public func run(_ bytes: UnsafeRawBufferPointer) {
        switch self {
        case .png: Self.png(bytes)
        case .jpeg: Self.image(bytes, .jpeg)
        case .webp: Self.image(bytes, .webp)
        case .gif: Self.image(bytes, .gif)
        case .catalog: Self.catalog(bytes)
        case .journal: Self.journal(bytes)
        case .csv: Self.csv(bytes)
        case .manifest: Self.manifest(bytes)
        }
    }

    private static func png(_ bytes: UnsafeRawBufferPointer) {
        for verdicts in pngVerdicts(bytes) {
            precondition(
                verdicts.whole.agrees(with: verdicts.streamed),
                "\(verdicts.mode): whole body \(verdicts.whole), streamed \(verdicts.streamed)")
        }
    }

    /// What one mode of `PNGValidator` says of a body, whole and streamed.
    struct PNGVerdicts {
        let mode: ValidationMode
        let whole: Result<ImageInfo, ItemError>
        let streamed: Result<ImageInfo, ItemError>
    }

    /// Both `--validate` modes on the whole body, and the streaming check of `verify` and `pack`
    /// on the same bytes fed in pieces whose size the first byte picks: the verdicts the fuzz
    /// target requires to agree, and the corpus replay test asserts.
    static func pngVerdicts(_ bytes: UnsafeRawBufferPointer) -> [PNGVerdicts] {
        let data = Data(bytes)
        return ValidationMode.allCases.map { mode in
            let validator = PNGValidator(mode: mode)
            let whole = Result { () throws(ItemError) in try validator.validate(data) }
            let check = PNGStreamCheck(validator)
            let piece = 1 + Int(bytes.first ?? 0) % 97
            var offset = 0
            while offset < bytes.count {
                let end = min(bytes.count, offset + piece)
                check.feed(UnsafeRawBufferPointer(rebasing: bytes[offset..<end]))
                offset = end
            }
            return PNGVerdicts(mode: mode, whole: whole, streamed: check.result())
        }
    }

    private static func image(_ bytes: UnsafeRawBufferPointer, _ format: ImageFormat) {
        let data = Data(bytes)
        let structure = try? ShimValidator(format, mode: .structure).validate(data)
        guard let full = try? ShimValidator(format, mode: .full).validate(data) else { return }
        precondition(structure == full, "full mode accepted what structure mode did not, or saw another size")
    }

    private static func catalog(_ bytes: UnsafeRawBufferPointer) {
        guard let catalog = try? Catalog(source: "fuzz", data: Data(bytes)) else { return }
        var reader = CatalogReader(catalog.records)
        for position in catalog.records.indices {
            let record = reader.record(position)
            precondition(record.id == catalog.records.id(at: position), "a record read back has another id")
            _ = record.url(for: .thumbnailUrl)
        }
    }

    private static func journal(_ bytes: UnsafeRawBufferPointer) {
        let line = bytes.bindMemory(to: UInt8.self)
        let peeked = JournalLine.peek(line)
        guard let record = JournalLine.decode(line) else { return }
        precondition(peeked?.id == record.id && peeked?.status == record.status, "peek disagrees with decode")
        var encoded = Array(JournalLine.encode(record).utf8)
        precondition(encoded.last == 0x0A, "an encoded line ends with its newline")
        encoded.removeLast()
        let again = encoded.withUnsafeBufferPointer(JournalLine.decode)
        precondition(again == record, "a decoded line does not survive its own encoding")
    }

    private static func csv(_ bytes: UnsafeRawBufferPointer) {
        // Swapping commas and tabs swaps the two formats' roles and nothing else.
        func swapped(_ byte: UInt8) -> UInt8 { byte == 0x2C ? 0x09 : byte == 0x09 ? 0x2C : byte }
        let commas = csvRecords(Data(bytes), .csv)
        let tabs = csvRecords(Data(bytes.map(swapped)), .tsv)
        precondition((commas == nil) == (tabs == nil), "CSV and TSV disagree on whether the text reads")
        guard let commas, let tabs else { return }
        precondition(commas.count == tabs.count, "CSV and TSV read different numbers of records")
        for (comma, tab) in zip(commas, tabs) {
            switch (comma.value, tab.value) {
            case (.integer(let a), .integer(let b)): precondition(a == b, "CSV and TSV read different ids")
            case (.string(let a), .string(let b)):
                precondition(a.utf8.map(swapped).elementsEqual(b.utf8), "CSV and TSV read different ids")
            default: preconditionFailure("CSV and TSV read an id as different kinds")
            }
        }
    }

    /// The ids of the records of `data` read as a catalog of `format`, each record read back; nil if refused.
    private static func csvRecords(_ data: Data, _ format: CatalogFormat) -> [RecordID]? {
        var options = CatalogOptions()
        options.format = format
        guard let catalog = try? Catalog(source: "fuzz", data: data, options: options) else { return nil }
        var reader = CatalogReader(catalog.records)
        var ids: [RecordID] = []
        for position in catalog.records.indices {
            let record = reader.record(position)
            precondition(record.id == catalog.records.id(at: position), "a record read back has another id")
            _ = record.url(for: .thumbnailUrl)
            ids.append(record.id)
        }
        return ids
    }

    private static func manifest(_ bytes: UnsafeRawBufferPointer) {
        let piece = 1 + Int(bytes.first ?? 0) % 61
        var items: [Manifest.Item] = []
        let header = try? readManifest(Array(bytes), piece: piece) { items.append($0) }
        // What was read (all of it, or the items before the manifest was refused) is written
        // again and must read back the same.
        let catalog = header?.catalog ?? Manifest.CatalogInfo(source: "fuzz", sha256: "", records: items.count)
        let field = header?.field ?? .url
        let version = header?.version ?? Manifest.currentVersion
        var encoded: [UInt8] = []
        ManifestEncoding.encode(catalog: catalog, field: field, version: version, items: items) { encoded += $0 }
        var again: [Manifest.Item] = []
        let reread: ManifestReader.Header
        do {
            reread = try readManifest(encoded, piece: 1 << 16) { again.append($0) }
        } catch {
            preconditionFailure("a manifest ManifestEncoding wrote does not read: \(error)")
        }
        precondition(again == items, "an item does not survive its own encoding")
        precondition(reread.catalog == catalog && reread.field == field && reread.version == version,
                     "the manifest's header does not survive its own encoding")
    }

    /// `ManifestReader` over `bytes`, handed over at most `piece` bytes a read.
    static func readManifest(
        _ bytes: [UInt8], piece: Int, item: (Manifest.Item) throws(BundleError) -> Void
    ) throws(BundleError) -> ManifestReader.Header {
        var offset = 0
        return try ManifestReader.read(source: "fuzz", pull: { (into) throws(Errno) in
            let n = min(into.count, piece, bytes.count - offset)
            if n > 0 {
                bytes.withUnsafeBytes { into.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[offset..<(offset + n)])) }
            }
            offset += n
            return n
        }, item: item)
    }
}

extension Result where Success == ImageInfo, Failure == ItemError {
    /// The same image, or a failure of the same kind (messages may name places differently).
    func agrees(with other: Self) -> Bool {
        switch (self, other) {
        case (.success(let a), .success(let b)): a == b
        case (.failure(let a), .failure(let b)): a.kind == b.kind
        default: false
        }
    }
}
