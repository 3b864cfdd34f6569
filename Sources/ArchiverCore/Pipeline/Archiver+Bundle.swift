import Dispatch

extension Archiver {
    /// The last stage: `manifest.json`, with `index.html` written beside it on another core, and
    /// the journal compacted to one line per record when `compact` (a run that started from an
    /// empty journal wrote one line per record: nothing to compact).
    ///
    /// All three are streamed: each pass reads the catalog's records back in turn and joins them
    /// with the ledger's outcomes, so no list of items or records is ever held.
    /// `counts` are the items' statuses, as the ledger tallied them.
    func writeBundle(
        _ catalog: Catalog, ledger: Ledger, counts: [ItemRecord.Status: Int], layout: BundleLayout, compact: Bool
    ) throws(RunError) {
        let config = configuration
        let records = catalog.records
        func item(_ position: Int, _ reader: inout CatalogReader) -> (record: CatalogRecord, item: Manifest.Item) {
            let record = reader.record(position, fields: [.title, .image(config.field)])
            let outcome = ledger.outcome(at: position, of: record, field: config.field)
            return (record, Manifest.item(for: record, field: config.field, mirrors: config.mirrors, outcome: outcome))
        }

        // Every pass below reads records back after `run` checked the file: an edit in place
        // meanwhile would pair outcomes with other records' URLs (a compacted line vouching for
        // old bytes under a new URL), so each file is committed only if the catalog is unchanged.
        let unchanged = { () throws(ItemError) in
            if catalog.changedSinceLoad { throw .io("catalog \(catalog.source) changed during the run") }
        }
        let galleryError = Locked<String?>(nil)
        let gallery = DispatchWorkItem {
            var reader = CatalogReader(records)
            let contents = Gallery.Contents(
                source: catalog.source, counts: counts, albums: records.entries.map(\.albumId), id: records.id(at:))
            do {
                try Gallery.write(contents, in: layout, sync: config.durable, item: { item($0, &reader).item }, beforeCommit: unchanged)
            } catch {
                galleryError.withLock { $0 = "\(error)" }
            }
        }
        DispatchQueue.global().async(execute: gallery)
        var failure: RunError?
        do {
            var reader = CatalogReader(records)
            let items = records.byID.lazy.map { item(Int($0), &reader).item }
            try Manifest.write(
                catalog: Manifest.CatalogInfo(catalog), field: config.field, items: items, to: layout.manifest,
                sync: config.durable, beforeCommit: unchanged)
            if compact {
                try Journal.compact(
                    path: layout.journal.path, sync: config.durable,
                    produce: { emit in
                        for position in records.byID {
                            let record = reader.record(Int(position), fields: .image(config.field))
                            if let outcome = ledger.outcome(at: Int(position), of: record, field: config.field) { emit(outcome) }
                        }
                    }, beforeCommit: unchanged)
            }
        } catch {
            failure = .io(error.description)
        }
        gallery.wait()
        if catalog.changedSinceLoad { throw .catalog(.changedDuringRun(source: catalog.source)) }
        if let failure { throw failure }
        if let error = galleryError.withLock({ $0 }) { throw .io(error) }
    }
}
