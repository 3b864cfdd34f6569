/// What planning hands the fetch: the plan, the ledger that will hold every outcome, and the
/// journal open for appending, with what the plan settles before any request already in it.
struct PlannedRun {
    let plan: Plan
    let ledger: Ledger
    let journal: Journal
}

/// The second phase of a run: the plan made from the catalog and the opened bundle's journal
/// (done records whose file is intact are skipped), the resume or refresh line said, `--prune`
/// applied, and before anything is fetched, the superseded done lines and the rejections journaled.
struct Planning {
    let configuration: RunConfiguration
    /// Gets the lines planning says (resuming, refreshing).
    let log: @Sendable (String) -> Void

    /// Plans the run of `catalog` (already cut to the run's shard) into `bundle`.
    func plan(_ catalog: Catalog, in bundle: OpenedBundle) throws(RunError) -> PlannedRun {
        let config = configuration
        let layout = bundle.layout
        let store = bundle.store
        let previous = bundle.previous
        let check = ResumeCheck(images: OpenDirectory(path: layout.images.path), recheck: config.recheck)
        let plan = Plan(
            catalog: catalog, field: config.field, mirrors: config.mirrors, journal: previous,
            skipFailed: config.skipFailed, refresh: config.refresh, intact: check.isIntact)
        if config.refresh {
            log("refreshing: \(plan.revalidating.count) done to revalidate, \(plan.pendingRecords - plan.revalidating.count) to fetch")
        } else if !previous.isEmpty {
            let failed = config.skipFailed
                ? "\(plan.keptCount - plan.keptDone) failed (kept: --skip-failed)"
                : "\(plan.retryingFailures) failed" + (plan.retryingFailures > 0 ? " (trying again)" : "")
            log("resuming: \(plan.keptDone) done, \(failed), \(plan.pendingRecords) to go")
        }
        if config.prune {
            let records = catalog.records
            var hashed: Set<String>?
            store.prune { stem, format in
                if let text = RecordKey.id(fromStem: stem) {
                    let id = RecordID(text)
                    guard records.position(ofID: id) != nil else { return false }
                    // A record's file in another format than its done line names is left over.
                    guard let done = previous.record(for: id), done.status == .done else { return true }
                    return done.format == format
                }
                if hashed == nil { hashed = records.hashedStems() }
                return hashed!.contains(stem)
            }
        }

        let ledger = Ledger(
            records: catalog.records, mirrors: plan.mirrors, previous: previous, kept: plan.kept,
            revalidating: plan.revalidating, total: plan.pendingRecords + plan.rejectedCount)
        let journal: Journal
        do {
            journal = try Journal(path: layout.journal.path, durable: config.durable, beforeCommit: store.syncDirectory)
            try plan.invalidations(of: catalog.records) { batch throws(FileSystemError) in try journal.append(batch) }
            try plan.rejections(of: catalog.records) { batch, positions throws(FileSystemError) in
                try journal.append(batch)
                ledger.record(batch, at: Array(positions), bytes: 0)
            }
        } catch {
            throw .fileSystem(error)
        }
        return PlannedRun(plan: plan, ledger: ledger, journal: journal)
    }
}
