
/// A snapshot of a run's progress.
public struct Progress: Sendable, Equatable {
    /// Records done this run.
    public var done = 0
    /// Records failed this run.
    public var failed = 0
    /// Records the run set out to attempt (excludes kept outcomes).
    public var total = 0
    /// Bytes fetched and written this run.
    public var bytes: Int64 = 0
    /// HTTP requests started this run.
    public var requests = 0
}

/// Every outcome of a run, collected as items finish; thread-safe.
final class Ledger: Sendable {
    private struct State {
        var outcomes: [Int: ItemRecord]
        var progress = Progress()
    }

    private let state: Locked<State>

    init(kept: [Int: ItemRecord], total: Int) {
        var initial = State(outcomes: kept)
        initial.progress.total = total
        state = Locked(initial)
    }

    func record(_ records: [ItemRecord], bytes: Int64) {
        state.withLock { state in
            for record in records {
                state.outcomes[record.id] = record
                if record.status == .done { state.progress.done += 1 } else { state.progress.failed += 1 }
            }
            state.progress.bytes += bytes
        }
    }

    func countRequest() {
        state.withLock { $0.progress.requests += 1 }
    }

    var progress: Progress { state.withLock { $0.progress } }
    var outcomes: [Int: ItemRecord] { state.withLock { $0.outcomes } }
}
