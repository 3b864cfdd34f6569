import Foundation

/// One download: a distinct URL to fetch and every record that needs its body.
public struct FetchJob: Sendable {
    /// A record that gets its file from this job's body.
    public struct Target: Sendable, Equatable {
        public var id: Int
        /// The catalog URL of this record (before `--mirror`).
        public var url: String
    }

    public var source: URL
    public var targets: [Target]
}

/// What a run must do, derived from the catalog and what the journal says is already done.
public struct Plan: Sendable {
    /// Outcomes carried over from earlier runs (done with the file intact, or kept failures).
    public var kept: [Int: ItemRecord] = [:]
    /// Records that failed before any request (a URL that is not http(s)).
    public var rejected: [ItemRecord] = []
    /// Records journaled as done for a URL the catalog no longer has: their old line must be
    /// superseded before anything is fetched, or a kill before the new outcome is journaled
    /// would leave it vouching for a file that now holds other bytes.
    public var invalidated: [ItemRecord] = []
    public var jobs: [FetchJob] = []
    /// Records to attempt this run.
    public var pendingRecords = 0
    /// Of those, records that failed in an earlier run and are tried again.
    public var retryingFailures = 0

    /// Groups records by the URL to fetch (so each distinct URL is requested once) and skips
    /// records whose journaled file is still there with the recorded size.
    public init(
        catalog: Catalog, field: ImageField, mirrors: MirrorMap, journal: JournalIndex,
        skipFailed: Bool, fileSize: (Int) -> Int64?
    ) {
        var jobIndex: [String: Int] = [:]
        jobIndex.reserveCapacity(catalog.records.count)
        kept.reserveCapacity(journal.count)
        for record in catalog.records {
            let url = record.url(for: field)
            let previous = journal.record(for: record.id)
            if let previous, previous.url != url, previous.status == .done {
                invalidated.append(ItemRecord(id: record.id, url: previous.url, source: previous.source, status: .pending))
            }
            if let previous, previous.url == url {
                if previous.status == .done, fileSize(record.id) == previous.bytes {
                    kept[record.id] = previous
                    continue
                }
                if previous.status == .failed {
                    if skipFailed {
                        kept[record.id] = previous
                        continue
                    }
                    retryingFailures += 1
                }
            }
            let source = mirrors.resolve(url)
            guard let fetchURL = Self.httpURL(source) else {
                rejected.append(
                    ItemRecord(
                        id: record.id, url: url, source: source, status: .failed,
                        error: RecordedError(ItemError.invalidURL(source))))
                continue
            }
            pendingRecords += 1
            let target = FetchJob.Target(id: record.id, url: url)
            if let index = jobIndex[source] {
                jobs[index].targets.append(target)
            } else {
                jobIndex[source] = jobs.count
                jobs.append(FetchJob(source: fetchURL, targets: [target]))
            }
        }
    }

    /// The URL if it is an absolute http(s) URL with a host; the archiver never reads local files.
    static func httpURL(_ text: String) -> URL? {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = url.host, !host.isEmpty
        else { return nil }
        return url
    }
}
