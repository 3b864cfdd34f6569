import Dispatch
import Foundation
import Synchronization

/// The fetch loop of one run, and its one owner: a serial queue that feeds the operation queue
/// from the plan, records every outcome the operations hand back and tells each operation when
/// its lines are journaled, which is what lets it go on or finish. Operations fetch and hand
/// back (`deliver`, `finished`); they call nothing else.
///
///     plan ─▶ host lanes ─▶ OperationQueue ─▶ FetchOperation: fetch, retry [libcurl's thread, timers]
///       ▲                     (≤ concurrency)        │ deliver (a body or a failure), finished (304s)
///       │                                            ▼
///       └── loop queue: feed ◀─ finished ─ writer: validate, store, journal ─▶ ledger
///                                                    └─ journaled ─▶ the operation's next URL
///
/// The writer runs on the loop's queue, so a body costs one thread hop on its way from libcurl's
/// thread to the journal, as when the writer had a queue of its own; a 304 costs none (the
/// operation hands its 304s back with its finish). The operation queue's
/// `maxConcurrentOperationCount` is the bound on requests in flight.
final class FetchLoop: @unchecked Sendable {
    // @unchecked: every `var` is touched only on `queue`; `backlog` is atomic.
    private let queue = DispatchQueue(label: "archiver.loop")
    private let operations = OperationQueue()
    private let plan: Plan
    private let stages: PipelineStages
    private let writer: RecordWriter
    private let ledger: Ledger
    private let validator: any ImageValidating
    /// Whether validation is expensive enough (a full decode) to run in parallel on
    /// `stages.work` before the body reaches the loop.
    private let validateInParallel: Bool
    private let concurrency: Int
    /// Tasks submitted to `queue` and not yet run: the writer commits when there are none.
    private let backlog = Atomic<Int>(0)
    private let done = DispatchSemaphore(value: 0)

    private var reader: CatalogReader
    /// The next job of the plan to read.
    private var next = 0
    private var lanes: HostLanes
    /// Operations made and not finished.
    private var outstanding = 0
    private var cancelled = false
    private var finished = false
    /// One entry per delivery not yet journaled, in order of delivery.
    private var awaitingJournal: [FetchOperation] = []
    /// Requests the operations reported and the ledger has not counted yet.
    private var requests = 0

    init(
        plan: Plan, records: CatalogRecords, stages: PipelineStages, writer: RecordWriter, ledger: Ledger,
        validator: any ImageValidating, validateInParallel: Bool, concurrency: Int, perHost: Int?
    ) {
        self.plan = plan
        self.stages = stages
        self.writer = writer
        self.ledger = ledger
        self.validator = validator
        self.validateInParallel = validateInParallel
        self.concurrency = concurrency
        reader = CatalogReader(records)
        lanes = HostLanes(perHost: perHost, readAheadLimit: max(2048, 8 * concurrency))
        operations.name = "archiver.jobs"
        operations.maxConcurrentOperationCount = concurrency
    }

    /// Starts feeding the operation queue.
    func start() {
        submit { $0.feed() }
    }

    /// Blocks until every operation made has finished and the feed is exhausted or cancelled.
    func wait() {
        done.wait()
    }

    /// Stops making operations and cancels those queued or running; `wait` then returns once
    /// they have handed back.
    func cancel() {
        submit { loop in
            loop.cancelled = true
            loop.operations.cancelAllOperations()
            loop.finishIfIdle()
        }
    }

    /// From an operation: a URL's body (validated first, on the work queue, with
    /// `--validate full`) or its failure, to store and journal; `requests` the operation sent
    /// since it last reported.
    func deliver(_ delivery: Delivery, requests: Int, from operation: FetchOperation) {
        if case .body(let data, _) = delivery.content, validateInParallel {
            stages.work.async { [self] in
                let checked = RecordWriter.check(data, with: validator)
                submit { $0.keep(delivery, checked: checked, requests: requests, from: operation) }
            }
        } else {
            // A structure check takes microseconds: cheaper on the loop than a thread hop.
            submit { $0.keep(delivery, checked: nil, requests: requests, from: operation) }
        }
    }

    /// From an operation that finished on another thread than the loop's.
    func finished(_ report: FetchOperation.Finished) {
        submit { $0.operationFinished(report) }
    }

    /// Runs `body` on the queue; once nothing else is queued, or a batch is full, the writer
    /// commits.
    private func submit(_ body: @escaping @Sendable (FetchLoop) -> Void) {
        backlog.add(1, ordering: .relaxed)
        queue.async { [self] in
            body(self)
            let idle = backlog.subtract(1, ordering: .relaxed).newValue == 0
            if idle || writer.isFull { commit() }
        }
    }

    private func keep(_ delivery: Delivery, checked: Checked?, requests: Int, from operation: FetchOperation) {
        self.requests += requests
        writer.keep(delivery, checked: checked)
        awaitingJournal.append(operation)
    }

    /// Journals what the writer holds, then tells each operation its line is written.
    private func commit() {
        guard !awaitingJournal.isEmpty else { return }
        writer.commit()
        countRequests()
        let journaled = awaitingJournal
        awaitingJournal = []
        for operation in journaled {
            if let report = operation.journaled() { operationFinished(report) }
        }
    }

    private func operationFinished(_ report: FetchOperation.Finished) {
        if !report.unchanged.isEmpty { ledger.revalidated(report.unchanged, .unchanged) }
        requests += report.requests
        countRequests()
        outstanding -= 1
        lanes.finished(report.host)
        feed()
    }

    private func countRequests() {
        guard requests > 0 else { return }
        ledger.countRequests(requests)
        requests = 0
    }

    /// Keeps the queue fed with operations of up to 32 URLs of one host each, at most
    /// concurrency + 2 of them at a time, made from the plan only as they are queued (their URLs
    /// read back from the catalog, a bounded number ahead; see `HostLanes` for which host gets a
    /// free slot), so memory does not grow with the catalog. Near the end the operations get
    /// smaller, so the last URLs spread over every slot. Each operation keeps at most 3 URLs
    /// between request and journal line (`FetchStateMachine`), so at most 3 x concurrency
    /// requests are redone after a SIGKILL.
    private func feed() {
        var batch: [FetchOperation] = []
        while !cancelled, outstanding < concurrency + 2 {
            let remaining = plan.jobCount - next + lanes.buffered
            guard remaining > 0 else { break }
            let size = min(32, max(1, remaining / (4 * concurrency)))
            // Read ahead until the host next in line can fill an operation.
            while next < plan.jobCount, lanes.canReadAhead, (lanes.next?.waiting ?? 0) < size {
                if let job = plan.job(next, reader: &reader) { lanes.add(job, index: next) }
                next += 1
            }
            guard let (host, jobs) = lanes.take(upTo: size) else { break }
            batch.append(FetchOperation(host: host, jobs: jobs, stages: stages, loop: self))
            outstanding += 1
        }
        if !batch.isEmpty { operations.addOperations(batch, waitUntilFinished: false) }
        if (next >= plan.jobCount && lanes.buffered == 0) || cancelled { finishIfIdle() }
    }

    private func finishIfIdle() {
        guard !finished, outstanding == 0 else { return }
        finished = true
        countRequests()
        done.signal()
    }
}
