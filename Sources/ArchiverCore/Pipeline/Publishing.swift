import Dispatch

/// The last phase of a run: `manifest.json`, the gallery and the compacted journal, made from
/// the ledger, and the run's summary. The items are written as they finish while the fetch runs
/// (`startWriting`), and the files put in place by `publish`, after it.
final class Publishing {
    private let catalog: Catalog
    private let configuration: RunConfiguration
    private let bundle: OpenedBundle
    private let planned: PlannedRun
    private let fileSystem: any FileSystem
    /// Gets the lines publishing says (records not refreshed).
    private let log: @Sendable (String) -> Void
    private var output: BundleOutput?

    init(
        catalog: Catalog, configuration: RunConfiguration, bundle: OpenedBundle, planned: PlannedRun,
        fileSystem: any FileSystem, log: @escaping @Sendable (String) -> Void
    ) {
        self.catalog = catalog
        self.configuration = configuration
        self.bundle = bundle
        self.planned = planned
        self.fileSystem = fileSystem
        self.log = log
    }

    /// Starts writing the items that have finished to the manifest and pages, while the fetch
    /// runs (if this cannot start, `publish` tries again at the end and reports why). Not in a
    /// refresh: it mostly finds nothing changed, and then writing the whole manifest and gallery
    /// to throw them away cost as much as the 304s; if something changed, they are written at the end.
    func startWriting() {
        let config = configuration
        output = planned.plan.jobCount > 0 && !config.refresh
            ? try? BundleOutput(
                catalog: catalog, ledger: planned.ledger, configuration: config, layout: bundle.layout, fileSystem: fileSystem)
            : nil
        output?.startWriting(every: .milliseconds(20))
    }

    /// Stops the writing `startWriting` began and waits until it is done; call it when the fetch is over.
    func stopWriting() {
        output?.stopWriting()
    }

    /// Puts the manifest, the gallery and the compacted journal in place (unless the bundle
    /// already holds what they would be) and returns the summary of the run that began at
    /// `started`; `cancelled` is whether the run was asked to stop.
    func publish(cancelled: Bool, started: DispatchTime) throws(RunError) -> RunSummary {
        let config = configuration
        let ledger = planned.ledger
        let plan = planned.plan
        let previous = bundle.previous
        let layout = bundle.layout
        if catalog.changedSinceLoad {
            throw .catalog(.changedDuringRun(source: catalog.source))
        }
        let tally = ledger.tally()
        let recorded = ledger.progress.done + ledger.progress.failed
        let interrupted = cancelled && recorded < ledger.progress.total
        // Nothing new journaled, nothing superseded, every record kept (or revalidated as it was):
        // the journal is already compact, and if the bundle's files are the ones the last
        // completed run wrote, they are already right.
        let standing = plan.keptCount + plan.revalidating.count
        let unchanged = ledger.linesRecorded == 0 && plan.invalidated.isEmpty && standing == catalog.records.count
            && previous.lineCount == previous.count && previous.count == standing
        let written = BundleStamp(catalog: catalog, field: config.field, layout: layout)
        if !(unchanged && written != nil && written == BundleStamp.read(layout)) {
            let counts: [ItemRecord.Status: Int] = [
                .done: tally.done, .failed: tally.failed, .pending: catalog.records.count - tally.done - tally.failed,
            ]
            try writeBundle(
                catalog, ledger: ledger, counts: counts, layout: layout,
                compact: !interrupted && previous.lineCount > 0 && !unchanged, output: output)
            if !interrupted { BundleStamp(catalog: catalog, field: config.field, layout: layout)?.write(layout) }
        }
        for (id, error) in ledger.refreshFailures(limit: 5) {
            log("\(id): not refreshed, the old image is kept: \(error.message)")
        }
        if ledger.progress.refreshFailed > 5 { log("... and \(ledger.progress.refreshFailed - 5) more not refreshed") }
        var summary = summarize(catalog, ledger: ledger, tally: tally, started: started, interrupted: interrupted)
        summary.adopted = bundle.adopted
        return summary
    }

    /// `manifest.json` and the gallery finished and put in place (`output`, if the run wrote
    /// items as they finished; otherwise all of them now), and the journal compacted to one line
    /// per record when `compact` (a run that started from an empty journal wrote one line per
    /// record: nothing to compact).
    ///
    /// All are streamed: each pass reads the catalog's records back in turn and joins them with
    /// the ledger's outcomes, so no list of items or records is ever held.
    /// `counts` are the items' statuses, as the ledger tallied them.
    private func writeBundle(
        _ catalog: Catalog, ledger: Ledger, counts: [ItemRecord.Status: Int], layout: BundleLayout, compact: Bool,
        output: BundleOutput?
    ) throws(RunError) {
        let config = configuration
        let records = catalog.records
        // Every pass reads records back after `publish` checked the file: an edit in place meanwhile
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

    /// Counts what the manifest says, from the ledger: an outcome counts only for the URL the
    /// catalog has now (the ledger keeps no other); anything else is pending.
    private func summarize(
        _ catalog: Catalog, ledger: Ledger, tally: Ledger.Tally, started: DispatchTime, interrupted: Bool
    ) -> RunSummary {
        var summary = RunSummary(progress: ledger.progress, interrupted: interrupted)
        summary.done = tally.done
        summary.failed = tally.failed
        summary.pending = catalog.records.count - tally.done - tally.failed
        summary.bundleBytes = tally.bytes
        summary.failuresByKind = tally.failuresByKind
        summary.refreshed = configuration.refresh
        summary.seconds = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9
        return summary
    }
}
