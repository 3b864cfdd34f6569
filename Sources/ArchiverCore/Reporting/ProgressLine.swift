import Foundation

/// The words the command prints about a run: live progress and the closing line.
package enum ProgressLine {
    /// The live line for a terminal: bar, counts, rate and ETA, e.g.
    /// `[#########...........]  2312/5000  2309 done, 3 failed  1180 images/s  ETA 2 s`.
    static func live(_ progress: Progress, seconds: Double, colour: Bool = false, width: Int = 20) -> String {
        let finished = progress.done + progress.failed
        let fraction = progress.total > 0 ? min(1, Double(finished) / Double(progress.total)) : 1
        let filled = Int((fraction * Double(width)).rounded(.down))
        let bar = "[" + String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled) + "]"
        let failed = "\(progress.failed) failed"
        return "\(bar)  " + plain(progress, seconds: seconds, failed: colour && progress.failed > 0 ? "\u{1B}[31m\(failed)\u{1B}[0m" : failed)
    }

    /// The periodic line for logs (no bar, no escape codes), e.g.
    /// `2312/5000  2309 done, 3 failed  1180 images/s  ETA 2 s`.
    static func plain(_ progress: Progress, seconds: Double, failed: String? = nil) -> String {
        let finished = progress.done + progress.failed
        let rate = seconds > 0 ? Double(finished) / seconds : 0
        var line = "\(finished)/\(progress.total)  \(progress.done) done, \(failed ?? "\(progress.failed) failed")  "
            + String(format: "%.0f images/s", rate)
        if rate > 0, finished < progress.total {
            line += "  ETA \(duration(Double(progress.total - finished) / rate))"
        }
        return line
    }

    /// The closing line, e.g. `5000 done, 0 failed, 16.9 MB in 2.1 s (2380 images/s)`, or, when
    /// this run had nothing to do, `5000 done, 0 failed, all already in the bundle (0.0 s)`.
    package static func closing(_ summary: RunSummary) -> String {
        let rate = summary.seconds > 0 ? Double(summary.progress.done) / summary.seconds : 0
        let idle = summary.progress.total == 0 && summary.progress.requests == 0
        var line =
            "\(summary.done) done, \(summary.failed) failed, "
            + (idle
                ? String(format: "all already in the bundle (%.1f s)", summary.seconds)
                : "\(ByteCount.format(summary.progress.bytes)) in "
                    + String(format: "%.1f s (%.0f images/s)", summary.seconds, rate))
        if summary.pending > 0 { line = "\(summary.pending) pending, " + line }
        if summary.refreshed {
            let progress = summary.progress
            line += "; refresh: \(progress.unchanged) unchanged, \(progress.changed) changed, \(progress.refreshFailed) failed"
                + (progress.refreshFailed > 0 ? " (old images kept)" : "")
        }
        return line
    }

    static func duration(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded(.up))
        if whole < 60 { return "\(whole) s" }
        if whole < 3600 { return "\(whole / 60) min \(whole % 60) s" }
        return "\(whole / 3600) h \(whole / 60 % 60) min"
    }
}
