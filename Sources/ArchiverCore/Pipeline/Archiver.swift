import Dispatch
import Foundation

/// The result of one `run`.
public struct RunSummary: Sendable {
    /// What this run did.
    public var progress: Progress
    /// Item counts in the manifest written at the end.
    var done = 0
    /// Items failed.
    public var failed = 0
    /// Items not attempted (only after an interruption).
    public var pending = 0
    /// Bytes of all done items' files.
    var bundleBytes: Int64 = 0
    /// Wall time of the run.
    var seconds: Double = 0
    /// Whether `cancel()` stopped the run before every job finished.
    public var interrupted = false
    /// Failed items counted by `error.kind`.
    var failuresByKind: [String: Int] = [:]
    /// Whether this was a `--refresh` run (`progress` then counts unchanged, changed and
    /// refresh-failed items).
    var refreshed = false
    /// Items of a restored bundle (a manifest and no journal) adopted as done without a request.
    var adopted = 0
}

/// Archives a catalog into a bundle directory. One instance serves one run.
///
/// The pipeline, wired in `run(catalog:)`:
///
///     catalog ─▶ plan (replay journal, skip done, group by fetch URL, --mirror, --shard)
///             ─▶ FetchLoop, one serial owner of the fetch:
///                  host lanes (jobs read a bounded amount ahead, grouped by host; a free slot goes
///                              to the host whose next job comes first, within --per-host)
///                  ─▶ OperationQueue (≤ concurrency FetchOperations of ≤ 32 URLs of one host each;
///                                     one request in flight per operation)
///                       FetchOperation: fetch (retries, FetchStateMachine) [libcurl's thread]
///                  ◀─ hands back to the loop: RecordWriter validate (libpng), hash
///                       ─▶ store (tmpfile, link) ─▶ journal ─▶ ledger     [loop; work queue if --validate full]
///                  ─▶ the operation's next URL; when its last is journaled, the feed
///             ─▶ manifest.json, gallery pages (items written as they finish, the files put in
///                place at the end), compacted journal
public final class Archiver: Sendable {
    /// The loop of the run under way, and whether `cancel()` was called (maybe before it).
    private struct Fetch {
        var loop: FetchLoop?
        var cancelled = false
    }

    let configuration: RunConfiguration
    private let fetcher: any Fetching
    private let validator: any ImageValidating
    let fileSystem: any FileSystem
    private let backoff: Backoff
    private let log: @Sendable (String) -> Void
    private let fetch = Locked(Fetch())
    private let ledger = Locked<Ledger?>(nil)
    /// Whether `run` was called: one instance serves one run.
    private let used = Locked(false)

    /// A coordinator for one run of `configuration`, fetching through `fetcher`; `log` gets the
    /// lines the run says besides its progress (resuming, adopting a bundle).
    public convenience init(
        configuration: RunConfiguration, fetcher: any Fetching, log: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.init(configuration: configuration, fetcher: fetcher, validator: nil, log: log)
    }

    /// With the seams tests replace: the validator, the file system and the backoff.
    init(
        configuration: RunConfiguration, fetcher: any Fetching, validator: (any ImageValidating)? = nil,
        fileSystem: any FileSystem = POSIXFileSystem(), backoff: Backoff = Backoff(),
        log: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.configuration = configuration
        self.fetcher = fetcher
        self.validator =
            validator ?? ImageValidator(
                mode: configuration.validation, maxDimension: configuration.maxDimension, accepted: configuration.accepted)
        self.fileSystem = fileSystem
        self.backoff = backoff
        self.log = log
    }

    /// Progress of the run under way.
    public var progress: Progress {
        ledger.withLock { $0?.progress } ?? Progress()
    }

    /// Stops starting work and cancels what is in flight; `run` then records what finished and returns.
    public func cancel() {
        fetch.withLock { fetch in
            fetch.cancelled = true
            return fetch.loop
        }?.cancel()
    }

    /// Runs the whole pipeline and blocks the calling thread until it is done or cancelled.
    /// Call it from a thread that is not a worker (the main thread of the command).
    public func run(catalog: Catalog) throws(RunError) -> RunSummary {
        guard used.withLock({ used in defer { used = true }; return !used }) else { throw .alreadyRun }
        let started = DispatchTime.now()
        let config = configuration
        // A record outside this shard is not part of the run: every stage sees only the shard's.
        let catalog = config.shard.map { catalog.shard($0, field: config.field) } ?? catalog
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
        defer { withExtendedLifetime(lock) {} }
        AtomicFileWriter.removeDebris(in: layout.root.path)
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
            records: catalog.records, mirrors: config.mirrors, previous: previous, kept: plan.kept,
            revalidating: plan.revalidating, total: plan.pendingRecords + plan.rejectedCount)
        let journal: Journal
        do {
            journal = try Journal(path: layout.journal.path, durable: config.durable, beforeCommit: store.syncDirectory)
            try journal.append(plan.invalidated)
            try plan.rejections(of: catalog.records) { batch, positions throws(FileSystemError) in
                try journal.append(batch)
                ledger.record(batch, at: Array(positions), bytes: 0)
            }
        } catch {
            throw .fileSystem(error)
        }
        self.ledger.withLock { $0 = ledger }
        let stages = PipelineStages(
            fetcher: fetcher,
            policy: FetchStateMachine.Policy(retries: config.retries, maxRetryAfter: config.maxRetryAfter, backoff: backoff),
            rateLimiter: config.rate.map { RateLimiter(rate: $0) },
            work: DispatchQueue(label: "archiver.work", attributes: .concurrent), hosts: HostWatch(say: log))
        let loop = FetchLoop(
            plan: plan, records: catalog.records, stages: stages,
            writer: RecordWriter(journal: journal, store: store, ledger: ledger, validator: validator, durable: config.durable),
            ledger: ledger, validator: validator, validateInParallel: config.validation == .full,
            concurrency: config.concurrency, perHost: config.perHost)
        let cancelledEarly = fetch.withLock { fetch in
            fetch.loop = loop
            return fetch.cancelled
        }
        if cancelledEarly { loop.cancel() }
        loop.start()
        // While the jobs run, the items that have finished are written to the manifest and pages
        // (if this cannot start, `writeBundle` tries again at the end and reports why). Not in a
        // refresh: it mostly finds nothing changed, and then writing the whole manifest and
        // gallery to throw them away cost as much as the 304s; if something changed, they are
        // written at the end.
        let output = plan.jobCount > 0 && !config.refresh
            ? try? BundleOutput(catalog: catalog, ledger: ledger, configuration: config, layout: layout, fileSystem: fileSystem) : nil
        output?.startWriting(every: .milliseconds(20))
        loop.wait()
        fetch.withLock { $0.loop = nil }
        output?.stopWriting()

        if catalog.changedSinceLoad {
            throw .catalog(.changedDuringRun(source: catalog.source))
        }
        let tally = ledger.tally()
        let recorded = ledger.progress.done + ledger.progress.failed
        let interrupted = fetch.withLock { $0.cancelled } && recorded < ledger.progress.total
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
        summary.adopted = adoption
        return summary
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
