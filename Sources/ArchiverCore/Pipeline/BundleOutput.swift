#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation

/// `manifest.json` and the gallery, written while the run is under way: an item is written as
/// soon as it and every item before it (in id order) have an outcome. Jobs are queued in
/// catalog order, so outcomes arrive nearly in order, and the end of a run writes only the last
/// few items instead of all of them (the two were most of the time a run spent after its last
/// download).
///
/// The manifest goes to its temporary file as it is made, the gallery's item pages to theirs
/// (`GalleryWriter`); the failures pages and the front page, which count everything, are
/// written at the end. Nothing replaces an old file before `commit`, after the last outcome.
///
/// While the run is under way, a thread of its own writes the items every 20 ms at a low CPU
/// priority (`startWriting`): the transfers wait on the writer thread and libcurl's, so this
/// must never take a core from them (measured: at normal priority the run took 4% longer).
/// The manifest side is used only by that thread, then by the one that calls `commit`; the
/// gallery side only on `pageQueue` (where that thread, too, makes each item once for both),
/// so at the end the two are finished on two cores.
final class BundleOutput: @unchecked Sendable {
    // @unchecked: the manifest side has one thread at a time (above), the gallery side `pageQueue`.
    private let catalog: Catalog
    private let ledger: Ledger
    private let configuration: RunConfiguration
    private let layout: BundleLayout
    private let fileSystem: any FileSystem

    private let manifest: AtomicFileWriter
    private var manifestReader: CatalogReader
    private var manifestNext = 0
    private var manifestBytes: [UInt8]

    private let pageQueue = DispatchQueue(label: "archiver.page")
    private let stopRequested = DispatchSemaphore(value: 0)
    private let stopped = DispatchSemaphore(value: 0)
    private var writing = false
    private let gallery: GalleryWriter
    private var pageReader: CatalogReader

    init(
        catalog: Catalog, ledger: Ledger, configuration: RunConfiguration, layout: BundleLayout,
        fileSystem: any FileSystem = POSIXFileSystem()
    ) throws(FileSystemError) {
        self.catalog = catalog
        self.ledger = ledger
        self.configuration = configuration
        self.layout = layout
        self.fileSystem = fileSystem
        let records = catalog.records
        manifest = try AtomicFileWriter(path: layout.manifest.path, sync: configuration.durable, fileSystem: fileSystem)
        manifestBytes = ManifestEncoding.head(catalog: Manifest.CatalogInfo(catalog), field: configuration.field)
        manifestReader = CatalogReader(records)
        let byID = records.byID
        gallery = try GalleryWriter(
            layout: layout, source: catalog.source, count: records.count, sync: configuration.durable, fileSystem: fileSystem,
            id: { records.id(at: Int(byID[$0])) }, album: { records.entries[Int(byID[$0])].albumId })
        pageReader = CatalogReader(records)
    }

    /// Manifest items written so far (made and handed to the file, if perhaps still buffered).
    var manifestItemsWritten: Int { manifestNext }

    /// Starts writing the items that finish, at once and then every `interval`, on a thread at
    /// nice 10 (only that thread: Linux keeps a nice value per thread, and the thread ends with
    /// `stopWriting`).
    func startWriting(every interval: DispatchTimeInterval) {
        writing = true
        let thread = Thread { [self] in
            _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
            repeat {
                advance()
            } while stopRequested.wait(timeout: .now() + interval) == .timedOut
            stopped.signal()
        }
        thread.name = "archiver.output"
        thread.start()
    }

    /// Stops the writing thread and waits until it is gone; call it before `commit`.
    func stopWriting() {
        guard writing else { return }
        writing = false
        stopRequested.signal()
        stopped.wait()
    }

    /// Writes the items that have become ready since the last call. While the run is under way
    /// the two sides are at the same item, so each item is made once for both (making it, from
    /// the catalog and the ledger, was half of what the two cost).
    func advance() {
        pageQueue.sync {
            guard gallery.next == manifestNext else {
                advancePage(finishing: false)
                return advanceManifest(finishing: false)
            }
            forReady(catalog.records.byID, from: manifestNext, finishing: false) { position, snapshot in
                let item = item(at: position, snapshot, &pageReader)
                gallery.add(item)
                appendToManifest(item)
            }
        }
    }

    /// Writes every item not written yet (pending if it has no outcome), then puts the manifest
    /// and the gallery in place, each only if `shouldCommit` says so when it is made. `counts` are
    /// the items' statuses. Returns whether both were put in place.
    @discardableResult
    func commit(
        counts: [ItemRecord.Status: Int], if shouldCommit: @escaping () -> Bool = { true }
    ) throws(FileSystemError) -> Bool {
        let page = Locked<Result<Bool, FileSystemError>>(.success(false))
        let pageWork = DispatchWorkItem { [self] in
            let result = Result { () throws(FileSystemError) in try commitPage(counts: counts, if: shouldCommit) }
            page.withLock { $0 = result }
        }
        pageQueue.async(execute: pageWork)
        advanceManifest(finishing: true)
        manifestBytes += ManifestEncoding.tail(version: Manifest.currentVersion, items: manifestNext)
        manifest.append(manifestBytes)
        var manifestCommitted: Result<Bool, FileSystemError> = .success(false)
        if shouldCommit() {
            manifestCommitted = Result { () throws(FileSystemError) in try manifest.commit() }.map { true }
        }
        manifest.discard()  // unless it was put in place, the temporary file goes
        pageWork.wait()  // once only: libdispatch traps on a second wait
        let manifestDone = try manifestCommitted.get()
        let pageDone = try page.withLock { $0 }.get()
        return manifestDone && pageDone
    }

    /// The manifest item for the record at `position`, with its outcome if it has one.
    private func item(at position: Int, _ snapshot: Ledger.Snapshot, _ reader: inout CatalogReader) -> Manifest.Item {
        let field = configuration.field
        let record = reader.record(position, fields: [.title, .image(field)])
        return Manifest.item(
            for: record, field: field, outcome: ledger.outcome(snapshot, of: record, field: field),
            source: ledger.mirrors.address(of: record.url(for: field), at: position))
    }

    /// Calls `write` for each of `order`'s positions from `next` on that can be written now,
    /// with its outcome: those in a row that have one, or, when `finishing`, all that are left
    /// (the rest as pending). The outcomes are copied from the ledger a chunk at a time, so the
    /// lock is taken once per chunk and memory stays bounded.
    private func forReady(_ order: [Int32], from next: Int, finishing: Bool, _ write: (Int, Ledger.Snapshot) -> Void) {
        var next = next
        while next < order.count {
            let chunk = order[next..<min(next + 1024, order.count)]
            let snapshots = ledger.snapshots(chunk, all: finishing)
            for (position, snapshot) in zip(chunk, snapshots) { write(Int(position), snapshot) }
            next += snapshots.count
            if snapshots.count < chunk.count { return }
        }
    }

    private func advanceManifest(finishing: Bool) {
        forReady(catalog.records.byID, from: manifestNext, finishing: finishing) { position, snapshot in
            appendToManifest(item(at: position, snapshot, &manifestReader))
        }
    }

    private func appendToManifest(_ item: Manifest.Item) {
        ManifestEncoding.append(item, index: manifestNext, to: &manifestBytes)
        manifestNext += 1
        if manifestBytes.count >= 1 << 16 {
            manifest.append(manifestBytes)
            manifestBytes.removeAll(keepingCapacity: true)
        }
    }

    private func advancePage(finishing: Bool) {
        forReady(catalog.records.byID, from: gallery.next, finishing: finishing) { position, snapshot in
            gallery.add(item(at: position, snapshot, &pageReader))
        }
    }

    /// The failures pages make their items again, one by one from their indices: failures are few.
    private func commitPage(counts: [ItemRecord.Status: Int], if shouldCommit: () -> Bool) throws(FileSystemError) -> Bool {
        advancePage(finishing: true)
        let byID = catalog.records.byID
        return try gallery.commit(
            counts: counts,
            item: { index in item(at: Int(byID[index]), ledger.snapshots(byID[index...index], all: true)[0], &pageReader) },
            if: shouldCommit)
    }
}
