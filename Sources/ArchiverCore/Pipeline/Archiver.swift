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
/// The pipeline, wired in `run(catalog:)` as four phases, each a type of its own:
///
///     BundleOpening: --out checked (links, someone's own files), locked, leftovers removed,
///                    a restored bundle adopted, options claimed, journal read
///             ─▶ Planning: plan (replay journal, skip done, group by fetch URL, --mirror, --shard),
///                          superseded lines and rejections journaled
///             ─▶ FetchLoop, one serial owner of the fetch:
///                  host lanes (jobs read a bounded amount ahead, grouped by host; a free slot goes
///                              to the host whose next job comes first, within --per-host)
///                  ─▶ OperationQueue (≤ concurrency FetchOperations of ≤ 32 URLs of one host each;
///                                     one request in flight per operation)
///                       FetchOperation: fetch (retries, FetchStateMachine) [libcurl's thread]
///                  ◀─ hands back to the loop: RecordWriter validate (libpng), hash
///                       ─▶ store (tmpfile, link) ─▶ journal ─▶ ledger     [loop; work queue if --validate full]
///                  ─▶ the operation's next URL; when its last is journaled, the feed
///             ─▶ Publishing: manifest.json, gallery pages (items written as they finish, the files
///                            put in place at the end), compacted journal, the summary
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
        let bundle = try BundleOpening(configuration: config, fileSystem: fileSystem, log: log).open(for: catalog)
        defer { withExtendedLifetime(bundle.lock) {} }
        let planned = try Planning(configuration: config, log: log).plan(catalog, in: bundle)
        self.ledger.withLock { $0 = planned.ledger }
        let publishing = Publishing(
            catalog: catalog, configuration: config, bundle: bundle, planned: planned, fileSystem: fileSystem, log: log)
        let cancelled = fetch(catalog, planned, into: bundle.store, writing: publishing)
        return try publishing.publish(cancelled: cancelled, started: started)
    }

    /// The fetch phase: runs `planned`'s `FetchLoop` to its end, while `publishing` writes the
    /// items that finish; returns whether `cancel()` was called.
    private func fetch(_ catalog: Catalog, _ planned: PlannedRun, into store: KeyedStore, writing publishing: Publishing) -> Bool {
        let config = configuration
        let stages = PipelineStages(
            fetcher: fetcher,
            policy: FetchStateMachine.Policy(retries: config.retries, maxRetryAfter: config.maxRetryAfter, backoff: backoff),
            rateLimiter: config.rate.map { RateLimiter(rate: $0) },
            work: DispatchQueue(label: "archiver.work", attributes: .concurrent), hosts: HostWatch(say: log))
        let loop = FetchLoop(
            plan: planned.plan, records: catalog.records, stages: stages,
            writer: RecordWriter(
                journal: planned.journal, store: store, ledger: planned.ledger, validator: validator, durable: config.durable),
            ledger: planned.ledger, validator: validator, validateInParallel: config.validation == .full,
            concurrency: config.concurrency, perHost: config.perHost)
        let cancelledEarly = fetch.withLock { fetch in
            fetch.loop = loop
            return fetch.cancelled
        }
        if cancelledEarly { loop.cancel() }
        loop.start()
        publishing.startWriting()
        loop.wait()
        fetch.withLock { $0.loop = nil }
        publishing.stopWriting()
        return fetch.withLock { $0.cancelled }
    }
}
