import Dispatch
import Foundation

/// What every fetch operation shares: the stages after the download, and where outcomes go.
struct PipelineStages: Sendable {
    let fetcher: any Fetching
    let validator: any ImageValidating
    let store: KeyedStore
    let journal: Journal
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
    /// Serial: file writes and journal appends. Creating files in one directory from many threads
    /// only contends on the directory's lock; one writer is faster, as curl's single thread is.
    let writer: DispatchQueue
}

/// One job on the queue: fetch a URL (retrying what may succeed), validate the body, write a file
/// for every record that shares the URL, journal them.
///
/// Asynchronous: it holds a queue slot, never a thread, while its request is in flight or it waits
/// to retry, and it gives the slot back as soon as the request is over, so the next request starts
/// while this body is validated and stored. `onJobDone` runs once when everything is recorded.
final class FetchOperation: Operation, @unchecked Sendable {
    private struct State {
        var executing = false
        var finished = false
        var finishing = false
        var jobDone = false
        var task: (any FetchTask)?
        var waitingToRetry = false  // between attempts: a backoff or a rate-limit wait
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
        let (task, waiting) = state.withLock { ($0.task, $0.waitingToRetry) }
        task?.cancel()
        if waiting { end() }
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
        state.withLock {
            $0.task = nil
            $0.waitingToRetry = true
        }
        if isCancelled { return end() }
        stages.work.asyncAfter(deadline: .now() + delay) { [self] in
            guard state.withLock({ !$0.finishing }) else { return }
            next()
        }
    }

    private func send(_ number: Int) {
        guard !isCancelled else { return end() }
        stages.ledger.countRequest()
        // The completion runs on the fetcher's transfer thread; `handle` only hands work on.
        let task = stages.fetcher.fetch(job.source) { [self] outcome in handle(outcome, attempt: number) }
        state.withLock {
            $0.task = task
            $0.waitingToRetry = false
        }
        if isCancelled { task.cancel() }
    }

    private func handle(_ outcome: FetchOutcome, attempt number: Int) {
        switch outcome {
        case .cancelled:
            end()
        case .body(let data, _):
            finish()
            if stages.validateInParallel {
                stages.work.async { [self] in
                    let checked = check(data)
                    stages.writer.async { [self] in keep(data, checked, attempts: number) }
                }
            } else {
                // A structure check takes microseconds: cheaper on the writer than a thread hop.
                stages.writer.async { [self] in keep(data, check(data), attempts: number) }
            }
        case .failed(let error, let retryAfter):
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

    /// On the writer: stores a checked body or records why it was refused, and ends the job.
    private func keep(_ data: Data, _ checked: Result<(info: ImageInfo, sha256: String), ItemError>, attempts: Int) {
        switch checked {
        case .success(let facts): store(data, info: facts.info, sha256: facts.sha256, attempts: attempts)
        case .failure(let error): fail(error, attempts: attempts)
        }
        jobDone()
    }

    /// Writes the file of every record sharing the URL, then journals them (on the writer queue).
    private func store(_ data: Data, info: ImageInfo, sha256: String, attempts: Int) {
        var records: [ItemRecord] = []
        var written: Int64 = 0
        for target in job.targets {
            do {
                try stages.store.write(data, id: target.id)
                written += Int64(data.count)
                records.append(
                    ItemRecord(
                        id: target.id, url: target.url, source: job.source.absoluteString, status: .done,
                        bytes: Int64(data.count), sha256: sha256, width: info.width, height: info.height,
                        attempts: attempts))
            } catch {
                records.append(failure(error, target: target, attempts: attempts))
            }
        }
        journal(records, bytes: written)
    }

    /// Records every record sharing the URL as failed and removes any file an earlier run left.
    private func fail(_ error: ItemError, attempts: Int, note: String? = nil) {
        var records = job.targets.map { failure(error, target: $0, attempts: attempts) }
        if let note {
            for index in records.indices { records[index].error?.message += " (\(note))" }
        }
        for target in job.targets { stages.store.remove(id: target.id) }
        journal(records, bytes: 0)
    }

    private func failure(_ error: ItemError, target: FetchJob.Target, attempts: Int) -> ItemRecord {
        ItemRecord(
            id: target.id, url: target.url, source: job.source.absoluteString, status: .failed,
            attempts: attempts, error: RecordedError(error))
    }

    /// Journals after the files are in place, then makes the outcomes visible to the run.
    private func journal(_ records: [ItemRecord], bytes: Int64) {
        var records = records
        do {
            try stages.journal.append(records)
        } catch {
            records = records.map { record in
                var record = record
                record.status = .failed
                record.error = RecordedError(error)
                return record
            }
        }
        stages.ledger.record(records, bytes: bytes)
    }

    /// Ends the job without a body: gives the slot back and records the failure, if any.
    private func end(failing error: ItemError? = nil, attempts: Int = 0, note: String? = nil) {
        finish()
        guard let error else { return jobDone() }
        stages.writer.async { [self] in
            fail(error, attempts: attempts, note: note)
            jobDone()
        }
    }

    private func jobDone() {
        let first: Bool = state.withLock { state in
            defer { state.jobDone = true }
            return !state.jobDone
        }
        if first { onJobDone() }
    }

    /// Gives the queue slot back (the operation is finished; the job may still be storing).
    private func finish() {
        let first: Bool = state.withLock { state in
            defer { state.finishing = true }
            return !state.finishing
        }
        guard first else { return }
        willChangeValue(forKey: "isExecuting")
        willChangeValue(forKey: "isFinished")
        state.withLock {
            $0.executing = false
            $0.finished = true
            $0.task = nil
            $0.waitingToRetry = false
        }
        didChangeValue(forKey: "isFinished")
        didChangeValue(forKey: "isExecuting")
    }
}
