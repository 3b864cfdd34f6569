/// A bundle directory a run holds: locked, cleaned of leftovers, adopted if it was restored, its
/// options claimed, the image store ready and the journal read. The lock is held while this lives.
struct OpenedBundle {
    let layout: BundleLayout
    let lock: BundleLock
    let store: KeyedStore
    /// What earlier runs journaled (adopted items included).
    let previous: JournalIndex
    /// Done items of a restored bundle adopted without a request (0 if none).
    let adopted: Int
}

/// The first phase of a run: opens `--out` for it, refusing what must not be written to.
///
/// In order: the open-file limit, a link in the bundle's places, a directory of someone's own
/// files, the state directory, the lock (another run holds it), the leftovers of a killed run,
/// adopting a restored bundle, the recorded options (a rerun with other ones), the image store
/// and the journal. Nothing in the directory is touched before the first three pass.
struct BundleOpening {
    let configuration: RunConfiguration
    let fileSystem: any FileSystem
    /// Gets the lines opening says (adopting a bundle).
    let log: @Sendable (String) -> Void

    /// Opens the bundle for a run of `catalog` (already cut to the run's shard).
    func open(for catalog: Catalog) throws(RunError) -> OpenedBundle {
        let config = configuration
        let layout = BundleLayout(root: config.outputDirectory)
        do { try OpenFileLimit.raise(for: config.concurrency) } catch { throw .openFileLimit(error) }
        if let unsafe = layout.unsafePlace() {
            throw .unsafeBundle(path: unsafe.path, found: unsafe.found, expected: unsafe.expected)
        }
        try layout.refuseForeignDirectory()
        try layout.createStateDirectory()
        let lock: BundleLock
        do {
            lock = try BundleLock(path: layout.lock.path)
        } catch {
            switch error {
            case .unopenable(let error): throw .fileSystem(error)
            case .held(let directory, let pid): throw .locked(directory: directory, pid: pid)
            }
        }
        AtomicFileWriter.removeDebris(in: layout.root.path, followingLink: true)
        AtomicFileWriter.removeDebris(in: layout.state.path)
        AtomicFileWriter.removeDebris(in: layout.pages.path)
        let adoption = try BundleAdoption.adopt(
            layout: layout, field: config.field, shard: config.shard?.description, durable: config.durable, log: log)
        try RunOptions(
            catalog: catalog.source, field: config.field, records: catalog.records.count, shard: config.shard?.description,
            idKey: config.catalog.idKey == "id" ? nil : config.catalog.idKey,
            pointer: config.catalog.records.isEmpty ? nil : config.catalog.records
        ).claim(layout)

        let store = KeyedStore(directory: layout.images, fileSystem: fileSystem, durable: config.durable)
        do { try store.prepare() } catch { throw .fileSystem(error) }
        let previous = JournalIndex(path: layout.journal.path)
        return OpenedBundle(layout: layout, lock: lock, store: store, previous: previous, adopted: adoption)
    }
}
