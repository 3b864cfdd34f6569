import Foundation
import XCTest
@testable import ArchiverCore

/// Progress fit for where it runs: a live line on a terminal, plain lines in logs, nothing with --quiet.
final class ProgressTests: XCTestCase {
    private let midway = Progress(done: 2309, failed: 3, total: 5000, bytes: 0, requests: 2312)

    func testLiveLineHasABarCountsRateAndETA() {
        let line = ProgressLine.live(midway, seconds: 2)
        XCTAssertTrue(line.hasPrefix("[#########..........."), line)
        XCTAssertTrue(line.contains("2312/5000  2309 done, 3 failed  1156 images/s  ETA 3 s"), line)
        XCTAssertTrue(ProgressLine.live(midway, seconds: 2, colour: true).contains("\u{1B}[31m3 failed\u{1B}[0m"))
        XCTAssertFalse(line.contains("\u{1B}"), "no colour unless asked")
        XCTAssertEqual(ProgressLine.duration(3700), "1 h 1 min")
    }

    func testClosingLineSaysWhatThisRunDid() {
        var fetched = RunSummary(progress: Progress(done: 5000, failed: 0, total: 5000, bytes: 16_900_000, requests: 4996))
        fetched.done = 5000
        fetched.seconds = 2.1
        XCTAssertEqual(ProgressLine.closing(fetched), "5000 done, 0 failed, 16.9 MB in 2.1 s (2381 images/s)")
        var rerun = RunSummary(progress: Progress())
        rerun.done = 5000
        rerun.seconds = 0.04
        XCTAssertEqual(ProgressLine.closing(rerun), "5000 done, 0 failed, all already in the bundle (0.0 s)")
    }

    func testLogModePrintsPlainLinesWithoutEscapes() {
        let lines = collect(style: ProgressPrinter.Style(terminal: false, colour: false, interval: 0.01), count: 3)
        XCTAssertGreaterThanOrEqual(lines.count, 3)
        for line in lines {
            XCTAssertTrue(line.hasSuffix("\n"))
            XCTAssertFalse(line.contains("\r") || line.contains("\u{1B}"), line)
            XCTAssertTrue(line.hasPrefix("2312/5000  2309 done"), line)
        }
    }

    func testTerminalModeRedrawsOneLine() {
        let lines = collect(style: ProgressPrinter.Style(terminal: true, colour: true, interval: 0.01), count: 2)
        XCTAssertTrue(lines[0].hasPrefix("\r\u{1B}[2K["), lines[0])
        XCTAssertFalse(lines[0].contains("\n"))
        XCTAssertEqual(lines.last, "\r\u{1B}[2K", "stop() clears the line")
    }

    func testNoColorTurnsColourOff() {
        XCTAssertFalse(ProgressPrinter.Style.standardError(environment: ["NO_COLOR": "1"]).colour)
    }

    /// Starts a printer, waits for `count` writes, stops it; returns everything written.
    private func collect(style: ProgressPrinter.Style, count: Int) -> [String] {
        let written = Locked<[String]>([])
        let enough = expectation(description: "\(count) progress writes")
        enough.assertForOverFulfill = false
        let midway = self.midway
        let printer = ProgressPrinter(style: style, progress: { midway }) { text in
            let total = written.withLock { lines in
                lines.append(text)
                return lines.count
            }
            if total >= count { enough.fulfill() }
        }
        wait(for: [enough], timeout: 5)
        printer.stop()
        return written.withLock { $0 }
    }

    func testCommandOutputInLogsQuietAndJSON() throws {
        let server = try Fixtures.placeholderServer()
        let dir = Fixtures.temporaryDirectory(self)
        let catalog = try Fixtures.writeCatalog(Fixtures.records(5), to: dir.appendingPathComponent("c.json"))
        let base = ["run", "--catalog", catalog, "--mirror", "\(Fixtures.host)=\(server.baseURL)"]

        let logged = try CommandRunner.run(base + ["--out", dir.appendingPathComponent("a").path])
        XCTAssertEqual(logged.status, 0)
        XCTAssertFalse(logged.stderr.contains("\r") || logged.stderr.contains("\u{1B}"), "no terminal codes in logs")
        XCTAssertTrue(logged.stderr.hasSuffix("images/s)\n"), logged.stderr)

        let quiet = try CommandRunner.run(base + ["--out", dir.appendingPathComponent("b").path, "--quiet"])
        XCTAssertEqual(quiet.status, 0)
        XCTAssertEqual(quiet.stderr, "")

        let json = try CommandRunner.run(base + ["--out", dir.appendingPathComponent("c").path, "--quiet", "--json"])
        let report = try JSONDecoder().decode(RunReport.self, from: Data(json.stdout.utf8))
        XCTAssertEqual(report.done, 5)
        XCTAssertEqual(report.requests, 5)
        XCTAssertEqual(report.exitStatus, 0)
        XCTAssertFalse(report.interrupted)
    }
}
