import Foundation
import XCTest
@testable import ArchiverCore
@testable import ArchiverServer

/// Interrupted runs resume: nothing finished is redone, nothing half-written is taken as done.
final class ResumeTests: XCTestCase {
    func testRerunOverACompleteBundleMakesNoRequest() throws {
        let server = try Fixtures.placeholderServer()
        let out = Fixtures.temporaryDirectory(self)
        let config = Fixtures.configuration(out: out, server: server)
        let catalog = try Fixtures.catalog(Fixtures.records(20))
        _ = try Fixtures.run(config, catalog: catalog)
        let manifest = try Data(contentsOf: BundleLayout(root: out).manifest)
        XCTAssertEqual(server.total, 20)

        let again = try Fixtures.run(config, catalog: catalog)
        XCTAssertEqual(server.total, 20, "no request on a rerun")
        XCTAssertEqual(again.done, 20)
        XCTAssertEqual(again.progress.requests, 0)
        XCTAssertEqual(try Data(contentsOf: BundleLayout(root: out).manifest), manifest, "the manifest is reproducible")
    }

    func testCancelledRunKeepsWhatFinishedAndTheRerunFetchesOnlyTheRest() throws {
        let server = try Fixtures.placeholderServer()
        let out = Fixtures.temporaryDirectory(self)
        let records = Fixtures.records(12)
        let slowPath = "/600/" + records[11].url.split(separator: "/").last!
        let gate = DispatchSemaphore(value: 0), arrived = DispatchSemaphore(value: 0)
        server.route(slowPath) { request in
            arrived.signal()
            gate.wait()
            return Fixtures.images.respond(to: request)
        }
        let config = Fixtures.configuration(out: out, server: server, concurrency: 1)
        let archiver = Archiver(configuration: config, fetcher: Fixtures.fetcher(for: config))
        let finished = expectation(description: "run returned")
        let summary = Locked<RunSummary?>(nil)
        let catalog = try Fixtures.catalog(records)
        DispatchQueue.global().async {
            summary.withLock { $0 = try? archiver.run(catalog: catalog) }
            finished.fulfill()
        }
        XCTAssertEqual(arrived.wait(timeout: .now() + 10), .success, "the last record's request arrived")
        archiver.cancel()
        wait(for: [finished], timeout: 30)
        gate.signal()

        let interrupted = try XCTUnwrap(summary.withLock { $0 })
        XCTAssertTrue(interrupted.interrupted)
        XCTAssertEqual(interrupted.done, 11)
        XCTAssertEqual(interrupted.pending, 1)
        let manifest = try Fixtures.manifest(in: out)
        XCTAssertEqual(manifest.items.last?.status, .pending)
        XCTAssertNil(manifest.items.last?.path)
        XCTAssertFalse(Fixtures.imageNames(in: out).contains("12.png"))

        server.route(slowPath) { Fixtures.images.respond(to: $0) }
        let resumed = try Fixtures.run(config, catalog: catalog)
        XCTAssertEqual(resumed.done, 12)
        XCTAssertEqual(resumed.progress.requests, 1)
        XCTAssertEqual(server.total, 13, "11 before the cancel, the cancelled one, and its retry")
    }

    func testDebrisAndDamagedFilesAreNotTakenForDone() throws {
        let server = try Fixtures.placeholderServer()
        let out = Fixtures.temporaryDirectory(self)
        let config = Fixtures.configuration(out: out, server: server)
        let catalog = try Fixtures.catalog(Fixtures.records(4))
        _ = try Fixtures.run(config, catalog: catalog)
        let images = BundleLayout(root: out).images
        try Data("half".utf8).write(to: images.appendingPathComponent(".partial-3-123"))
        try Data("short".utf8).write(to: images.appendingPathComponent("2.png"))
        try FileManager.default.removeItem(at: images.appendingPathComponent("4.png"))
        // A torn last journal line, as a SIGKILL mid-write would leave.
        let journal = try FileHandle(forWritingTo: BundleLayout(root: out).journal)
        journal.seekToEndOfFile()
        journal.write(Data("done\t1\thttps://via".utf8))
        try journal.close()

        let summary = try Fixtures.run(config, catalog: catalog)
        XCTAssertEqual(summary.done, 4)
        XCTAssertEqual(summary.progress.requests, 2, "only the damaged and the missing file are fetched again")
        XCTAssertEqual(Fixtures.imageNames(in: out), ["1.png", "2.png", "3.png", "4.png"])
        let manifest = try Fixtures.manifest(in: out)
        for item in manifest.items {
            XCTAssertEqual(SHA256.hex(try Data(contentsOf: out.appendingPathComponent(item.path!))), item.sha256)
        }
    }

    func testChangedCatalogRefetchesChangedRecordsAndDropsRemovedOnes() throws {
        let server = try Fixtures.placeholderServer()
        let out = Fixtures.temporaryDirectory(self)
        var config = Fixtures.configuration(out: out, server: server)
        var records = Fixtures.records(5)
        _ = try Fixtures.run(config, catalog: Fixtures.catalog(records))
        XCTAssertEqual(server.total, 5)

        records[1] = Fixtures.record(2, colour: "123456")
        records.remove(at: 4)
        records.append(Fixtures.record(6, colour: "654321"))
        let summary = try Fixtures.run(config, catalog: Fixtures.catalog(records))
        XCTAssertEqual(summary.progress.requests, 2)
        XCTAssertEqual(server.count("/600/123456"), 1)
        XCTAssertEqual(server.count("/600/654321"), 1)
        let manifest = try Fixtures.manifest(in: out)
        XCTAssertEqual(manifest.items.map(\.id), [1, 2, 3, 4, 6])
        XCTAssertEqual(try Data(contentsOf: out.appendingPathComponent("images/2.png")), Fixtures.served("/600/123456"))
        XCTAssertTrue(Fixtures.imageNames(in: out).contains("5.png"), "a removed record's file stays without --prune")

        config.prune = true
        _ = try Fixtures.run(config, catalog: Fixtures.catalog(records))
        XCTAssertEqual(Fixtures.imageNames(in: out), ["1.png", "2.png", "3.png", "4.png", "6.png"])
    }

    func testSkipFailedKeepsEarlierFailuresWithoutARequest() throws {
        let server = try Fixtures.placeholderServer()
        server.route("/600/000404", .text(404, "gone"))
        let out = Fixtures.temporaryDirectory(self)
        var config = Fixtures.configuration(out: out, server: server)
        let catalog = try Fixtures.catalog([Fixtures.record(1, colour: "000404"), Fixtures.record(2, colour: "abcdef")])
        _ = try Fixtures.run(config, catalog: catalog)
        _ = try Fixtures.run(config, catalog: catalog)
        XCTAssertEqual(server.count("/600/000404"), 2, "failures are attempted again by default")
        config.skipFailed = true
        let summary = try Fixtures.run(config, catalog: catalog)
        XCTAssertEqual(server.count("/600/000404"), 2)
        XCTAssertEqual(summary.failed, 1)
        XCTAssertEqual(summary.progress.requests, 0)
    }

    func testADifferentFieldForTheSameDirectoryIsRefused() throws {
        let server = try Fixtures.placeholderServer()
        let out = Fixtures.temporaryDirectory(self)
        var config = Fixtures.configuration(out: out, server: server)
        let catalog = try Fixtures.catalog(Fixtures.records(2))
        _ = try Fixtures.run(config, catalog: catalog)
        config.field = .thumbnailUrl
        XCTAssertThrowsError(try Fixtures.run(config, catalog: catalog)) { error in
            XCTAssertEqual((error as? RunError)?.kind, "options-changed")
            XCTAssertTrue("\(error)".contains("--field url"), "\(error)")
        }
        XCTAssertThrowsError(try Fixtures.run(Fixtures.configuration(out: out, server: server), catalog: Fixtures.catalog(Fixtures.records(2), source: "other.json"))) { error in
            XCTAssertEqual((error as? RunError)?.kind, "options-changed")
        }
        XCTAssertEqual(server.total, 2)
    }

    func testOptionsWithQuotesBackslashesAndNewlinesReadBackAsWritten() throws {
        let server = try Fixtures.placeholderServer()
        let out = Fixtures.temporaryDirectory(self)
        let config = Fixtures.configuration(out: out, server: server)
        let source = "dir \"q\"\\é\n\u{1}/catalog.json"
        let catalog = try Fixtures.catalog(Fixtures.records(2), source: source)
        _ = try Fixtures.run(config, catalog: catalog)
        let written = try JSONSerialization.jsonObject(with: Data(contentsOf: BundleLayout(root: out).options)) as? [String: Any]
        XCTAssertEqual(written?["catalog"] as? String, source)
        XCTAssertEqual(written?["records"] as? Int, 2)
        let rerun = try Fixtures.run(config, catalog: catalog)
        XCTAssertEqual(rerun.done, 2, "the same source is recognised, not refused as changed")
        XCTAssertEqual(server.total, 2)
    }

    /// Temporary files of a run killed while writing (`.NAME.tmp-PID-RANDOM`, or `.NAME.tmp-PID`
    /// from older versions) are removed by the next run; other dot files are not.
    func testTemporaryFilesOfAKilledRunAreRemovedByTheNext() throws {
        let server = try Fixtures.placeholderServer()
        let out = Fixtures.temporaryDirectory(self)
        let layout = BundleLayout(root: out)
        try FileManager.default.createDirectory(at: layout.state, withIntermediateDirectories: true)
        let debris = [out.appendingPathComponent(".manifest.json.tmp-4242"), out.appendingPathComponent(".index.html.tmp-1-2345"),
                      layout.state.appendingPathComponent(".journal.tmp-77")]
        let kept = [out.appendingPathComponent(".keep"), out.appendingPathComponent(".notes.tmp-x")]
        for file in debris + kept { try Data("x".utf8).write(to: file) }
        _ = try Fixtures.run(Fixtures.configuration(out: out, server: server), catalog: Fixtures.catalog(Fixtures.records(2)))
        for file in debris { XCTAssertFalse(FileManager.default.fileExists(atPath: file.path), file.lastPathComponent) }
        for file in kept { XCTAssertTrue(FileManager.default.fileExists(atPath: file.path), file.lastPathComponent) }
    }

    func testASecondRunOnTheSameDirectoryIsRefusedNamingTheHolder() throws {
        let server = try Fixtures.placeholderServer()
        let out = Fixtures.temporaryDirectory(self)
        let layout = BundleLayout(root: out)
        try FileManager.default.createDirectory(at: layout.state, withIntermediateDirectories: true)
        let held = try BundleLock(path: layout.lock.path)
        defer { withExtendedLifetime(held) {} }
        let catalogPath = try Fixtures.writeCatalog(Fixtures.records(1), to: out.appendingPathComponent("c.json"))
        let result = try CommandRunner.run(["run", "--catalog", catalogPath, "--out", out.path, "--mirror", "\(Fixtures.host)=\(server.baseURL)"])
        XCTAssertEqual(result.status, 2)
        XCTAssertTrue(result.stderr.contains("in use by another archiver run (pid \(getpid()))"), result.stderr)
        XCTAssertEqual(server.total, 0)
        XCTAssertEqual(BundleStatus.read(directory: out)?.running, true)
    }

    func testStatusCountsOutcomesAndGroupsFailuresByKind() throws {
        let server = try Fixtures.placeholderServer()
        server.route("/600/000404", .text(404, "gone"))
        server.route("/600/000001", .text(200, "<html>"))
        let out = Fixtures.temporaryDirectory(self)
        let catalog = try Fixtures.catalog(
            Fixtures.records(3) + [Fixtures.record(10, colour: "000404"), Fixtures.record(11, colour: "000001")])
        _ = try Fixtures.run(Fixtures.configuration(out: out, server: server), catalog: catalog)

        let result = try CommandRunner.run(["status", out.path, "--json"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let status = try JSONDecoder().decode(BundleStatus.self, from: Data(result.stdout.utf8))
        XCTAssertEqual(status.records, 5)
        XCTAssertEqual(status.done, 3)
        XCTAssertEqual(status.failed, 2)
        XCTAssertEqual(status.pending, 0)
        XCTAssertFalse(status.running)
        XCTAssertEqual(status.failures.map(\.kind).sorted(), ["http-status", "not-image"])
        XCTAssertEqual(status.failures.first { $0.kind == "http-status" }?.examples.first?.id, 10)
        let files = try Fixtures.imageNames(in: out).map { try Data(contentsOf: out.appendingPathComponent("images/" + $0)).count }
        XCTAssertEqual(status.bytesOnDisk, Int64(files.reduce(0, +)))

        let text = try CommandRunner.run(["status", out.path])
        XCTAssertTrue(text.stdout.contains("3 done, 2 failed, 0 pending of 5"), text.stdout)
        XCTAssertTrue(text.stdout.contains("failed not-image: 1"), text.stdout)
        XCTAssertEqual(try CommandRunner.run(["status", out.appendingPathComponent("nothing").path]).status, 2)
    }

    func testCancelDuringALongRetryAfterEndsAtOnceAndLeavesTheItemPending() throws {
        let server = try Fixtures.placeholderServer()
        let answered = DispatchSemaphore(value: 0)
        server.route("/600/000503") { _ in
            answered.signal()
            return HTTPResponse(status: 503, headers: [("Retry-After", "100")])
        }
        let out = Fixtures.temporaryDirectory(self)
        var config = Fixtures.configuration(out: out, server: server)
        config.retries = 3
        config.maxRetryAfter = 300
        let archiver = Archiver(configuration: config, fetcher: Fixtures.fetcher(for: config))
        let catalog = try Fixtures.catalog([Fixtures.record(1, colour: "000503")])
        let finished = DispatchSemaphore(value: 0)
        let summary = Locked<RunSummary?>(nil)
        DispatchQueue.global().async {
            summary.withLock { $0 = try? archiver.run(catalog: catalog) }
            finished.signal()
        }
        XCTAssertEqual(answered.wait(timeout: .now() + 10), .success)
        let cancelled = Date()
        // The 503 may still be on its way to the operation; cancel until the run returns.
        repeat {
            archiver.cancel()
        } while finished.wait(timeout: .now() + 0.05) == .timedOut && Date().timeIntervalSince(cancelled) < 60
        // Not waiting out the 100 s Retry-After is the behaviour under test: bounded loosely, at
        // half of it, so only a run that honoured it can fail this, not a slow machine.
        XCTAssertLessThan(Date().timeIntervalSince(cancelled), 50, "still waiting out Retry-After")
        let result = try XCTUnwrap(summary.withLock { $0 })
        XCTAssertTrue(result.interrupted)
        XCTAssertEqual(result.pending, 1, "a retriable failure cut short by a cancel stays pending")
        XCTAssertEqual(server.count("/600/000503"), 1)
    }

    /// A catalog flips a record's URL and back while a run is cut short after the new file was
    /// linked but before it was journaled: the old line must not vouch for the new bytes.
    func testAURLChangedAndChangedBackIsFetchedAgainNotTrustedBySize() throws {
        let server = try Fixtures.placeholderServer()
        let out = Fixtures.temporaryDirectory(self)
        let config = Fixtures.configuration(out: out, server: server)
        let original = [Fixtures.record(1, colour: "aaaaaa"), Fixtures.record(2, colour: "bbbbbb")]
        _ = try Fixtures.run(config, catalog: Fixtures.catalog(original))

        let arrived = DispatchSemaphore(value: 0), gate = DispatchSemaphore(value: 0)
        server.route("/600/cccccc") { request in
            arrived.signal()
            gate.wait()
            return Fixtures.images.respond(to: request)
        }
        let archiver = Archiver(configuration: config, fetcher: Fixtures.fetcher(for: config))
        let changed = try Fixtures.catalog([original[0], Fixtures.record(2, colour: "cccccc")])
        let finished = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            _ = try? archiver.run(catalog: changed)
            finished.signal()
        }
        XCTAssertEqual(arrived.wait(timeout: .now() + 10), .success)
        archiver.cancel()
        XCTAssertEqual(finished.wait(timeout: .now() + 30), .success)
        gate.signal()
        // What a SIGKILL between link and journal would leave: the new bytes under the old name.
        let newBytes = Fixtures.served("/600/cccccc")
        XCTAssertEqual(newBytes.count, Fixtures.served("/600/bbbbbb").count, "same size: the size check alone cannot tell")
        try newBytes.write(to: out.appendingPathComponent("images/2.png"))

        _ = try Fixtures.run(config, catalog: Fixtures.catalog(original))
        XCTAssertEqual(try Data(contentsOf: out.appendingPathComponent("images/2.png")), Fixtures.served("/600/bbbbbb"))
        XCTAssertEqual(server.count("/600/bbbbbb"), 2, "fetched again, not trusted")
    }

    func testARerunWithNothingNewRewritesNothingButRepairsMissingOrDamagedOutput() throws {
        let server = try Fixtures.placeholderServer()
        let out = Fixtures.temporaryDirectory(self)
        let config = Fixtures.configuration(out: out, server: server)
        let catalog = try Fixtures.catalog(Fixtures.records(5))
        _ = try Fixtures.run(config, catalog: catalog)
        let layout = BundleLayout(root: out)
        let manifest = try Data(contentsOf: layout.manifest)
        let gallery = try Data(contentsOf: layout.gallery)
        func inode(_ url: URL) throws -> Int {
            try XCTUnwrap(FileManager.default.attributesOfItem(atPath: url.path)[.systemFileNumber] as? Int)
        }
        let (manifestInode, galleryInode, journalInode) = (try inode(layout.manifest), try inode(layout.gallery), try inode(layout.journal))

        _ = try Fixtures.run(config, catalog: catalog)
        XCTAssertEqual(try inode(layout.manifest), manifestInode, "an unchanged bundle is not rewritten")
        XCTAssertEqual(try inode(layout.gallery), galleryInode)
        XCTAssertEqual(try inode(layout.journal), journalInode, "nor its journal compacted")

        try FileManager.default.removeItem(at: layout.gallery)
        try Data(manifest.prefix(100)).write(to: layout.manifest)
        _ = try Fixtures.run(config, catalog: catalog)
        XCTAssertEqual(try Data(contentsOf: layout.manifest), manifest, "a damaged manifest is written again")
        XCTAssertEqual(try Data(contentsOf: layout.gallery), gallery, "a missing page is written again")
        XCTAssertEqual(server.total, 5)
    }
}
