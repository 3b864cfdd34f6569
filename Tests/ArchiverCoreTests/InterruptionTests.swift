import Foundation
import XCTest
@testable import ArchiverCore
@testable import ArchiverServer

/// The binary under SIGINT, SIGTERM and SIGKILL at random moments: the next run always finishes
/// the job with every file whole.
final class InterruptionTests: XCTestCase {
    func testSIGINTStopsWithoutWaitingForRequestsInFlightExits130AndLeavesAResumableBundle() throws {
        try assertSignalStopsCleanly(SIGINT, status: 130)
    }

    func testSIGTERMExits143() throws {
        try assertSignalStopsCleanly(SIGTERM, status: 143)
    }

    /// GNU `timeout` signals the run and then its process group, which holds the run: the same
    /// stop arrives twice, moments apart, and must not cut the clean stop short (no manifest,
    /// no closing lines), as a second signal seconds later does.
    func testASignalRepeatedAtOnceAsTimeoutSendsItStillWritesTheManifest() throws {
        let server = try Fixtures.placeholderServer()
        let out = Fixtures.temporaryDirectory(self)
        // Enough records that writing their manifest and pages outlasts the gap between the signals.
        let records = Fixtures.records(20_000)
        let catalog = try Fixtures.writeCatalog(records, to: out.deletingLastPathComponent().appendingPathComponent("\(out.lastPathComponent).json"))
        addTeardownBlock { try? FileManager.default.removeItem(atPath: catalog) }
        server.holdRequests()
        defer { server.release() }
        let err = Pipe()
        let process = try CommandRunner.start(
            ["run", "--catalog", catalog, "--out", out.path, "--concurrency", "4", "--mirror", "\(Fixtures.host)=\(server.baseURL)"],
            stderr: err)
        XCTAssertTrue(server.waitUntilInFlight(4, timeout: 60), "the run put 4 requests in flight")
        kill(process.processIdentifier, SIGTERM)
        usleep(20_000)
        kill(process.processIdentifier, SIGTERM)
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 143)
        XCTAssertTrue(stderr.contains("interrupted: 20000 items not fetched yet"), stderr)
        let manifest = try Fixtures.manifest(in: out)
        XCTAssertEqual(manifest.items.count, records.count)
        XCTAssertTrue(manifest.items.allSatisfy { $0.status == .pending })
    }

    private func assertSignalStopsCleanly(_ signal: Int32, status: Int32) throws {
        let server = try Fixtures.placeholderServer()
        let out = Fixtures.temporaryDirectory(self)
        let catalog = try Fixtures.writeCatalog(Fixtures.records(50), to: out.deletingLastPathComponent().appendingPathComponent("\(out.lastPathComponent).json"))
        addTeardownBlock { try? FileManager.default.removeItem(atPath: catalog) }
        let arguments = ["run", "--catalog", catalog, "--out", out.path, "--concurrency", "4", "--mirror", "\(Fixtures.host)=\(server.baseURL)"]
        server.holdRequests()
        let err = Pipe()
        let process = try CommandRunner.start(arguments, stderr: err)
        XCTAssertTrue(server.waitUntilInFlight(4, timeout: 20), "the run put 4 requests in flight")
        let exited = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in exited.signal() }
        kill(process.processIdentifier, signal)
        // The 4 requests stay held at the server until the process has exited: it stopped by
        // cancelling them, not by waiting for them. (The bound is only so that a run that never
        // exits fails the test instead of hanging it.)
        XCTAssertEqual(exited.wait(timeout: .now() + 60), .success, "exited with its requests still held at the server")
        XCTAssertEqual(server.inFlight, 4, "the held requests were not answered before the exit")
        server.release()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, status)
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertTrue(stderr.contains("run the same command again to resume"), stderr)
        let manifest = try Fixtures.manifest(in: out)
        XCTAssertEqual(manifest.items.count, 50)
        XCTAssertEqual(manifest.items.filter { $0.status == .pending }.count, 50)
        XCTAssertEqual(Fixtures.imageNames(in: out), [])

        let resumed = try CommandRunner.run(arguments)
        XCTAssertEqual(resumed.status, 0, resumed.stderr)
        XCTAssertEqual(try Fixtures.manifest(in: out).items.filter { $0.status == .done }.count, 50)
    }

    /// SIGKILL after a random number of requests, several times, then a run to the end.
    func testRandomSIGKILLsNeverLeaveAHalfWrittenFileTakenForDone() throws {
        let records = Fixtures.records(300) + [Fixtures.record(301, colour: String(format: "%06x", 1 * 2_654_435 % 0xFFFFFF))]
        let distinct = 300
        let killAt = Locked<(count: Int, target: Int)>((0, .max))
        let reached = DispatchSemaphore(value: 0)
        let server = try TestServer { request in
            let hit = killAt.withLock { state -> Bool in
                state.count += 1
                return state.count == state.target
            }
            if hit { reached.signal() }
            return Fixtures.images.respond(to: request)
        }
        let out = Fixtures.temporaryDirectory(self)
        let catalog = try Fixtures.writeCatalog(records, to: out.deletingLastPathComponent().appendingPathComponent("\(out.lastPathComponent).json"))
        addTeardownBlock { try? FileManager.default.removeItem(atPath: catalog) }
        let arguments = ["run", "--catalog", catalog, "--out", out.path, "--concurrency", "8", "--quiet", "--mirror", "\(Fixtures.host)=\(server.baseURL)"]

        var kills = 0
        var generator = SeededGenerator()
        for _ in 0..<8 {
            let before = killAt.withLock { $0.count }
            let target = before + Int.random(in: 1...40, using: &generator)
            killAt.withLock { $0.target = target }
            let process = try CommandRunner.start(arguments)
            let exited = DispatchSemaphore(value: 0)
            process.terminationHandler = { _ in exited.signal() }
            // Either the server reaches the target and we kill, or the run finished first.
            while reached.wait(timeout: .now() + 0.01) == .timedOut {
                if exited.wait(timeout: .now()) == .success { break }
            }
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                kills += 1
            }
            process.waitUntilExit()
            _ = reached.wait(timeout: .now())
            XCTAssertTrue(Fixtures.imageNames(in: out).allSatisfy { $0.hasSuffix(".png") || $0.hasPrefix(".partial-") })
        }
        killAt.withLock { $0.target = .max }

        let final = try CommandRunner.run(arguments)
        XCTAssertEqual(final.status, 0, final.stderr)
        XCTAssertEqual(Fixtures.imageNames(in: out), records.map { "\($0.id).png" }.sorted(), "no stray files")
        let manifest = try Fixtures.manifest(in: out)
        XCTAssertEqual(manifest.items.count, records.count)
        for (item, record) in zip(manifest.items, records) {
            XCTAssertEqual(item.status, .done)
            let file = try Data(contentsOf: out.appendingPathComponent("images/\(record.id).png"))
            XCTAssertEqual(file, Fixtures.served("/600/" + record.url.split(separator: "/").last!), "images/\(record.id).png")
            XCTAssertEqual(item.sha256, SHA256.hex(file))
        }
        let requests = killAt.withLock { $0.count }
        XCTAssertLessThanOrEqual(requests, distinct + 24 * kills, "at most 3 x 8 requests redone per interruption (\(kills) kills)")
        XCTAssertGreaterThan(kills, 0)
    }
}
