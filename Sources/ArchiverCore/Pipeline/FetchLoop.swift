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
final class FetchLoop: Sendable {
    /// What the loop's queue owns. Touched only on the queue; the lock around it is never
    /// contended (a task on a serial queue takes it), it lets the compiler check the confinement.
    private struct State {
        let plan: Plan
        var reader: CatalogReader
        /// The next job of the plan to read.
        var next = 0
        var lanes: HostLanes
        /// Operations made and not finished.
        var outstanding = 0
        var finished = false
        var writer: RecordWriter
        /// One entry per delivery not yet journaled, in order of delivery.
        var awaitingJournal: [FetchOperation] = []
        /// Requests the operations reported and the ledger has not counted yet.
        var requests = 0

        mutating func keep(_ delivery: Delivery, checked: Checked?, from operation: FetchOperation) {
            requests += delivery.attempts
            writer.keep(delivery, checked: checked)
            awaitingJournal.append(operation)
        }
    }

    private let queue = DispatchQueue(label: "archiver.loop")
    private let operations = OperationQueue()
    private let stages: PipelineStages
    private let ledger: Ledger
    private let validator: any ImageValidating
    /// Whether validation is expensive enough (a full decode) to run in parallel on
    /// `stages.work` before the body reaches the loop.
    private let validateInParallel: Bool
    private let concurrency: Int
    /// Tasks submitted to `queue` and not yet run: the writer commits when there are none.
    private let backlog = Atomic<Int>(0)
    /// Set by `cancel` at once, before its task reaches the queue: an operation that starts after
    /// it sends nothing. (`cancelAllOperations` cancels one operation after another; one that
    /// finishes meanwhile frees its slot to a queued one, which would otherwise send a request
    /// past the bound while the run is stopping.)
    private let stopping = Atomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)
    private let state: Locked<State>

    init(
        plan: Plan, records: CatalogRecords, stages: PipelineStages, writer: RecordWriter, ledger: Ledger,
        validator: any ImageValidating, validateInParallel: Bool, concurrency: Int, perHost: Int?
    ) {
        self.stages = stages
        self.ledger = ledger
        self.validator = validator
        self.validateInParallel = validateInParallel
        self.concurrency = concurrency
        state = Locked(
            State(
                plan: plan, reader: CatalogReader(records),
                lanes: HostLanes(perHost: perHost, readAheadLimit: max(2048, 8 * concurrency)), writer: writer))
        operations.name = "archiver.jobs"
        operations.maxConcurrentOperationCount = concurrency
    }

    /// Starts feeding the operation queue.
    func start() {
        submit { loop, state in loop.feed(&state) }
    }

    /// Blocks until every operation made has finished and the feed is exhausted or cancelled.
    func wait() {
        done.wait()
    }

    /// Stops making operations and cancels those queued or running; `wait` then returns once
    /// they have handed back.
    func cancel() {
        stopping.store(true, ordering: .releasing)
        submit { loop, state in
            loop.operations.cancelAllOperations()
            loop.finishIfIdle(&state)
        }
    }

    /// Whether `cancel` was called.
    var isStopping: Bool { stopping.load(ordering: .acquiring) }

    /// From an operation: a URL's body (validated first, on the work queue, with
    /// `--validate full`) or its failure, to store and journal.
    func deliver(_ delivery: Delivery, from operation: FetchOperation) {
        if case .body(let data, _) = delivery.content, validateInParallel {
            stages.work.async { [self] in
                let checked = RecordWriter.check(data, with: validator)
                submit { _, state in state.keep(delivery, checked: checked, from: operation) }
            }
        } else {
            // A structure check takes microseconds: cheaper on the loop than a thread hop.
            submit { _, state in state.keep(delivery, checked: nil, from: operation) }
        }
    }

    /// From an operation that finished on another thread than the loop's.
    func finished(_ report: FetchOperation.Finished) {
        submit { loop, state in loop.operationFinished(report, &state) }
    }

    /// Runs `body` on the queue; once nothing else is queued, or a batch is full, the writer
    /// commits.
    private func submit(_ body: @escaping @Sendable (FetchLoop, inout State) -> Void) {
        backlog.add(1, ordering: .relaxed)
        queue.async { [self] in
            state.withLock { state in
                body(self, &state)
                let idle = backlog.subtract(1, ordering: .relaxed).newValue == 0
                if idle || state.writer.isFull { commit(&state) }
            }
        }
    }

    /// Journals what the writer holds, then tells each operation its line is written.
    private func commit(_ state: inout State) {
        guard !state.awaitingJournal.isEmpty else { return }
        state.writer.commit()
        countRequests(&state)
        let journaled = state.awaitingJournal
        state.awaitingJournal = []
        for operation in journaled {
            if let report = operation.journaled() { operationFinished(report, &state) }
        }
    }

    private func operationFinished(_ report: FetchOperation.Finished, _ state: inout State) {
        if !report.unchanged.isEmpty { ledger.revalidated(report.unchanged, .unchanged) }
        state.requests += report.requests
        countRequests(&state)
        state.outstanding -= 1
        state.lanes.finished(report.host)
        feed(&state)
    }

    private func countRequests(_ state: inout State) {
        guard state.requests > 0 else { return }
        ledger.countRequests(state.requests)
        state.requests = 0
    }

    /// Keeps the queue fed with operations of up to 32 URLs of one host each, at most
    /// concurrency + 2 of them at a time, made from the plan only as they are queued (their URLs
    /// read back from the catalog, a bounded number ahead; see `HostLanes` for which host gets a
    /// free slot), so memory does not grow with the catalog. Near the end the operations get
    /// smaller, so the last URLs spread over every slot. Each operation keeps at most 3 URLs
    /// between request and journal line (`FetchStateMachine`), so at most 3 x concurrency
    /// requests are redone after a SIGKILL.
    private func feed(_ state: inout State) {
        var batch: [FetchOperation] = []
        let jobCount = state.plan.jobCount
        while !isStopping, state.outstanding < concurrency + 2 {
            let remaining = jobCount - state.next + state.lanes.buffered
            guard remaining > 0 else { break }
            let size = min(32, max(1, remaining / (4 * concurrency)))
            // Read ahead until the host next in line can fill an operation.
            while state.next < jobCount, state.lanes.canReadAhead, (state.lanes.next?.waiting ?? 0) < size {
                if let job = state.plan.job(state.next, reader: &state.reader) { state.lanes.add(job, index: state.next) }
                state.next += 1
            }
            guard let (host, jobs) = state.lanes.take(upTo: size) else { break }
            batch.append(FetchOperation(host: host, jobs: jobs, stages: stages, loop: self))
            state.outstanding += 1
        }
        if !batch.isEmpty { operations.addOperations(batch, waitUntilFinished: false) }
        if (state.next >= jobCount && state.lanes.buffered == 0) || isStopping { finishIfIdle(&state) }
    }

    private func finishIfIdle(_ state: inout State) {
        guard !state.finished, state.outstanding == 0 else { return }
        state.finished = true
        countRequests(&state)
        done.signal()
    }
}
