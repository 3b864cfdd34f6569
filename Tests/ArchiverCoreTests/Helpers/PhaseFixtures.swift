import Foundation
@testable import ArchiverCore

/// Building blocks for the run's phases tested one at a time: a bundle opened and planned as
/// `run` does it, and journal lines with their files.
enum PhaseFixtures {
    /// The default configuration, writing into `out`.
    static func configuration(_ out: URL) -> RunConfiguration {
        var config = RunConfiguration()
        config.outputDirectory = out
        return config
    }

    /// `catalog` opened and planned into `config.outputDirectory`; `log` gets planning's lines.
    static func plan(
        _ catalog: Catalog, _ config: RunConfiguration, log: @escaping @Sendable (String) -> Void = { _ in }
    ) throws -> (bundle: OpenedBundle, planned: PlannedRun) {
        let bundle = try BundleOpening(configuration: config, fileSystem: POSIXFileSystem(), log: { _ in }).open(for: catalog)
        return (bundle, try Planning(configuration: config, log: log).plan(catalog, in: bundle))
    }

    /// A done line for `record`, with a file of `bytes` bytes put in `layout`'s `images/`.
    static func done(_ record: CatalogRecord, in layout: BundleLayout, bytes: Int = 10) throws -> ItemRecord {
        let data = Data(repeating: 7, count: bytes)
        try FileManager.default.createDirectory(at: layout.images, withIntermediateDirectories: true)
        try data.write(to: layout.images.appendingPathComponent(KeyedStore.fileName(for: record.id, format: .png)!))
        return ItemRecord(
            id: record.id, url: record.url, source: record.url, status: .done, bytes: Int64(bytes), sha256: SHA256Digest.of(data),
            width: 1, height: 1, attempts: 1)
    }

    /// A failed line for `record`, as a 404 leaves it.
    static func failed(_ record: CatalogRecord) -> ItemRecord {
        ItemRecord(
            id: record.id, url: record.url, source: record.url, status: .failed, attempts: 1,
            error: RecordedError(kind: "http-status", status: 404, message: "HTTP 404"))
    }

    /// Appends `lines` to `layout`'s journal, making `.archiver/` if needed.
    static func journal(_ lines: [ItemRecord], in layout: BundleLayout) throws {
        try FileManager.default.createDirectory(at: layout.state, withIntermediateDirectories: true)
        try Journal(path: layout.journal.path).append(lines)
    }
}
