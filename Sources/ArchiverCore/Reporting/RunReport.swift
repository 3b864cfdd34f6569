import Foundation

/// `archiver run --json`: the run's summary for machines. Times and rates live here, never in
/// the manifest, so the bundle stays reproducible.
public struct RunReport: Codable, Sendable, Equatable {
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
