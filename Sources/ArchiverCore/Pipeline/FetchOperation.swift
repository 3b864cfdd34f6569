import Dispatch
import Foundation

/// What every fetch operation shares: the fetcher, how to retry, and what gates a request.
struct PipelineStages: Sendable {
    let fetcher: any Fetching
    let policy: FetchStateMachine.Policy
    let rateLimiter: RateLimiter?
    /// Concurrent: timers between attempts.
    let work: DispatchQueue
    /// Hosts that never answered and failed to connect too often: their URLs fail at once.
    let hosts: HostWatch
}

/// One job on the queue: a run of distinct URLs of one host, fetched one after another, their
/// outcomes handed back to the `FetchLoop`. What to do when is `FetchStateMachine`'s to decide;
/// the operation feeds it events (from `start`, `cancel`, libcurl's thread, timers, the loop)
/// under its lock and carries out the steps it returns.
///
/// Asynchronous: it holds a queue slot, never a thread, and has at most one request in flight,
/// so the queue's `maxConcurrentOperationCount` is the number of requests in flight. When a
/// body arrives, the next URL's request starts at once, from the thread that delivered the body
/// (at most 3 URLs per slot between request and journal: `FetchStateMachine`). Running many URLs
/// per operation spares a thread hand-off per image (an operation starting on a queue thread
/// wakes one).
final class FetchOperation: Operation, @unchecked Sendable {
    // @unchecked: Operation is not Sendable; every mutable field is in `state`, under its lock.
    private struct State: Sendable {
        var machine: FetchStateMachine
        var task: (any FetchTask)?
        var executing = false
        var finished = false
        /// Records whose URL answered 304, and requests of URLs not delivered (304s, pending):
        /// handed back with the finish.
        var unchanged: [Int32] = []
        var requests = 0
    }

    /// What a finished operation hands back to the loop.
    struct Finished: Sendable {
        let host: String
        /// Catalog positions of the records whose URL answered 304.
        let unchanged: [Int32]
        /// Requests of its URLs that were not delivered (a delivery's attempts count its own).
        let requests: Int
    }

    let host: String
    private let jobs: [FetchJob]
    private let stages: PipelineStages
    private let loop: FetchLoop
    private let state: Locked<State>

    /// `jobs` all of `host`; their outcomes go back to `loop`.
    init(host: String, jobs: [FetchJob], stages: PipelineStages, loop: FetchLoop) {
        self.host = host
        self.jobs = jobs
        self.stages = stages
        self.loop = loop
        state = Locked(State(machine: FetchStateMachine(count: jobs.count, policy: stages.policy)))
    }

    override var isAsynchronous: Bool { true }
    override var isExecuting: Bool { state.withLock { $0.executing } }
    override var isFinished: Bool { state.withLock { $0.finished } }

    override func start() {
        let cancelled = isCancelled || loop.isStopping
        willChangeValue(forKey: "isExecuting")
        state.withLock { $0.executing = true }
        didChangeValue(forKey: "isExecuting")
        let step = state.withLock { state in
            if cancelled { _ = state.machine.cancel() }
            return state.machine.start()
        }
        _ = run(step)
    }

    override func cancel() {
        super.cancel()
        _ = run(state.withLock { $0.machine.cancel() })
    }

    /// From the loop, once the journal lines of one delivered URL are written. Returns what to
    /// hand back when that finished the operation (the loop takes it at once: no hop).
    func journaled() -> Finished? {
        run(state.withLock { $0.machine.journaled() }, onLoop: true)
    }

    /// Carries out `step` and those that follow from it. When it finishes the operation, the
    /// loop is told: through its queue, or with `onLoop` by returning what to tell it.
    private func run(_ step: FetchStateMachine.Step, onLoop: Bool = false) -> Finished? {
        var step = step
        while true {
            if let ended = step.ended { hand(ended) }
            switch step.command {
            case .none:
                return nil
            case .gate(let index, _):
                let gate = gate(for: jobs[index])
                step = state.withLock { $0.machine.gated(gate) }
            case .send(let index, let attempt):
                send(index, attempt)
                return nil
            case .wait(let seconds, let ticket):
                stages.work.asyncAfter(deadline: .now() + seconds) { [self] in
                    _ = run(state.withLock { $0.machine.timerFired(ticket) })
                }
                return nil
            case .cancelRequest:
                state.withLock { $0.task }?.cancel()
                return nil
            case .finish:
                let finished = finish()
                if onLoop { return finished }
                loop.finished(finished)
                return nil
            }
        }
    }

    private func gate(for job: FetchJob) -> FetchStateMachine.Gate {
        if let reason = stages.hosts.down(job.host) {
            return .hostDown(.hostDown(host: job.host, reason: reason, url: job.address))
        }
        if let wait = stages.rateLimiter?.reserve(), wait > 0 { return .wait(wait) }
        return .open
    }

    private func send(_ index: Int, _ attempt: Int) {
        let job = jobs[index]
        // The completion runs on the fetcher's transfer thread: it hands the body back to the loop
        // and starts the next URL's request there.
        let task = stages.fetcher.fetch(job.address, ifChanged: job.ifChanged) { [self] outcome in
            watchHost(of: job, after: outcome)
            var hostDown: ItemError?
            if case .failed = outcome, let reason = stages.hosts.down(job.host) {
                hostDown = .hostDown(host: job.host, reason: reason, url: job.address)
            }
            _ = run(
                state.withLock { state in
                    state.task = nil
                    return state.machine.answered(outcome, hostDown: hostDown)
                })
        }
        let cancel: Bool = state.withLock { state in
            // The completion may already have run (even the next URL's request may be out); only
            // this attempt, still unanswered, is kept to be cancelled.
            guard state.machine.isInFlight(index: index, attempt: attempt) else { return false }
            state.task = task
            return state.machine.isCancelled
        }
        if cancel { task.cancel() }
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

    /// Hands a URL's end back: a delivery to the loop at once, a 304 with the operation's finish.
    private func hand(_ ending: FetchStateMachine.Ending) {
        switch ending {
        case .deliver(let index, let attempts, let content):
            loop.deliver(Delivery(job: jobs[index], attempts: attempts, content: content), from: self)
        case .unchanged(let index, let requests):
            // Only a conditional request gets here, and only when every target was done with the
            // validators sent: each keeps its file and journal line; nothing is written.
            let positions = jobs[index].targets.map(\.position)
            state.withLock { state in
                state.unchanged += positions
                state.requests += requests
            }
        case .pending(_, let requests):
            if requests > 0 { state.withLock { $0.requests += requests } }
        }
    }

    private func finish() -> Finished {
        willChangeValue(forKey: "isExecuting")
        willChangeValue(forKey: "isFinished")
        let finished: Finished = state.withLock { state in
            state.executing = false
            state.finished = true
            defer {
                state.unchanged = []
                state.requests = 0
            }
            return Finished(host: host, unchanged: state.unchanged, requests: state.requests)
        }
        didChangeValue(forKey: "isFinished")
        didChangeValue(forKey: "isExecuting")
        return finished
    }
}
