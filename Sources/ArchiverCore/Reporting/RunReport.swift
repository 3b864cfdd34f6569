import Foundation

/// `archiver run --json`: the run's summary for machines. Times and rates live here, never in
/// the manifest, so the bundle stays reproducible.
package struct RunReport: Codable, Sendable, Equatable {
    /// What `--refresh` found: done items still the same (304, or the same bytes), replaced by
    /// new bytes, and not revalidated (network error, 5xx...; their old files are kept).
    struct Refresh: Codable, Sendable, Equatable {
        var unchanged: Int
        var changed: Int
        var failed: Int
    }

    var done: Int
    var failed: Int
    var pending: Int
    var failuresByKind: [String: Int]
    /// Requests and bytes of this run.
    var requests: Int
    var bytesFetched: Int64
    /// Bytes of every done item's file, this run's and earlier ones'.
    var bundleBytes: Int64
    /// Wall time of the run.
    var seconds: Double
    var imagesPerSecond: Double
    var interrupted: Bool
    var exitStatus: Int32
    /// Present only for `run --refresh`.
    var refresh: Refresh?
    /// Done items of a restored bundle (no journal) adopted without a request; present only then.
    var adopted: Int?

    package init(summary: RunSummary, exitStatus: Int32) {
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
    package func json() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var data = (try? encoder.encode(self)) ?? Data("{}".utf8)
        data.append(0x0A)
        return data
    }
}
