import Foundation
import Glibc
import XCTest
@testable import ArchiverCore
@testable import ArchiverServer

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

    /// Through the binary with stderr on a pseudo-terminal (off a terminal colour is off anyway,
    /// which is where CI runs, so only a terminal can tell NO_COLOR's effect): the live line
    /// shows a failure in red, and with NO_COLOR set it does not.
    func testNoColorTurnsColourOffOnATerminal() throws {
        let coloured = try progressOnATerminal(noColor: false)
        XCTAssertTrue(coloured.contains("\r\u{1B}[2K["), "a live line: stderr is a terminal: \(coloured.debugDescription)")
        XCTAssertTrue(coloured.contains("\u{1B}[31m1 failed\u{1B}[0m"), coloured.debugDescription)
        let plain = try progressOnATerminal(noColor: true)
        XCTAssertTrue(plain.contains("\r\u{1B}[2K["), "a live line: stderr is a terminal: \(plain.debugDescription)")
        XCTAssertTrue(plain.contains("1 failed"), plain.debugDescription)
        XCTAssertFalse(plain.contains("\u{1B}[31m"), "NO_COLOR: \(plain.debugDescription)")
    }

    /// Runs two records, one a 404 and one held at the server until the live line has shown the
    /// failure, with stderr on a new pseudo-terminal; returns what the terminal received.
    private func progressOnATerminal(noColor: Bool) throws -> String {
        let server = try Fixtures.placeholderServer()
        let gate = DispatchSemaphore(value: 0)
        server.route("/600/000404", .text(404, "gone\n"))
        server.route("/600/00c0de") { _ in
            gate.wait()
            return .png(Fixtures.served("/600/00c0de"))
        }
        let dir = Fixtures.temporaryDirectory(self)
        let catalog = try Fixtures.writeCatalog(
            [Fixtures.record(1, colour: "000404"), Fixtures.record(2, colour: "00c0de")], to: dir.appendingPathComponent("c.json"))

        // posix_openpt and friends are not imported into Swift: /dev/ptmx and the two ioctls they
        // wrap (TIOCSPTLCK to unlock the other side, TIOCGPTN for its number).
        let master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC)
        var unlock: Int32 = 0
        var number: UInt32 = 0
        guard master >= 0, ioctl(master, 0x4004_5431, &unlock) == 0, ioctl(master, 0x8004_5430, &number) == 0,
              let terminal = FileHandle(forUpdatingAtPath: "/dev/pts/\(number)") else {
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .ENOTTY)
        }
        let received = Locked(Data())
        let seen = DispatchSemaphore(value: 0)
        let drained = DispatchSemaphore(value: 0)
        Thread {
            var buffer = [UInt8](repeating: 0, count: 4096)
            var signalled = false
            while true {
                let n = read(master, &buffer, buffer.count)
                if n <= 0 { break }  // EIO once the last holder of the terminal's other side closes it
                let text = received.withLock { data -> String in
                    data.append(contentsOf: buffer[..<n])
                    return String(decoding: data, as: UTF8.self)
                }
                if !signalled && text.contains("1 failed") {
                    signalled = true
                    seen.signal()
                }
            }
            drained.signal()
        }.start()

        let process = Process()
        process.executableURL = CommandRunner.executable
        process.arguments = ["run", "--catalog", catalog, "--out", dir.appendingPathComponent("out").path, "--retries", "0",
                             "--mirror", "\(Fixtures.host)=\(server.baseURL)"]
        var environment = ProcessInfo.processInfo.environment
        environment["NO_COLOR"] = noColor ? "1" : nil
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = terminal
        try process.run()
        try terminal.close()
        // The event, not a time: the live line has shown the 404 as "1 failed" (the bound is
        // only there so a broken run fails the test instead of hanging it).
        XCTAssertEqual(seen.wait(timeout: .now() + 60), .success, "the live line never showed 1 failed")
        gate.signal()
        process.waitUntilExit()
        XCTAssertEqual(drained.wait(timeout: .now() + 60), .success)
        close(master)
        XCTAssertEqual(process.terminationStatus, 1, "one item failed")
        return received.withLock { String(decoding: $0, as: UTF8.self) }
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
        wait(for: [enough], timeout: 30)
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
