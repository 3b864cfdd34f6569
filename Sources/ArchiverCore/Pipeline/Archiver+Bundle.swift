import Dispatch

extension Archiver {
    /// The last stage: `manifest.json` and the gallery finished and put in place (`output`, if
    /// the run wrote items as they finished; otherwise all of them now), and the journal
    /// compacted to one line per record when `compact` (a run that started from an empty journal
    /// wrote one line per record: nothing to compact).
    ///
    /// All are streamed: each pass reads the catalog's records back in turn and joins them with
    /// the ledger's outcomes, so no list of items or records is ever held.
    /// `counts` are the items' statuses, as the ledger tallied them.
    func writeBundle(
        _ catalog: Catalog, ledger: Ledger, counts: [ItemRecord.Status: Int], layout: BundleLayout, compact: Bool,
        output: BundleOutput?
    ) throws(RunError) {
        let config = configuration
        let records = catalog.records
        // Every pass reads records back after `run` checked the file: an edit in place meanwhile
        // would pair outcomes with other records' URLs (a compacted line vouching for old bytes
        // under a new URL), so each file is committed only if the catalog is unchanged.
        let unchanged = { !catalog.changedSinceLoad }
        var failure: RunError?
        do throws(FileSystemError) {
            let bundle: BundleOutput
            if let output {
                bundle = output
            } else {
                bundle = try BundleOutput(catalog: catalog, ledger: ledger, configuration: config, layout: layout, fileSystem: fileSystem)
            }
            if try bundle.commit(counts: counts, if: unchanged), compact {
                var reader = CatalogReader(records)
                try Journal.compact(
                    path: layout.journal.path, sync: config.durable,
                    produce: { emit in
                        for position in records.byID {
                            let record = reader.record(Int(position), fields: .image(config.field))
                            if let outcome = ledger.outcome(at: Int(position), of: record, field: config.field) { emit(outcome) }
                        }
                    }, if: unchanged)
            }
        } catch {
            failure = .fileSystem(error)
        }
        if catalog.changedSinceLoad { throw .catalog(.changedDuringRun(source: catalog.source)) }
        if let failure { throw failure }
    }
}
