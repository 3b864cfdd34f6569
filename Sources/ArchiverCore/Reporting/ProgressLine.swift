import Foundation

/// The words the command prints about a run: live progress and the closing line.
public enum ProgressLine {
    /// One progress line, e.g. `1234/5000  1230 done, 4 failed  2380 images/s`.
    public static func live(_ progress: Progress, seconds: Double) -> String {
        let finished = progress.done + progress.failed
        let rate = seconds > 0 ? Double(finished) / seconds : 0
        return "\(finished)/\(progress.total)  \(progress.done) done, \(progress.failed) failed  "
            + String(format: "%.0f images/s", rate)
    }

    /// The closing line, e.g. `5000 done, 0 failed, 16.9 MB in 2.1 s (2380 images/s)`.
    public static func closing(_ summary: RunSummary) -> String {
        let rate = summary.seconds > 0 ? Double(summary.progress.done) / summary.seconds : 0
        var line =
            "\(summary.done) done, \(summary.failed) failed, \(ByteCount.format(summary.progress.bytes)) in "
            + String(format: "%.1f s (%.0f images/s)", summary.seconds, rate)
        if summary.pending > 0 { line = "\(summary.pending) pending, " + line }
        return line
    }
}
