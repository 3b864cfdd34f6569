import Foundation

/// The writer's side of a `FetchOperation`: what happens to a body once its request is over.
extension FetchOperation {
    /// Validates a body and takes its SHA-256 (on the writer, or on the work queue with
    /// `--validate full`).
    func check(_ data: Data) -> Result<(info: ImageInfo, sha256: String), ItemError> {
        Result { () throws(ItemError) in try stages.validator.validate(data) }.map { (info: $0, sha256: SHA256.hex(data)) }
    }

    /// On the writer: stores a checked body, or records why it was refused.
    ///
    /// A target being revalidated (`--refresh`) whose file already holds these bytes is not
    /// written again: it keeps its file, and gets a journal line only if the validators changed.
    func keep(
        _ job: FetchJob, _ data: Data, _ checked: Result<(info: ImageInfo, sha256: String), ItemError>,
        validators: Validators, attempts: Int, _ writer: RecordWriter
    ) {
        let facts: (info: ImageInfo, sha256: String)
        switch checked {
        case .success(let checked): facts = checked
        case .failure(let error): return fail(job, error, attempts: attempts, writer)
        }
        var records: [ItemRecord] = []
        var written: Int64 = 0
        var same: [RecordID] = []
        var changed = 0, revalidated = 0
        for target in job.targets {
            if let previous = target.previous, previous.bytes == Int64(data.count), previous.sha256 == facts.sha256 {
                if previous.validators == validators {
                    same.append(target.id)
                } else {
                    var record = previous
                    record.validators = validators
                    records.append(record)
                    revalidated += 1
                }
                continue
            }
            do {
                let stamp = try writer.files.write(data, id: target.id)
                written += Int64(data.count)
                records.append(
                    ItemRecord(
                        id: target.id, url: target.url, source: job.address, status: .done,
                        bytes: Int64(data.count), sha256: facts.sha256, width: facts.info.width,
                        height: facts.info.height, attempts: attempts, file: stamp, validators: validators))
                if target.previous != nil { changed += 1 }
            } catch {
                // The write failed: a revalidated target's old file is still in place and stands.
                if target.previous != nil {
                    stages.ledger.revalidated([target.id], .failed(RecordedError(error)))
                } else {
                    records.append(failure(job, error, target: target, attempts: attempts))
                }
            }
        }
        if !same.isEmpty { stages.ledger.revalidated(same, .unchanged) }
        if changed + revalidated > 0 { stages.ledger.countRevalidated(changed: changed, unchanged: revalidated) }
        writer.record(records, bytes: written) { [self] in journaled() }
    }

    /// On the writer: every record sharing the URL is failed, and a file an earlier run left goes;
    /// except a done item being revalidated, which keeps its file and its done line (a refresh
    /// never loses an image it had).
    func fail(_ job: FetchJob, _ error: ItemError, attempts: Int, note: String? = nil, _ writer: RecordWriter) {
        var recorded = RecordedError(error)
        if let note { recorded.message += " (\(note))" }
        let kept = job.targets.filter { $0.previous != nil }.map(\.id)
        if !kept.isEmpty { stages.ledger.revalidated(kept, .failed(recorded)) }
        var records: [ItemRecord] = []
        for target in job.targets where target.previous == nil {
            var record = failure(job, error, target: target, attempts: attempts)
            record.error = recorded
            records.append(record)
            writer.files.remove(id: target.id)
        }
        writer.record(records, bytes: 0) { [self] in journaled() }
    }

    func failure(_ job: FetchJob, _ error: ItemError, target: FetchJob.Target, attempts: Int) -> ItemRecord {
        ItemRecord(
            id: target.id, url: target.url, source: job.address, status: .failed,
            attempts: attempts, error: RecordedError(error))
    }
}
