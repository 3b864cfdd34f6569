import ArchiverCore
import Dispatch
import Foundation

/// Prints progress on stderr while a run goes on: one live line on a terminal (at most 10 updates
/// a second), a plain line every 5 s otherwise (CI logs).
final class ProgressPrinter: @unchecked Sendable {
    private let timer: any DispatchSourceTimer
    private let terminal = isatty(STDERR_FILENO) == 1
    private let started = DispatchTime.now()

    init(archiver: Archiver) {
        timer = DispatchSource.makeTimerSource(queue: .global())
        let interval: DispatchTimeInterval = terminal ? .milliseconds(100) : .seconds(5)
        timer.schedule(deadline: .now() + interval, repeating: interval)
        timer.setEventHandler { [self] in
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9
            let line = ProgressLine.live(archiver.progress, seconds: seconds)
            if terminal {
                writeError("\r\u{1B}[2K" + line)
            } else {
                writeError(line + "\n")
            }
        }
        timer.resume()
    }

    func stop() {
        timer.cancel()
        if terminal { writeError("\r\u{1B}[2K") }
    }
}

func writeError(_ text: String) {
    FileHandle.standardError.write(Data(text.utf8))
}

func printError(_ line: String) {
    writeError(line + "\n")
}

/// Prints `archiver: <message>` and returns the usage/catalog exit status.
func fail(_ message: String) -> Int32 {
    printError("archiver: \(message)")
    return 2
}
