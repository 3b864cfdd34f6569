import Dispatch

extension Archiver {
    /// The last stage: `manifest.json`, with `index.html` written beside it on another core, and
    /// the journal compacted to one line per record when `compact` (a run that started from an
    /// empty journal wrote one line per record: nothing to compact).
    func writeBundle(
        _ manifest: Manifest, outcomes: [Int: ItemRecord], layout: BundleLayout, compact: Bool
    ) throws(RunError) {
        let durable = configuration.durable
        let galleryError = Locked<String?>(nil)
        let gallery = DispatchWorkItem {
            do { try Gallery.write(for: manifest, in: layout, sync: durable) } catch { galleryError.withLock { $0 = "\(error)" } }
        }
        DispatchQueue.global().async(execute: gallery)
        var failure: RunError?
        do {
            try manifest.write(to: layout.manifest, sync: durable)
            if compact {
                let current = manifest.items.compactMap { outcomes[$0.id] }
                try Journal.compact(path: layout.journal.path, records: current, sync: durable)
            }
        } catch {
            failure = .io(error.description)
        }
        gallery.wait()
        if let failure { throw failure }
        if let error = galleryError.withLock({ $0 }) { throw .io(error) }
    }
}
