import Dispatch
import Foundation

/// What every fetch operation shares: the fetcher, the writer its outcomes go to, and how to retry.
struct PipelineStages: Sendable {
    let fetcher: any Fetching
    let writer: RecordWriter
    let ledger: Ledger
    let backoff: Backoff
    /// Attempts after the first for a failure that may clear up.
    let retries: Int
    /// The longest `Retry-After`, in seconds, worth waiting for; a longer one fails the URL.
    let maxRetryAfter: Double
    let rateLimiter: RateLimiter?
    /// Concurrent: timers between attempts.
    let work: DispatchQueue
    /// Hosts that never answered and failed to connect too often: their URLs fail at once.
    let hosts: HostWatch
}

/// One job on the queue: a run of distinct URLs, fetched one after another. For each, it fetches
/// the URL (retrying what may succeed) and delivers the body, or the failure, to the writer,
/// which validates, stores and journals.
///
/// Asynchronous: it holds a queue slot, never a thread, and has at most one request in flight,
/// so the queue's `maxConcurrentOperationCount` is the number of requests in flight. When a
/// body arrives, the next URL's request starts at once, from the thread that delivered the body,
/// as long as at most two earlier URLs of this job are still waiting for their journal lines: so
/// at most 3 URLs per slot are between request and journal, which bounds what a SIGKILL makes
/// the next run redo to 3 x concurrency requests. (With one, the writer itself started most next
/// requests, after their journal lines, on the thread the run waits on: bench/README.md.) Running many URLs per operation spares a thread
/// hand-off per image (an operation starting on a queue thread wakes one). The operation
/// finishes once its last URL is journaled; `onFinish` then tells the coordinator (on the writer).
final class FetchOperation: Operation, @unchecked Sendable {
    /// Where the lane's current URL is. Every change happens under the lock, and whoever moves
    /// it out of `waiting` owns what comes next, so a cancel and a timer cannot both act.
    private enum Phase {
        /// No URL under way: the next may start.
        case idle
        /// A URL is under way between steps (deciding, or about to send).
        case busy
        case sending(index: Int, attempt: Int)
        case inFlight(task: any FetchTask)
        /// Waiting for a retry or the rate limiter.
        case waiting
    }

    private struct State {
        var phase = Phase.idle
        var current = 0
        var next = 0
        /// URLs whose request is over and whose records are not journaled yet.
        var unjournaled = 0
        var cancelled = false
        var executing = false
        var finishing = false
        var finished = false
    }

    private let jobs: [FetchJob]
    private let stages: PipelineStages
    private let onFinish: @Sendable () -> Void
    private let state = Locked(State())

    init(jobs: [FetchJob], stages: PipelineStages, onFinish: @escaping @Sendable () -> Void) {
        self.jobs = jobs
        self.stages = stages
        self.onFinish = onFinish
    }

    override var isAsynchronous: Bool { true }
    override var isExecuting: Bool { state.withLock { $0.executing } }
    override var isFinished: Bool { state.withLock { $0.finished } }

    override func start() {
        if isCancelled { state.withLock { $0.cancelled = true } }
        willChangeValue(forKey: "isExecuting")
        state.withLock { $0.executing = true }
        didChangeValue(forKey: "isExecuting")
        advance()
    }

    override func cancel() {
        super.cancel()
        enum Action { case none, cancelTask(any FetchTask), abandon(Int), advance }
        let action: Action = state.withLock { state in
            state.cancelled = true
            switch state.phase {
            case .inFlight(let task): return .cancelTask(task)
            case .waiting:
                state.phase = .busy
                return .abandon(state.current)
            case .idle: return .advance
            default: return .none  // `send` and `attempt` check `cancelled` themselves
            }
        }
        switch action {
        case .none: break
        case .cancelTask(let task): task.cancel()
        case .abandon(let index): requestOver(index, recorded: false)
        case .advance: advance()
        }
    }

    private var cancelled: Bool { state.withLock { $0.cancelled } }

    /// Starts the next URL if the lane is free and allowed to, or finishes the operation once
    /// every URL it started is journaled and there is nothing more to start.
    private func advance() {
        enum Step { case none, start(Int), finish }
        let step: Step = state.withLock { state in
            guard state.executing, !state.finishing, case .idle = state.phase else { return .none }
            if state.cancelled || state.next >= jobs.count {
                guard state.unjournaled == 0 else { return .none }
                state.finishing = true
                return .finish
            }
            guard state.unjournaled <= 2 else { return .none }
            state.current = state.next
            state.next += 1
            state.phase = .busy
            return .start(state.current)
        }
        switch step {
        case .none: break
        case .start(let index): attempt(index, 1)
        case .finish: finish()
        }
    }

    private func finish() {
        willChangeValue(forKey: "isExecuting")
        willChangeValue(forKey: "isFinished")
        state.withLock {
            $0.executing = false
            $0.finished = true
        }
        didChangeValue(forKey: "isFinished")
        didChangeValue(forKey: "isExecuting")
        onFinish()
    }

    private func attempt(_ index: Int, _ number: Int) {
        guard !cancelled else { return requestOver(index, recorded: false) }
        if let failure = hostDown(index) { return end(index, failing: failure, attempts: number - 1) }
        if let wait = stages.rateLimiter?.reserve(), wait > 0 {
            return schedule(index, after: wait) { [self] in send(index, number) }
        }
        send(index, number)
    }

    /// Runs `next` after `delay` seconds without holding a thread; a cancel meanwhile ends the URL.
    private func schedule(_ index: Int, after delay: Double, _ next: @escaping @Sendable () -> Void) {
        state.withLock { $0.phase = .waiting }
        if cancelled { return cancel() }
        stages.work.asyncAfter(deadline: .now() + delay) { [self] in
            let claimed: Bool = state.withLock { state in
                guard case .waiting = state.phase, state.current == index else { return false }
                state.phase = .busy
                return true
            }
            if claimed { next() }
        }
    }

    private func send(_ index: Int, _ number: Int) {
        state.withLock { $0.phase = .sending(index: index, attempt: number) }
        guard !cancelled else { return requestOver(index, recorded: false) }
        stages.ledger.countRequest()
        // The completion runs on the fetcher's transfer thread; `handle` hands the body to the
        // writer and starts the next URL's request there.
        let job = jobs[index]
        let task = stages.fetcher.fetch(job.source, ifChanged: job.ifChanged) { [self] outcome in
            handle(outcome, index, attempt: number)
        }
        state.withLock { state in
            // The completion may already have moved on (even to the next URL's request); only
            // this attempt, still unanswered, is recorded.
            if case .sending(index, number) = state.phase { state.phase = .inFlight(task: task) }
        }
        if cancelled { task.cancel() }
    }

    private func handle(_ outcome: FetchOutcome, _ index: Int, attempt number: Int) {
        state.withLock { $0.phase = .busy }
        let job = jobs[index]
        watchHost(of: job, after: outcome)
        switch outcome {
        case .cancelled:
            requestOver(index, recorded: false)
        case .notModified:
            // Only a conditional request gets here, and only when every target was done with the
            // validators sent: each keeps its file and journal line; nothing is written.
            stages.ledger.revalidated(job.targets.map(\.id), .unchanged)
            requestOver(index, recorded: false)
        case .body(let data, _, let validators):
            requestOver(index, recorded: true) {
                stages.writer.deliver(Delivery(job: job, attempts: number, content: .body(data, validators: validators))) {
                    [self] in journaled()
                }
            }
        case .failed(let error, let retryAfter):
            // Interrupted mid-retry: leave the item pending rather than failed for good.
            if cancelled, error.isRetriable { return requestOver(index, recorded: false) }
            guard error.isRetriable, number <= stages.retries, !cancelled else {
                return end(index, failing: error, attempts: number)
            }
            if let failure = hostDown(index) { return end(index, failing: failure, attempts: number) }
            if let retryAfter, retryAfter > stages.maxRetryAfter {
                return end(index, failing: error, attempts: number, note: retryAfterBeyondCapNote(retryAfter, cap: stages.maxRetryAfter))
            }
            let delay = stages.backoff.delay(afterAttempt: number, retryAfter: retryAfter)
            schedule(index, after: delay) { [self] in attempt(index, number + 1) }
        }
    }

    /// Tells the host watch what this attempt says about the job's host: it answered, or it could
    /// not be reached (a timeout or a cancel says neither).
    private func watchHost(of job: FetchJob, after outcome: FetchOutcome) {
        switch outcome {
        case .cancelled, .failed(.timeout, _): return
        case .failed(.unreachable(let reason, _), _):
            let mirrored = job.targets.first.map { HostLanes.host(of: $0.url) != job.host } ?? false
            stages.hosts.unreachable(job.host, url: job.address, reason: reason, mirrored: mirrored)
        default:
            stages.hosts.answered(job.host)
        }
    }

    /// The failure for job `index` when its host is down, else nil.
    private func hostDown(_ index: Int) -> ItemError? {
        let job = jobs[index]
        return stages.hosts.down(job.host).map { .hostDown(host: job.host, reason: $0, url: job.address) }
    }

    /// The URL's request is over. With `recorded`, its outcome is on its way to the journal
    /// (`hand` passes it on) and counts as unjournaled until `journaled` runs; without, the URL
    /// is left pending. Then the lane moves on.
    private func requestOver(_ index: Int, recorded: Bool, hand: () -> Void = {}) {
        state.withLock { state in
            state.phase = .idle
            if recorded { state.unjournaled += 1 }
        }
        hand()
        advance()
    }

    /// On the writer, once a URL's records are journaled.
    private func journaled() {
        state.withLock { $0.unjournaled -= 1 }
        advance()
    }

    /// The URL failed for good: every record sharing it is recorded failed.
    private func end(_ index: Int, failing error: ItemError, attempts: Int, note: String? = nil) {
        let job = jobs[index]
        requestOver(index, recorded: true) {
            stages.writer.deliver(Delivery(job: job, attempts: attempts, content: .failed(error, note: note))) {
                [self] in journaled()
            }
        }
    }
}
