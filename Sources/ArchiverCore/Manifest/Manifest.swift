import Foundation

/// `manifest.json`: what the bundle holds, item by item. Sorted keys, items sorted by id
/// (`RecordID`'s order: integers numerically, then strings by their UTF-8 bytes), and
/// nothing that changes from run to run (no times, durations or host names), so the same
/// catalog archived twice from the same server gives the same bytes.
struct Manifest: Sendable, Codable, Equatable {
    /// Which catalog the bundle was made from, and how many records it had.
    struct CatalogInfo: Sendable, Codable, Equatable {
        var source: String
        var sha256: String
        var records: Int
        /// Present only in a shard's bundle: which shard it is (`records` is the whole catalog's).
        var shard: ShardInfo?

        init(_ catalog: Catalog) {
            self.init(
                source: catalog.source, sha256: catalog.sha256,
                records: catalog.sharding?.catalogRecords ?? catalog.records.count)
            shard = catalog.sharding.map { ShardInfo(shard: $0.shard, records: catalog.records.count) }
        }

        init(source: String, sha256: String, records: Int) {
            self.source = source
            self.sha256 = sha256
            self.records = records
        }
    }

    /// One catalog record and its outcome; `path` and the file facts are present only when done, `error` only when failed.
    struct Item: Sendable, Codable, Equatable {
        /// A JSON number for an integer id, a JSON string for a string id.
        var id: RecordID
        var albumId: Int
        var title: String
        /// The catalog's URL, and the one fetched (after `--mirror`).
        var url: String
        var source: String
        var status: ItemRecord.Status
        /// Relative to the bundle's root: `images/<key>.png` (`.jpg`, `.webp`, `.gif` by format).
        var path: String?
        /// The done file's format, as its bytes said.
        var format: ImageFormat?
        /// Frames of an animated done file; absent for a still image.
        var frames: Int?
        var bytes: Int64?
        var sha256: String?
        var width: Int?
        var height: Int?
        var attempts: Int
        var error: RecordedError?
        /// The validators the done file was served with, each only when the server sent it.
        var etag: String?
        var lastModified: String?
    }

    var version = Manifest.currentVersion
    var catalog: CatalogInfo
    var field: ImageField
    var items: [Item]

    /// Builds the manifest from the catalog and each record's outcome (missing = pending).
    /// A manifest as read back: its members and items as they stand.
    init(catalog: CatalogInfo, field: ImageField, items: [Item], version: Int = Manifest.currentVersion) {
        self.catalog = catalog
        self.field = field
        self.items = items
        self.version = version
    }

    init(catalog: Catalog, field: ImageField, mirrors: MirrorMap, outcomes: [RecordID: ItemRecord]) {
        self.catalog = CatalogInfo(catalog)
        self.field = field
        self.items = catalog.records.sorted { $0.id < $1.id }.map { record in
            Self.item(for: record, field: field, outcome: outcomes[record.id], source: mirrors.resolve(record.url(for: field)))
        }
    }

    /// The manifest item for a record: its outcome if it has one for the URL it has now,
    /// otherwise pending, from `source` (the URL it would be fetched from: made only then).
    static func item(
        for record: CatalogRecord, field: ImageField, outcome: ItemRecord?, source: @autoclosure () -> String
    ) -> Item {
        let url = record.url(for: field)
        let outcome = outcome.flatMap { $0.url.hasSameBytes(as: url) ? $0 : nil }
        var item = Item(
            id: record.id, albumId: record.albumId, title: record.title, url: url,
            source: outcome?.source ?? source(), status: outcome?.status ?? .pending,
            attempts: outcome?.attempts ?? 0)
        if let outcome, outcome.status == .done {
            item.path = KeyedStore.relativePath(for: record.id, format: outcome.format)
            item.format = outcome.format
            item.frames = outcome.frames == 1 ? nil : outcome.frames
            item.bytes = outcome.bytes
            item.sha256 = outcome.sha256?.hex
            item.width = outcome.width
            item.height = outcome.height
            item.etag = outcome.validators.etag
            item.lastModified = outcome.validators.lastModified
        }
        item.error = outcome?.status == .failed ? outcome?.error : nil
        return item
    }

    /// The manifest's canonical bytes (see `ManifestEncoding`).
    func encoded() -> Data {
        Data(ManifestEncoding.encode(self))
    }

    /// Writes the manifest atomically, streaming it to disk; with `sync`, durably.
    func write(to url: URL, sync: Bool = false) throws(FileSystemError) {
        try Self.write(catalog: catalog, field: field, items: items, to: url, sync: sync)
    }

    /// Writes a manifest whose items (in id order) are made as they are written, so a run
    /// never holds them all.
    static func write(
        catalog: CatalogInfo, field: ImageField, items: some Sequence<Item>, to url: URL, sync: Bool
    ) throws(FileSystemError) {
        let writer = try AtomicFileWriter(path: url.path, sync: sync)
        ManifestEncoding.encode(catalog: catalog, field: field, version: Self.currentVersion, items: items) {
            writer.append($0)
        }
        try writer.commit()
    }

    static let currentVersion = 1

    /// Reads a manifest written by `write(to:)`.
    static func read(from url: URL) throws -> Manifest {
        try JSONDecoder().decode(Manifest.self, from: Data(contentsOf: url))
    }
}
