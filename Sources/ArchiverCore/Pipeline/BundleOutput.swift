import Dispatch
import Synchronization

/// `manifest.json` and `index.html`, written while the run is under way: an item is written as
/// soon as it and every item before it (in that file's order) have an outcome. Jobs are queued
/// in catalog order, so outcomes arrive nearly in order, and the end of a run writes only the
/// last few items instead of all of them (the two files were most of the time a run spent after
/// its last download).
///
/// The manifest goes to its temporary file as it is made. The page's rows go to a scratch file;
/// its head, which counts the items, is written last, with the rows copied after it. Neither
/// file replaces the old one before `commit`, after the last outcome.
///
/// The manifest side is used only by the thread that calls `advance` and `commit` (the run's);
/// the page side only on `pageQueue`, so the two are made on two cores.
final class BundleOutput: @unchecked Sendable {
    private let catalog: Catalog
    private let ledger: Ledger
    private let configuration: RunConfiguration
    private let layout: BundleLayout

    private let manifest: AtomicFileWriter
    private var manifestReader: CatalogReader
    private var manifestNext = 0
    private var manifestBytes: [UInt8]

    private let pageQueue = DispatchQueue(label: "archiver.page")
    private let pageBusy = Atomic(false)
    private let rows: ScratchFile
    private var body: Gallery.Body
    private var pageReader: CatalogReader

    init(catalog: Catalog, ledger: Ledger, configuration: RunConfiguration, layout: BundleLayout) throws(ItemError) {
        self.catalog = catalog
        self.ledger = ledger
        self.configuration = configuration
        self.layout = layout
        let records = catalog.records
        manifest = try AtomicFileWriter(path: layout.manifest.path, sync: configuration.durable)
        manifestBytes = ManifestEncoding.head(catalog: Manifest.CatalogInfo(catalog), field: configuration.field)
        manifestReader = CatalogReader(records)
        rows = try ScratchFile(directory: layout.root.path)
        body = Gallery.Body(
            Gallery.Contents(source: catalog.source, counts: [:], albums: records.entries.map(\.albumId), id: records.id(at:)))
        pageReader = CatalogReader(records)
    }

    /// Manifest items written so far (made and handed to the file, if perhaps still buffered).
    var manifestItemsWritten: Int { manifestNext }

    /// Writes the items that have become ready since the last call; the page's on another core.
    func advance() {
        if pageBusy.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged {
            pageQueue.async { [self] in
                advancePage(finishing: false)
                pageBusy.store(false, ordering: .releasing)
            }
        }
        advanceManifest(finishing: false)
    }

    /// Writes every item not written yet (pending if it has no outcome), then puts both files in
    /// place, each only if `beforeCommit` does not throw. `counts` are the items' statuses.
    func commit(
        counts: [ItemRecord.Status: Int], beforeCommit: @escaping () throws(ItemError) -> Void
    ) throws(ItemError) {
        let pageError = Locked<ItemError?>(nil)
        let page = DispatchWorkItem { [self] in
            do throws(ItemError) {
                try commitPage(counts: counts, beforeCommit: beforeCommit)
            } catch {
                pageError.withLock { $0 = error }
            }
        }
        pageQueue.async(execute: page)
        var manifestError: ItemError?
        do throws(ItemError) {
            advanceManifest(finishing: true)
            manifestBytes += ManifestEncoding.tail(version: Manifest.currentVersion, items: manifestNext)
            manifest.append(manifestBytes)
            try beforeCommit()
            try manifest.commit()
        } catch {
            manifest.discard()
            manifestError = error
        }
        page.wait()  // once only: libdispatch traps on a second wait
        if let error = manifestError ?? pageError.withLock({ $0 }) { throw error }
    }

    /// The manifest item for the record at `position`, with its outcome if it has one.
    private func item(at position: Int, _ reader: inout CatalogReader) -> Manifest.Item {
        let field = configuration.field
        let record = reader.record(position, fields: [.title, .image(field)])
        return Manifest.item(
            for: record, field: field, mirrors: configuration.mirrors,
            outcome: ledger.outcome(at: position, of: record, field: field))
    }

    private func advanceManifest(finishing: Bool) {
        let order = catalog.records.byID
        let ready = finishing ? order.count - manifestNext : ledger.recordedPrefix(order[manifestNext...])
        for _ in 0..<ready {
            ManifestEncoding.append(item(at: Int(order[manifestNext]), &manifestReader), index: manifestNext, to: &manifestBytes)
            manifestNext += 1
            if manifestBytes.count >= 1 << 16 {
                manifest.append(manifestBytes)
                manifestBytes.removeAll(keepingCapacity: true)
            }
        }
    }

    private func advancePage(finishing: Bool) {
        let order = body.contents.order
        let ready = finishing ? order.count - body.next : ledger.recordedPrefix(order[body.next...])
        for _ in 0..<ready {
            body.add(item(at: body.nextRef!, &pageReader))
            if body.bytes.count >= 1 << 16 { rows.append(body.take()) }
        }
    }

    private func commitPage(counts: [ItemRecord.Status: Int], beforeCommit: () throws(ItemError) -> Void) throws(ItemError) {
        advancePage(finishing: true)
        body.finish()
        rows.append(body.take())
        let page = try AtomicFileWriter(path: layout.gallery.path, sync: configuration.durable)
        page.append(Gallery.head(body.contents, counts: counts))
        page.append(rows)
        try beforeCommit()
        try page.commit()
    }
}
