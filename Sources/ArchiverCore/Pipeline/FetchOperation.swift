import Dispatch
import Foundation

/// What every fetch operation shares: the stages after the download, and where outcomes go.
struct PipelineStages: Sendable {
    let fetcher: any Fetching
    let validator: any ImageValidating
    let writer: RecordWriter
    let ledger: Ledger
    let backoff: Backoff
    let retries: Int
    let maxRetryAfter: Double
    let rateLimiter: RateLimiter?
    /// Whether validation is expensive enough (a full decode) to run in parallel on `work`
    /// instead of on the writer.
    let validateInParallel: Bool
    /// Concurrent: full validation, and timers between attempts.
    let work: DispatchQueue
}

/// One job on the queue: fetch a URL (retrying what may succeed), validate the body, write a file
/// for every record that shares the URL, journal them.
///
/// Asynchronous: it holds a queue slot, never a thread, while its request is in flight or it waits
/// to retry, and it gives the slot back as soon as the request is over, so the next request starts
/// while this body is validated and stored. `onJobDone` runs once, after everything is journaled.
final class FetchOperation: Operation, @unchecked Sendable {
    /// Where the job is. Every change happens under the lock, and whoever moves it out of
    /// `waiting` or into `ended` owns what comes next, so a cancel and a timer cannot both act.
    private enum Phase {
        case idle
        case sending(attempt: Int)
        case inFlight(attempt: Int, task: any FetchTask)
        case waiting
        case ended
    }

    private struct State {
        var phase = Phase.idle
        var executing = false
        var finished = false
        var slotReturned = false
        var jobDone = false
    }

    let job: FetchJob
    private let stages: PipelineStages
    private let onJobDone: @Sendable () -> Void
    private let state = Locked(State())

    init(job: FetchJob, stages: PipelineStages, onJobDone: @escaping @Sendable () -> Void) {
        self.job = job
        self.stages = stages
        self.onJobDone = onJobDone
    }

    override var isAsynchronous: Bool { true }
    override var isExecuting: Bool { state.withLock { $0.executing } }
    override var isFinished: Bool { state.withLock { $0.finished } }

    override func start() {
        if isCancelled { return end() }
        willChangeValue(forKey: "isExecuting")
        state.withLock { $0.executing = true }
        didChangeValue(forKey: "isExecuting")
        attempt(1)
    }

    override func cancel() {
        super.cancel()
        enum Action { case none, cancelTask(any FetchTask), end }
        let action: Action = state.withLock { state in
            switch state.phase {
            case .inFlight(_, let task): return .cancelTask(task)
            case .waiting:
                state.phase = .ended
                return .end
            default: return .none  // `send` checks isCancelled once its task is recorded
            }
        }
        switch action {
        case .none: break
        case .cancelTask(let task): task.cancel()
        case .end: end()
        }
    }

    private func attempt(_ number: Int) {
        guard !isCancelled else { return end() }
        if let wait = stages.rateLimiter?.reserve(), wait > 0 {
            return schedule(after: wait) { [self] in send(number) }
        }
        send(number)
    }

    /// Runs `next` after `delay` seconds without holding a thread; a cancel meanwhile ends the job.
    private func schedule(after delay: Double, _ next: @escaping @Sendable () -> Void) {
        let waiting: Bool = state.withLock { state in
            if case .ended = state.phase { return false }
            state.phase = .waiting
            return true
        }
        guard waiting else { return }
        if isCancelled { return cancel() }
        stages.work.asyncAfter(deadline: .now() + delay) { [self] in
            let claimed: Bool = state.withLock { state in
                guard case .waiting = state.phase else { return false }
                state.phase = .idle
                return true
            }
            if claimed { next() }
        }
    }

    private func send(_ number: Int) {
        let go: Bool = state.withLock { state in
            if case .ended = state.phase { return false }
            state.phase = .sending(attempt: number)
            return true
        }
        guard go else { return }
        guard !isCancelled else { return end() }
        stages.ledger.countRequest()
        // The completion runs on the fetcher's transfer thread; `handle` only hands work on.
        let task = stages.fetcher.fetch(job.source) { [self] outcome in handle(outcome, attempt: number) }
        state.withLock { state in
            // The completion may already have moved on; only an unanswered request is recorded.
            if case .sending(number) = state.phase { state.phase = .inFlight(attempt: number, task: task) }
        }
        if isCancelled { task.cancel() }
    }

    private func handle(_ outcome: FetchOutcome, attempt number: Int) {
        state.withLock { state in
            if case .ended = state.phase { return }
            state.phase = .idle
        }
        switch outcome {
        case .cancelled:
            end()
        case .body(let data, _):
            returnSlot()
            if stages.validateInParallel {
                stages.work.async { [self] in
                    let checked = check(data)
                    stages.writer.submit { [self] writer in keep(data, checked, attempts: number, writer) }
                }
            } else {
                // A structure check takes microseconds: cheaper on the writer than a thread hop.
                stages.writer.submit { [self] writer in keep(data, check(data), attempts: number, writer) }
            }
        case .failed(let error, let retryAfter):
            // Interrupted mid-retry: leave the item pending rather than failed for good.
            if isCancelled, error.isRetriable { return end() }
            guard error.isRetriable, number <= stages.retries, !isCancelled else {
                return end(failing: error, attempts: number)
            }
            if let retryAfter, retryAfter > stages.maxRetryAfter {
                let note = "Retry-After \(Int(retryAfter)) s is beyond the \(Int(stages.maxRetryAfter)) s cap"
                return end(failing: error, attempts: number, note: note)
            }
            let delay = stages.backoff.delay(afterAttempt: number, retryAfter: retryAfter)
            schedule(after: delay) { [self] in attempt(number + 1) }
        }
    }

    private func check(_ data: Data) -> Result<(info: ImageInfo, sha256: String), ItemError> {
        Result { () throws(ItemError) in try stages.validator.validate(data) }.map { (info: $0, sha256: SHA256.hex(data)) }
    }

    /// On the writer: stores a checked body, or records why it was refused.
    private func keep(
        _ data: Data, _ checked: Result<(info: ImageInfo, sha256: String), ItemError>, attempts: Int,
        _ writer: RecordWriter
    ) {
        let facts: (info: ImageInfo, sha256: String)
        switch checked {
        case .success(let checked): facts = checked
        case .failure(let error): return fail(error, attempts: attempts, writer)
        }
        var records: [ItemRecord] = []
        var written: Int64 = 0
        for target in job.targets {
            do {
                try writer.files.write(data, id: target.id)
                written += Int64(data.count)
                records.append(
                    ItemRecord(
                        id: target.id, url: target.url, source: job.source.absoluteString, status: .done,
                        bytes: Int64(data.count), sha256: facts.sha256, width: facts.info.width,
                        height: facts.info.height, attempts: attempts))
            } catch {
                records.append(failure(error, target: target, attempts: attempts))
            }
        }
        writer.record(records, bytes: written) { [self] in jobDone() }
    }

    /// On the writer: every record sharing the URL is failed, and a file an earlier run left goes.
    private func fail(_ error: ItemError, attempts: Int, note: String? = nil, _ writer: RecordWriter) {
        var records = job.targets.map { failure(error, target: $0, attempts: attempts) }
        if let note {
            for index in records.indices { records[index].error?.message += " (\(note))" }
        }
        for target in job.targets { writer.files.remove(id: target.id) }
        writer.record(records, bytes: 0) { [self] in jobDone() }
    }

    private func failure(_ error: ItemError, target: FetchJob.Target, attempts: Int) -> ItemRecord {
        ItemRecord(
            id: target.id, url: target.url, source: job.source.absoluteString, status: .failed,
            attempts: attempts, error: RecordedError(error))
    }

    /// Ends the job without a body: gives the slot back and records the failure, if any.
    private func end(failing error: ItemError? = nil, attempts: Int = 0, note: String? = nil) {
        state.withLock { $0.phase = .ended }
        returnSlot()
        guard let error else { return jobDone() }
        stages.writer.submit { [self] writer in fail(error, attempts: attempts, note: note, writer) }
    }

    private func jobDone() {
        let first: Bool = state.withLock { state in
            defer { state.jobDone = true }
            return !state.jobDone
        }
        if first { onJobDone() }
    }

    /// Finishes the operation, giving its queue slot back (the job may still be storing).
    private func returnSlot() {
        let first: Bool = state.withLock { state in
            defer { state.slotReturned = true }
            return !state.slotReturned
        }
        guard first else { return }
        willChangeValue(forKey: "isExecuting")
        willChangeValue(forKey: "isFinished")
        state.withLock {
            $0.executing = false
            $0.finished = true
        }
        didChangeValue(forKey: "isFinished")
        didChangeValue(forKey: "isExecuting")
    }
}
