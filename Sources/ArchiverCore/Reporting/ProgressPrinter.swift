import Dispatch
import Foundation
import Synchronization

/// Prints a run's progress while it goes on. On a terminal: one live line redrawn at most 10
/// times a second, coloured unless `NO_COLOR` is set. Elsewhere (CI logs): a plain line every
/// 5 seconds.
package final class ProgressPrinter: Sendable {
    /// Where and how progress is shown.
    package struct Style: Sendable {
        var terminal: Bool
        var colour: Bool
        var interval: Double

        /// The style for standard error in this environment.
        package static func standardError(environment: [String: String] = ProcessInfo.processInfo.environment) -> Style {
            let terminal = isatty(STDERR_FILENO) == 1
            return Style(terminal: terminal, colour: terminal && environment["NO_COLOR"] == nil, interval: terminal ? 0.1 : 5)
        }

        init(terminal: Bool, colour: Bool, interval: Double) {
            self.terminal = terminal
            self.colour = colour
            self.interval = interval
        }
    }

    private let queue = DispatchQueue(label: "archiver.progress")
    /// Set by `stop`, on `queue`: no line is written after it.
    private let stopped = Atomic<Bool>(false)
    private let style: Style
    private let write: @Sendable (String) -> Void

    /// Starts printing `progress()` every `style.interval` seconds through `write`.
    package convenience init(
        style: Style, progress: @escaping @Sendable () -> Progress,
        write: @escaping @Sendable (String) -> Void = { try? FileHandle.standardError.write(contentsOf: Data($0.utf8)) }
    ) {
        self.init(
            style: style,
            line: { seconds in
                style.terminal
                    ? ProgressLine.live(progress(), seconds: seconds, colour: style.colour) : ProgressLine.plain(progress(), seconds: seconds)
            }, write: write)
    }

    /// Starts printing `line(seconds)` every `style.interval` seconds: redrawn on a terminal,
    /// a plain line each time elsewhere.
    package init(
        style: Style, line: @escaping @Sendable (_ seconds: Double) -> String,
        write: @escaping @Sendable (String) -> Void = { try? FileHandle.standardError.write(contentsOf: Data($0.utf8)) }
    ) {
        self.style = style
        self.write = write
        let started = DispatchTime.now()
        tick {
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9
            return style.terminal ? "\r\u{1B}[2K" + line(seconds) : line(seconds) + "\n"
        }
    }

    /// Writes `text()` every `style.interval` seconds, on `queue`, until `stop`.
    private func tick(_ text: @escaping @Sendable () -> String) {
        queue.asyncAfter(deadline: .now() + style.interval) { [self] in
            guard !stopped.load(ordering: .relaxed) else { return }
            write(text())
            tick(text)
        }
    }

    /// Stops printing and clears the live line. Runs on the queue the lines are written on, so
    /// none can come after it.
    package func stop() {
        queue.sync {
            stopped.store(true, ordering: .relaxed)
            if style.terminal { write("\r\u{1B}[2K") }
        }
    }
}
