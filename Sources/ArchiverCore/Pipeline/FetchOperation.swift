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
    let work: DispatchQueue
}

/// One job on the queue: fetch a URL (retrying what may succeed), validate the body, write a file
/// for every record that shares the URL, journal them. Asynchronous: it holds a queue slot, never a
/// thread, while its request is in flight or it waits to retry.
final class FetchOperation: Operation, @unchecked Sendable {
    private struct State {
        var executing = false
        var finished = false
        var finishing = false
        var task: (any FetchTask)?
        var waitingToRetry = false  // between attempts: a backoff or a rate-limit wait
    }

    let job: FetchJob
    private let stages: PipelineStages
    private let state = Locked(State())

    init(job: FetchJob, stages: PipelineStages) {
        self.job = job
        self.stages = stages
    }

    override var isAsynchronous: Bool { true }
    override var isExecuting: Bool { state.withLock { $0.executing } }
    override var isFinished: Bool { state.withLock { $0.finished } }

    override func start() {
        if isCancelled {
            finish()
            return
        }
        willChangeValue(forKey: "isExecuting")
        state.withLock { $0.executing = true }
        didChangeValue(forKey: "isExecuting")
        attempt(1)
    }

    override func cancel() {
        super.cancel()
        let (task, waiting) = state.withLock { ($0.task, $0.waitingToRetry) }
        task?.cancel()
        if waiting { finish() }
    }

    private func attempt(_ number: Int) {
        guard !isCancelled else { return finish() }
        if let wait = stages.rateLimiter?.reserve(), wait > 0 {
            return schedule(after: wait) { [self] in send(number) }
        }
        send(number)
    }

    /// Runs `next` after `delay` seconds without holding a thread; a cancel meanwhile finishes instead.
    private func schedule(after delay: Double, _ next: @escaping @Sendable () -> Void) {
        state.withLock {
            $0.task = nil
            $0.waitingToRetry = true
        }
        if isCancelled { return finish() }
        stages.work.asyncAfter(deadline: .now() + delay) { [self] in
            guard state.withLock({ !$0.finishing }) else { return }
            next()
        }
    }

    private func send(_ number: Int) {
        guard !isCancelled else { return finish() }
        stages.ledger.countRequest()
        let task = stages.fetcher.fetch(job.source) { [self] outcome in
            stages.work.async { self.handle(outcome, attempt: number) }
        }
        state.withLock {
            $0.task = task
            $0.waitingToRetry = false
        }
        if isCancelled { task.cancel() }
    }

    private func handle(_ outcome: FetchOutcome, attempt number: Int) {
        switch outcome {
        case .cancelled:
            finish()
        case .body(let data, let finalURL):
            store(data, attempts: number, finalURL: finalURL)
            finish()
        case .failed(let error, let retryAfter):
            guard error.isRetriable, number <= stages.retries, !isCancelled else {
                fail(error, attempts: number)
                return finish()
            }
            if let retryAfter, retryAfter > stages.maxRetryAfter {
                fail(error, attempts: number, note: "Retry-After \(Int(retryAfter)) s is beyond the \(Int(stages.maxRetryAfter)) s cap")
                return finish()
            }
            let delay = stages.backoff.delay(afterAttempt: number, retryAfter: retryAfter)
            schedule(after: delay) { [self] in attempt(number + 1) }
        }
    }

    private func store(_ data: Data, attempts: Int, finalURL: String) {
        let info: ImageInfo
        do {
            info = try stages.validator.validate(data)
        } catch {
            return fail(error, attempts: attempts)
        }
        let sha256 = SHA256.hex(data)
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
