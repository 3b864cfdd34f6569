/// A snapshot of a run's progress.
public struct Progress: Sendable, Equatable {
    /// Records done this run.
    var done = 0
    /// Records failed this run.
    var failed = 0
    /// Records the run set out to attempt (excludes kept outcomes).
    var total = 0
    /// Bytes fetched and written this run.
    var bytes: Int64 = 0
    /// HTTP requests started this run.
    var requests = 0
    /// Of the done items `--refresh` revalidated: still the same (a 304, or the same bytes),
    /// replaced by new bytes, and not revalidated (kept as they were; counted in `failed` too).
    var unchanged = 0
    var changed = 0
    public var refreshFailed = 0
}

/// Every record's outcome, by catalog position, collected as items finish; thread-safe.
///
/// An outcome is kept in 64 bytes (the digest as bytes, sizes and the file's stamp as integers); the strings of an
/// `ItemRecord` are made again when asked for: the URL from the catalog, the fetched URL from
/// the `--mirror` rule the plan chose for the record, the error from a side table (failures are few), the validators (`ETag`,
/// `Last-Modified`) from a `ValidatorArena` with one 8-byte span per record, made only once a
/// server sends one. Outcomes carried over from earlier runs stay in the journal index and are decoded
/// when asked for.
final class Ledger: Sendable {
    struct Outcome {
        /// `revalidating`: a done item `--refresh` is asking the server about; until it answers,
        /// the journal index's outcome stands (as for `kept`), but it is not written out yet.
        enum Code: UInt8 { case none, done, failed, kept, revalidating }
        var digest: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        /// `bytes` (40 bits: `--max-bytes` is at most 2^40), `attempts` (8), `code` (8) and the
        /// image format (8) in one word, so an outcome is 64 bytes rather than 72 (100,000
        /// records: 0.8 MB).
        private var packed: UInt64 = 0
        var width: Int32 = 0
        var height: Int32 = 0
        /// The file's inode and mtime (`FileStamp`); inode 0 for none.
        var inode: UInt64 = 0
        var modified: Int64 = 0

        private static let bytesMask: UInt64 = 1 << 40 - 1

        var bytes: Int64 {
            get { Int64(packed & Self.bytesMask) }
            set { packed = packed & ~Self.bytesMask | UInt64(clamping: newValue) & Self.bytesMask }
        }

        var attempts: Int32 {
            get { Int32(packed >> 40 & 0xFF) }
            set { packed = packed & ~(0xFF << 40) | UInt64(UInt8(clamping: newValue)) << 40 }
        }

        var code: Code {
            get { Code(rawValue: UInt8(packed >> 48 & 0xFF)) ?? .none }
            set { packed = packed & ~(0xFF << 48) | UInt64(newValue.rawValue) << 48 }
        }

        var format: ImageFormat {
            get { ImageFormat.allCases[Int(packed >> 56) % ImageFormat.allCases.count] }
            set { packed = packed & ~(0xFF << 56) | UInt64(ImageFormat.allCases.firstIndex(of: newValue)!) << 56 }
        }
    }

    private struct State {
        var outcomes: [Outcome]
        /// Errors of failed outcomes, by position.
        var errors: [Int32: RecordedError] = [:]
        /// Frame counts of animated done outcomes (few), by position.
        var frames: [Int32: Int] = [:]
        /// Fetched URLs that are not what `--mirror` makes of the catalog URL, by position.
        var sources: [Int32: String] = [:]
        /// Where each position's validators are in `validators` (once any exists; 0 for none).
        var validatorSpans: [ValidatorArena.Span] = []
        /// Why revalidating an item failed (its old file was kept), by position.
        var refreshFailures: [Int32: RecordedError] = [:]
        /// Journal lines recorded this run.
        var lines = 0
        var progress = Progress()
    }

    private let records: CatalogRecords
    /// The plan's `--mirror` choices: what the fetched URL of each record is, unless `sources` says otherwise.
    let mirrors: MirrorChoices
    private let previous: JournalIndex
    private let state: Locked<State>
    /// The validators of done outcomes; appended to under the lock only.
    private let validators = ValidatorArena()

    /// `kept`: positions whose outcome is `previous`'s; `revalidating`: done ones `--refresh`
    /// asks the server about (`previous`'s until answered); `total`: records to attempt this run.
    init(
        records: CatalogRecords, mirrors: MirrorChoices, previous: JournalIndex, kept: [Int32], revalidating: [Int32] = [],
        total: Int
    ) {
        self.records = records
        self.mirrors = mirrors
        self.previous = previous
        var initial = State(outcomes: Array(repeating: Outcome(), count: records.count))
        for position in kept { initial.outcomes[Int(position)].code = .kept }
        for position in revalidating { initial.outcomes[Int(position)].code = .revalidating }
        initial.progress.total = total
        state = Locked(initial)
    }

    /// Records outcomes whose catalog positions are not known: each is found by its id.
    func record(_ batch: [ItemRecord], bytes: Int64) {
        record(batch, at: batch.map { records.position(ofID: $0.id).map(Int32.init) ?? -1 }, bytes: bytes)
    }

    /// Records `batch`, whose records are at `positions` in the catalog (-1 for none).
    func record(_ batch: [ItemRecord], at positions: [Int32], bytes: Int64) {
        state.withLock { state in
            state.lines += batch.count
            for (record, key) in zip(batch, positions) {
                if record.status == .done { state.progress.done += 1 } else { state.progress.failed += 1 }
                guard key >= 0, record.status != .pending else { continue }
                let position = Int(key)
                var outcome = Outcome()
                outcome.code = record.status == .done ? .done : .failed
                outcome.digest = record.sha256?.words ?? (0, 0, 0, 0)
                outcome.bytes = record.bytes
                outcome.width = Int32(clamping: record.width)
                outcome.height = Int32(clamping: record.height)
                outcome.attempts = Int32(clamping: record.attempts)
                outcome.inode = record.file?.inode ?? 0
                outcome.modified = record.file?.modified ?? 0
                outcome.format = record.format
                state.outcomes[position] = outcome
                state.frames[key] = record.status == .done && record.frames != 1 ? record.frames : nil
                state.errors[key] = record.status == .failed ? record.error : nil
                state.sources[key] = mirrors.isAddress(record.source, of: record.url, at: position) ? nil : record.source
                store(record.status == .done ? record.validators : Validators(), at: position, in: &state)
            }
            state.progress.bytes += bytes
        }
    }

    /// How a revalidated item ended when it got no new journal line.
    enum Revalidation {
        /// A 304, or the same bytes with the same validators: the file stands as it was.
        case unchanged
        /// The server could not be asked or answered with an error: the old file is kept.
        case failed(RecordedError)
    }

    /// Revalidated items whose journaled outcome stands (`positions` of records being revalidated).
    func revalidated(_ positions: [Int32], _ result: Revalidation) {
        state.withLock { state in
            for position in positions.lazy.map(Int.init) {
                state.outcomes[position].code = .kept
                switch result {
                case .unchanged:
                    state.progress.done += 1
                    state.progress.unchanged += 1
                case .failed(let error):
                    state.progress.failed += 1
                    state.progress.refreshFailed += 1
                    state.refreshFailures[Int32(position)] = error
                }
            }
        }
    }

    /// Counts revalidated items that got a new journal line: `changed` with new bytes, otherwise
    /// the same bytes under new validators.
    func countRevalidated(changed: Int, unchanged: Int) {
        state.withLock { state in
            state.progress.changed += changed
            state.progress.unchanged += unchanged
        }
    }

    /// Journal lines recorded this run (none: the journal says what it said before the run).
    var linesRecorded: Int { state.withLock { $0.lines } }

    /// A few items whose revalidation failed, by id, with why.
    func refreshFailures(limit: Int) -> [(id: RecordID, error: RecordedError)] {
        state.withLock { state in
            state.refreshFailures.sorted { $0.key < $1.key }.prefix(limit).map { (records.id(at: Int($0.key)), $0.value) }
        }
    }

    private func store(_ found: Validators, at position: Int, in state: inout State) {
        guard !found.isEmpty || !state.validatorSpans.isEmpty else { return }
        if state.validatorSpans.isEmpty { state.validatorSpans = Array(repeating: 0, count: state.outcomes.count) }
        state.validatorSpans[position] = validators.append(found)
    }

    func countRequests(_ count: Int) {
        state.withLock { $0.progress.requests += count }
    }

    var progress: Progress { state.withLock { $0.progress } }

    /// Records recorded this run or carried over.
    var recordedCount: Int {
        state.withLock { $0.outcomes.count { $0.code != .none } }
    }

    /// One position's outcome as it was under the lock, for `outcome(_:of:field:)`.
    struct Snapshot {
        fileprivate var position: Int32
        fileprivate var outcome: Outcome
        fileprivate var error: RecordedError?
        fileprivate var source: String?
        fileprivate var validators: ValidatorArena.Span = 0
        fileprivate var frames = 1
    }

    /// The outcomes at `positions`, from the first, as far as each has one (with `all`, every
    /// one, pending or not), copied in one hold of the lock.
    ///
    /// The manifest and page are written by a thread at low priority. Taking the lock once per
    /// item there let that thread be preempted while holding it, and the writer and libcurl's
    /// thread, which take it for every image, then waited until it ran again.
    func snapshots(_ positions: ArraySlice<Int32>, all: Bool = false) -> [Snapshot] {
        state.withLock { state in
            var result: [Snapshot] = []
            result.reserveCapacity(positions.count)
            for position in positions {
                let snapshot = Self.snapshot(state, position)
                if snapshot.outcome.code == .none || snapshot.outcome.code == .revalidating, !all { break }
                result.append(snapshot)
            }
            return result
        }
    }

    private static func snapshot(_ state: State, _ position: Int32) -> Snapshot {
        let outcome = state.outcomes[Int(position)]
        return Snapshot(
            position: position, outcome: outcome, error: outcome.code == .failed ? state.errors[position] : nil,
            source: state.sources.isEmpty ? nil : state.sources[position],
            validators: outcome.code == .done && !state.validatorSpans.isEmpty ? state.validatorSpans[Int(position)] : 0,
            frames: state.frames.isEmpty ? 1 : state.frames[position] ?? 1)
    }

    /// The outcome of `record` (at `position`), if it has one for the URL it has now.
    func outcome(at position: Int, of record: CatalogRecord, field: ImageField) -> ItemRecord? {
        outcome(state.withLock { Self.snapshot($0, Int32(position)) }, of: record, field: field)
    }

    /// The outcome of `record` from its snapshot, if it has one for the URL it has now.
    func outcome(_ snapshot: Snapshot, of record: CatalogRecord, field: ImageField) -> ItemRecord? {
        let url = record.url(for: field)
        let (outcome, error, source) = (snapshot.outcome, snapshot.error, snapshot.source)
        switch outcome.code {
        case .none:
            return nil
        case .kept, .revalidating:
            return previous.record(for: record.id).flatMap { $0.url.hasSameBytes(as: url) ? $0 : nil }
        case .done, .failed:
            return ItemRecord(
                id: record.id, url: url, source: source ?? mirrors.address(of: url, at: Int(snapshot.position)),
                status: outcome.code == .done ? .done : .failed, bytes: outcome.bytes,
                sha256: outcome.code == .done ? SHA256Digest(words: outcome.digest) : nil, width: Int(outcome.width),
                height: Int(outcome.height), attempts: Int(outcome.attempts), error: error,
                file: outcome.inode == 0 ? nil : FileStamp(inode: outcome.inode, modified: outcome.modified),
                validators: validators.validators(snapshot.validators), format: outcome.format, frames: snapshot.frames)
        }
    }

    /// Statuses and done bytes of every record, without decoding any. The bytes are clamped at
    /// `Int64.max`: a journal's done line may claim any size its file has (a sparse file can claim
    /// 2^63 - 1), and the resume check keeps it, so adding two must not trap the run.
    typealias Tally = (done: Int, failed: Int, bytes: Int64, failuresByKind: [String: Int])

    func tally() -> Tally {
        var result: Tally = (done: 0, failed: 0, bytes: 0, failuresByKind: [:])
        state.withLock { state in
            for (position, outcome) in state.outcomes.enumerated() {
                switch outcome.code {
                case .none: break
                case .done:
                    result.done += 1
                    result.bytes.saturatingAdd(outcome.bytes)
                case .failed:
                    result.failed += 1
                    result.failuresByKind[state.errors[Int32(position)]?.kind ?? "unknown", default: 0] += 1
                case .kept, .revalidating:
                    // Carried over, so its line matched the catalog URL when the plan read it.
                    guard let kept = previous.record(for: records.id(at: position)) else { break }
                    if kept.status == .done {
                        result.done += 1
                        result.bytes.saturatingAdd(kept.bytes)
                    } else if kept.status == .failed {
                        result.failed += 1
                        result.failuresByKind[kept.error?.kind ?? "unknown", default: 0] += 1
                    }
                }
            }
        }
        return result
    }

}
