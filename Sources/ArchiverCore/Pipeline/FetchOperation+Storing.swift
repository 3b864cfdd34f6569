import Foundation

/// The writer's side of a `FetchOperation`: what happens to a body once its request is over.
extension FetchOperation {
    /// Validates a body and takes its SHA-256 (on the writer, or on the work queue with
    /// `--validate full`).
    func check(_ data: Data) -> Result<(info: ImageInfo, sha256: String), ItemError> {
        Result { () throws(ItemError) in try stages.validator.validate(data) }.map { (info: $0, sha256: SHA256.hex(data)) }
    }

    /// On the writer: stores a checked body, or records why it was refused.
    func keep(
        _ job: FetchJob, _ data: Data, _ checked: Result<(info: ImageInfo, sha256: String), ItemError>, attempts: Int,
        _ writer: RecordWriter
    ) {
        let facts: (info: ImageInfo, sha256: String)
        switch checked {
        case .success(let checked): facts = checked
        case .failure(let error): return fail(job, error, attempts: attempts, writer)
        }
        var records: [ItemRecord] = []
        var written: Int64 = 0
        for target in job.targets {
            do {
                let stamp = try writer.files.write(data, id: target.id)
                written += Int64(data.count)
                records.append(
                    ItemRecord(
                        id: target.id, url: target.url, source: job.address, status: .done,
                        bytes: Int64(data.count), sha256: facts.sha256, width: facts.info.width,
                        height: facts.info.height, attempts: attempts, file: stamp))
            } catch {
                records.append(failure(job, error, target: target, attempts: attempts))
            }
        }
        writer.record(records, bytes: written) { [self] in journaled() }
    }

    /// On the writer: every record sharing the URL is failed, and a file an earlier run left goes.
    func fail(_ job: FetchJob, _ error: ItemError, attempts: Int, note: String? = nil, _ writer: RecordWriter) {
        var records = job.targets.map { failure(job, error, target: $0, attempts: attempts) }
        if let note {
            for index in records.indices { records[index].error?.message += " (\(note))" }
        }
        for target in job.targets { writer.files.remove(id: target.id) }
        writer.record(records, bytes: 0) { [self] in journaled() }
    }

    func failure(_ job: FetchJob, _ error: ItemError, target: FetchJob.Target, attempts: Int) -> ItemRecord {
        ItemRecord(
            id: target.id, url: target.url, source: job.address, status: .failed,
            attempts: attempts, error: RecordedError(error))
    }
}
