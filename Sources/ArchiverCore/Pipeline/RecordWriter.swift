import Dispatch
import Foundation

/// What a fetch operation hands the loop (and it the writer) for one URL: its body, or why it failed for good.
struct Delivery: Sendable {
    enum Content: Sendable {
        case body(Data, validators: Validators)
        /// Every record sharing the URL fails; `note` is added to the message.
        case failed(ItemError, note: String?)
    }

    let job: FetchJob
    let attempts: Int
    let content: Content
}

/// A body's check: what the validator found and its SHA-256, or why it was refused.
typealias Checked = Result<(info: ImageInfo, sha256: SHA256Digest), ItemError>

/// What validates bodies, writes image files and journal lines, in that order: part of the
/// `FetchLoop`'s state, used only on its queue.
///
/// The loop hands it each URL's outcome with `keep`; it validates a body, stores a file for
/// every record sharing the URL (or fails them) and holds their journal lines, which wait until
/// the loop has nothing else queued or a batch is full (`isFull`), then go out in one write
/// (`commit`): one directory fsync and one journal fsync per batch with `--durable`. Only after
/// the lines are written do the outcomes reach the ledger. Creating files in one directory from
/// many threads only contends on the directory's lock, which is why there is one writer.
///
/// A batch is small (`batchLimit`) unless the run is durable: a job may have only three URLs
/// between request and journal line, so while the writer is busy, every line it holds back
/// can stall a job's next request (bench/README.md has the measurement). A durable commit
/// costs two fsyncs, so there batches stay large.
struct RecordWriter {
    private let journal: Journal
    private let files: KeyedStore
    private let ledger: Ledger
    private let validator: any ImageValidating
    private var pending: [ItemRecord] = []
    /// The catalog positions of `pending`'s records.
    private var pendingPositions: [Int32] = []
    private var pendingBytes: Int64 = 0
    /// Revalidated records whose image changed format: their old file goes once the new is journaled.
    private var pendingFormatChanges: [RecordID] = []
    /// Deliveries kept since the last commit.
    private var delivered = 0
    private let batchLimit: Int

    init(journal: Journal, store: KeyedStore, ledger: Ledger, validator: any ImageValidating, durable: Bool = false) {
        self.journal = journal
        files = store
        self.ledger = ledger
        self.validator = validator
        batchLimit = durable ? 64 : 4
    }

    /// Whether the lines held back make a batch.
    var isFull: Bool { pending.count >= batchLimit }

    /// A body's check, on any thread: what `validator` found and its SHA-256, or why it was refused.
    static func check(_ data: Data, with validator: any ImageValidating) -> Checked {
        Result { () throws(ItemError) in try validator.validate(data) }.map { (info: $0, sha256: SHA256Digest.of(data)) }
    }

    /// Stores a delivered body (`checked` already, or checked here), or records why it was refused.
    ///
    /// A target being revalidated (`--refresh`) whose file already holds these bytes is not
    /// written again: it keeps its file, and gets a journal line only if the validators changed.
    mutating func keep(_ delivery: Delivery, checked: Checked?) {
        delivered += 1
        let job = delivery.job, attempts = delivery.attempts
        let data: Data, validators: Validators
        switch delivery.content {
        case .failed(let error, let note): return fail(job, error, attempts: attempts, note: note)
        case .body(let body, let sent): (data, validators) = (body, sent)
        }
        let facts: (info: ImageInfo, sha256: SHA256Digest)
        switch checked ?? Self.check(data, with: validator) {
        case .success(let checked): facts = checked
        case .failure(let error): return fail(job, error, attempts: attempts)
        }
        var records: [ItemRecord] = []
        var positions: [Int32] = []
        var written: Int64 = 0
        var same: [Int32] = []
        var changed = 0, revalidated = 0
        for target in job.targets {
            if let expected = target.expectedSHA256, !SHA256.matches(expected, facts.sha256) {
                let error = ItemError.checksumMismatch(expected: expected, actual: facts.sha256.hex, url: job.address)
                // Never stored: a revalidated target keeps the file it had, a new one gets none.
                if target.previous != nil {
                    ledger.revalidated([target.position], .failed(RecordedError(error)))
                } else {
                    records.append(failure(job, error, target: target, attempts: attempts))
                    positions.append(target.position)
                    files.remove(id: target.id)
                }
                continue
            }
            if let previous = target.previous, previous.bytes == Int64(data.count), previous.sha256 == facts.sha256 {
                if previous.validators == validators {
                    same.append(target.position)
                } else {
                    var record = previous
                    record.validators = validators
                    records.append(record)
                    positions.append(target.position)
                    revalidated += 1
                }
                continue
            }
            do {
                let stamp = try store(data, id: target.id, format: facts.info.format)
                written += Int64(data.count)
                records.append(
                    ItemRecord(
                        id: target.id, url: target.url, source: job.address, status: .done,
                        bytes: Int64(data.count), sha256: facts.sha256, width: facts.info.width,
                        height: facts.info.height, attempts: attempts, file: stamp, validators: validators,
                        format: facts.info.format, frames: facts.info.frames))
                positions.append(target.position)
                if let previous = target.previous {
                    changed += 1
                    if previous.format != facts.info.format { pendingFormatChanges.append(target.id) }
                }
            } catch {
                // The write failed: a revalidated target's old file is still in place and stands.
                if target.previous != nil {
                    ledger.revalidated([target.position], .failed(RecordedError(error)))
                } else {
                    records.append(failure(job, error, target: target, attempts: attempts))
                    positions.append(target.position)
                }
            }
        }
        if !same.isEmpty { ledger.revalidated(same, .unchanged) }
        if changed + revalidated > 0 { ledger.countRevalidated(changed: changed, unchanged: revalidated) }
        record(records, at: positions, bytes: written)
    }

    /// Writes `data` as the file of `id`: where a file-system failure becomes the item's `io`
    /// outcome (with the failure's message).
    private func store(_ data: Data, id: RecordID, format: ImageFormat) throws(ItemError) -> FileStamp? {
        // The plan fails an unsafe id before its URL is fetched; this is the last guard.
        guard let name = KeyedStore.fileName(for: id, format: format) else { throw .unsafeKey("the id \(id)") }
        do {
            return try files.write(data, named: name)
        } catch {
            throw ItemError(error)
        }
    }

    /// Every record sharing the URL is failed, and a file an earlier run left goes;
    /// except a done item being revalidated, which keeps its file and its done line (a refresh
    /// never loses an image it had).
    private mutating func fail(_ job: FetchJob, _ error: ItemError, attempts: Int, note: String? = nil) {
        var recorded = RecordedError(error)
        if let note { recorded.message += " (\(note))" }
        let kept = job.targets.filter { $0.previous != nil }.map(\.position)
        if !kept.isEmpty { ledger.revalidated(kept, .failed(recorded)) }
        var records: [ItemRecord] = []
        var positions: [Int32] = []
        for target in job.targets where target.previous == nil {
            var record = failure(job, error, target: target, attempts: attempts)
            record.error = recorded
            records.append(record)
            positions.append(target.position)
            files.remove(id: target.id)
        }
        record(records, at: positions, bytes: 0)
    }

    private func failure(_ job: FetchJob, _ error: ItemError, target: FetchJob.Target, attempts: Int) -> ItemRecord {
        ItemRecord(
            id: target.id, url: target.url, source: job.address, status: .failed,
            attempts: attempts, error: RecordedError(error))
    }

    /// The store's files are in place; journal `records` (at `positions` in the catalog) with the next batch.
    private mutating func record(_ records: [ItemRecord], at positions: [Int32], bytes: Int64) {
        pending += records
        pendingPositions += positions
        pendingBytes += bytes
    }

    /// Writes the lines held back in one append, then hands their outcomes to the ledger.
    mutating func commit() {
        guard delivered > 0 else { return }
        var records = pending
        var bytes = pendingBytes
        do {
            try journal.append(records)
        } catch {
            // Not journaled means not done: the files go, and the items are failed as `io`.
            for index in records.indices where records[index].status == .done {
                files.remove(id: records[index].id)
                records[index].status = .failed
                records[index].error = RecordedError(ItemError(error))
            }
            bytes = 0
        }
        // A revalidated image that changed format (its URL served a PNG before and a JPEG now)
        // loses its old file only once the line naming the new one is written: until then the
        // old line and its file stand. Only these pay the unlinks (three a record cost 5% of a
        // run's CPU); a file left by a run killed between the two is named by `verify` and
        // removed by `--prune`.
        for id in pendingFormatChanges {
            guard let record = records.first(where: { $0.id == id }), record.status == .done else { continue }
            files.remove(id: id, except: record.format)
        }
        pendingFormatChanges = []
        ledger.record(records, at: pendingPositions, bytes: bytes)
        pending = []
        pendingPositions = []
        pendingBytes = 0
        delivered = 0
    }
}
