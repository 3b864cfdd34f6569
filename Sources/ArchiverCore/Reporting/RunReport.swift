import Foundation

/// `archiver run --json`: the run's summary for machines. Times and rates live here, never in
/// the manifest, so the bundle stays reproducible.
public struct RunReport: Codable, Sendable, Equatable {
    /// What `--refresh` found: done items still the same (304, or the same bytes), replaced by
    /// new bytes, and not revalidated (network error, 5xx...; their old files are kept).
    public struct Refresh: Codable, Sendable, Equatable {
        public var unchanged: Int
        public var changed: Int
        public var failed: Int
    }

    public var done: Int
    public var failed: Int
    public var pending: Int
    public var failuresByKind: [String: Int]
    /// Requests and bytes of this run.
    public var requests: Int
    public var bytesFetched: Int64
    public var bundleBytes: Int64
    public var seconds: Double
    public var imagesPerSecond: Double
    public var interrupted: Bool
    public var exitStatus: Int32
    /// Present only for `run --refresh`.
    public var refresh: Refresh?
    /// Done items of a restored bundle (no journal) adopted without a request; present only then.
    public var adopted: Int?

    public init(summary: RunSummary, exitStatus: Int32) {
        done = summary.done
        failed = summary.failed
        pending = summary.pending
        failuresByKind = summary.failuresByKind
        requests = summary.progress.requests
        bytesFetched = summary.progress.bytes
        bundleBytes = summary.bundleBytes
        seconds = (summary.seconds * 1000).rounded() / 1000
        imagesPerSecond = summary.seconds > 0 ? (Double(summary.progress.done) / summary.seconds).rounded() : 0
        interrupted = summary.interrupted
        self.exitStatus = exitStatus
        if summary.refreshed {
            refresh = Refresh(
                unchanged: summary.progress.unchanged, changed: summary.progress.changed,
                failed: summary.progress.refreshFailed)
        }
        adopted = summary.adopted > 0 ? summary.adopted : nil
    }

    /// One JSON object and a newline.
    public func json() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var data = (try? encoder.encode(self)) ?? Data("{}".utf8)
        data.append(0x0A)
        return data
    }
}
