/// The decisions of one fetch operation, as a value: which of its URLs to start, when to retry,
/// wait or give up, and when the operation is done. It is told what happened (events) and
/// returns what to do (a `Step`); it never touches a thread, a socket or a timer, so every
/// transition is tested alone (`FetchStateMachineTests`). `FetchOperation` runs it under its
/// lock and carries out the steps.
///
/// An operation fetches its URLs one after another, one request at a time. A URL ends with a
/// body or a failure for the writer (`deliver`), a 304 (`unchanged`) or, after a cancel, nothing
/// (`pending`: a later run tries it). The next URL starts as soon as the last ends, as long as at
/// most two delivered URLs still wait for their journal lines: at most 3 URLs per operation are
/// between request and journal line, which bounds what a SIGKILL makes the next run redo to
/// 3 x concurrency requests.
struct FetchStateMachine: Sendable {
    /// How failures are retried.
    struct Policy: Sendable {
        /// Attempts after the first for a failure that may clear up.
        var retries: Int
        /// The longest `Retry-After`, in seconds, worth waiting for; a longer one fails the URL.
        var maxRetryAfter: Double
        var backoff: Backoff
    }

    /// How a URL ended: what the operation hands back for it, with the requests it took.
    enum Ending: Sendable {
        /// A body or a failure for the writer, after `attempts` requests; the URL counts as
        /// unjournaled until `journaled()`.
        case deliver(index: Int, attempts: Int, Delivery.Content)
        /// A 304: every target keeps its file and journal line.
        case unchanged(index: Int, requests: Int)
        /// Cut short by a cancel: the URL stays pending for a later run.
        case pending(index: Int, requests: Int)
    }

    /// What to do next.
    enum Command: Sendable, Equatable {
        case none
        /// Ask whether the URL's host is down and what the rate limiter says, and pass the
        /// answer to `gated(_:)`.
        case gate(index: Int, attempt: Int)
        /// Send the request; its outcome goes to `answered(_:hostDown:)`.
        case send(index: Int, attempt: Int)
        /// Call `timerFired(_:)` with `ticket` after `seconds`.
        case wait(seconds: Double, ticket: Int)
        /// Cancel the request in flight (its outcome still comes, as `cancelled`).
        case cancelRequest
        /// Every URL ended and every delivered one is journaled: the operation is finished.
        case finish
    }

    /// The result of one event: at most one URL ended, and what comes next.
    struct Step: Sendable {
        var ended: Ending?
        var command: Command
    }

    /// What stands between a URL and its request.
    enum Gate: Sendable, Equatable {
        case open
        /// The host is down: the URL fails at once with this error.
        case hostDown(ItemError)
        /// The rate limiter wants this many seconds first.
        case wait(Double)
    }

    private enum Phase: Equatable {
        case notStarted
        /// No URL under way.
        case idle
        /// Waiting for `gated(_:)`.
        case gating(index: Int, attempt: Int)
        case inFlight(index: Int, attempt: Int)
        /// Waiting for `timerFired(ticket)`, then to send (`gate` false: the rate limiter's wait)
        /// or to gate the attempt again (a retry's backoff).
        case waiting(index: Int, attempt: Int, ticket: Int, gate: Bool)
        case finished
    }

    /// URLs in the operation.
    let count: Int
    let policy: Policy
    private var phase = Phase.notStarted
    /// The next URL to start.
    private var next = 0
    /// Delivered URLs not journaled yet.
    private(set) var unjournaled = 0
    private(set) var isCancelled = false
    private var tickets = 0

    init(count: Int, policy: Policy) {
        self.count = count
        self.policy = policy
    }

    var isFinished: Bool { phase == .finished }

    /// Whether `index`'s attempt `attempt` is the request in flight.
    func isInFlight(index: Int, attempt: Int) -> Bool {
        phase == .inFlight(index: index, attempt: attempt)
    }

    mutating func start() -> Step {
        guard phase == .notStarted else { return Step(command: .none) }
        phase = .idle
        return Step(command: advance())
    }

    /// Stops starting URLs; the one under way ends pending unless its request already answered.
    mutating func cancel() -> Step {
        isCancelled = true
        switch phase {
        case .inFlight: return Step(command: .cancelRequest)
        case .waiting(let index, let attempt, _, _): return end(.pending(index: index, requests: attempt - 1))
        case .idle: return Step(command: advance())
        case .notStarted, .gating, .finished: return Step(command: .none)
        }
    }

    /// The answer to `Command.gate`.
    mutating func gated(_ gate: Gate) -> Step {
        guard case .gating(let index, let attempt) = phase else { return Step(command: .none) }
        if isCancelled { return end(.pending(index: index, requests: attempt - 1)) }
        switch gate {
        case .open:
            phase = .inFlight(index: index, attempt: attempt)
            return Step(command: .send(index: index, attempt: attempt))
        case .hostDown(let error):
            return end(.deliver(index: index, attempts: attempt - 1, .failed(error, note: nil)))
        case .wait(let seconds):
            return wait(seconds, index: index, attempt: attempt, gate: false)
        }
    }

    /// The outcome of the request in flight; `hostDown` is the failure for its host when the
    /// host is down now (asked only of a failed attempt).
    mutating func answered(_ outcome: FetchOutcome, hostDown: ItemError? = nil) -> Step {
        guard case .inFlight(let index, let attempt) = phase else { return Step(command: .none) }
        switch outcome {
        case .cancelled:
            return end(.pending(index: index, requests: attempt))
        case .notModified:
            return end(.unchanged(index: index, requests: attempt))
        case .body(let data, _, let validators):
            return end(.deliver(index: index, attempts: attempt, .body(data, validators: validators)))
        case .failed(let error, let retryAfter):
            // Interrupted mid-retry: leave the item pending rather than failed for good.
            if isCancelled, error.isRetriable { return end(.pending(index: index, requests: attempt)) }
            guard error.isRetriable, attempt <= policy.retries, !isCancelled else {
                return end(.deliver(index: index, attempts: attempt, .failed(error, note: nil)))
            }
            if let hostDown { return end(.deliver(index: index, attempts: attempt, .failed(hostDown, note: nil))) }
            if let retryAfter, retryAfter > policy.maxRetryAfter {
                let note = retryAfterBeyondCapNote(retryAfter, cap: policy.maxRetryAfter)
                return end(.deliver(index: index, attempts: attempt, .failed(error, note: note)))
            }
            let delay = policy.backoff.delay(afterAttempt: attempt, retryAfter: retryAfter)
            return wait(delay, index: index, attempt: attempt + 1, gate: true)
        }
    }

    /// The timer of `Command.wait` fired; a stale ticket (its wait was cancelled) does nothing.
    mutating func timerFired(_ ticket: Int) -> Step {
        guard case .waiting(let index, let attempt, ticket, let gate) = phase else { return Step(command: .none) }
        if isCancelled { return end(.pending(index: index, requests: attempt - 1)) }
        if gate {
            phase = .gating(index: index, attempt: attempt)
            return Step(command: .gate(index: index, attempt: attempt))
        }
        phase = .inFlight(index: index, attempt: attempt)
        return Step(command: .send(index: index, attempt: attempt))
    }

    /// The journal lines of one delivered URL are written.
    mutating func journaled() -> Step {
        precondition(unjournaled > 0, "journaled more URLs than were delivered")
        unjournaled -= 1
        return Step(command: phase == .idle ? advance() : .none)
    }

    private mutating func wait(_ seconds: Double, index: Int, attempt: Int, gate: Bool) -> Step {
        tickets += 1
        phase = .waiting(index: index, attempt: attempt, ticket: tickets, gate: gate)
        return Step(command: .wait(seconds: seconds, ticket: tickets))
    }

    private mutating func end(_ ending: Ending) -> Step {
        phase = .idle
        if case .deliver = ending { unjournaled += 1 }
        return Step(ended: ending, command: advance())
    }

    /// From idle: the next URL's first attempt, the finish, or nothing yet.
    private mutating func advance() -> Command {
        if isCancelled || next >= count {
            guard unjournaled == 0 else { return .none }
            phase = .finished
            return .finish
        }
        guard unjournaled <= 2 else { return .none }
        let index = next
        next += 1
        phase = .gating(index: index, attempt: 1)
        return .gate(index: index, attempt: 1)
    }
}
