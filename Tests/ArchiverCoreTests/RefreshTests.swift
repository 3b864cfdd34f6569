import Foundation
import XCTest
@testable import ArchiverCore
@testable import ArchiverServer

/// `run --refresh` revalidates done items with conditional requests, and a restored bundle (a
/// manifest and images, no journal) is adopted without a request.
final class RefreshTests: XCTestCase {
    func testETagRevalidationKeeps304sUntouchedAndReplacesWhatChanged() throws {
        let origin = Origin(validators: [.etag])
        let (out, config, catalog) = try setUp(origin, records: 6)
        _ = try Fixtures.run(config, catalog: catalog)
        origin.resetCounts()
        let first = try Fixtures.manifest(in: out)
        XCTAssertTrue(first.items.allSatisfy { $0.etag != nil && $0.lastModified == nil }, "the ETag is in the manifest")
        let stamps = try fileStamps(out)

        origin.change(path(of: catalog, id: 2), to: "/600/000002")
        origin.change(path(of: catalog, id: 5), to: "/600/000005")
        var refresh = config
        refresh.refresh = true
        let summary = try Fixtures.run(refresh, catalog: catalog)

        XCTAssertEqual(summary.progress.requests, 6)
        XCTAssertEqual(origin.statuses(), [200: 2, 304: 4])
        XCTAssertEqual(origin.conditional(header: "if-none-match"), 6, "every request carried If-None-Match")
        XCTAssertEqual(origin.conditional(header: "if-modified-since"), 0)
        XCTAssertEqual(summary.progress.unchanged, 4)
        XCTAssertEqual(summary.progress.changed, 2)
        XCTAssertEqual(summary.progress.refreshFailed, 0)
        XCTAssertEqual(summary.done, 6)
        let refreshed = try Fixtures.manifest(in: out)
        for item in refreshed.items {
            let id = item.id.integer!
            let file = try Data(contentsOf: out.appendingPathComponent("images/\(item.id).png"))
            XCTAssertEqual(file, origin.body(path(of: catalog, id: id)), "images/\(item.id).png is what the server has")
            XCTAssertEqual(item.sha256, SHA256.hex(file))
            XCTAssertEqual(item.etag, origin.etag(path(of: catalog, id: id)))
            if [2, 5].contains(id) {
                XCTAssertNotEqual(try fileStamps(out)[id], stamps[id], "\(item.id) was replaced")
            } else {
                XCTAssertEqual(try fileStamps(out)[id], stamps[id], "\(item.id) kept its inode and mtime")
                XCTAssertEqual(item, first.items.first { $0.id == item.id })
            }
        }
        let line = ProgressLine.closing(summary)
        XCTAssertTrue(line.contains("refresh: 4 unchanged, 2 changed, 0 failed"), line)

        // A plain rerun trusts the refreshed lines; the next refresh finds nothing new.
        origin.resetCounts()
        XCTAssertEqual(try Fixtures.run(config, catalog: catalog).progress.requests, 0)
        let manifest = try Data(contentsOf: BundleLayout(root: out).manifest)
        let manifestStamp = FileStamp.of(path: BundleLayout(root: out).manifest.path)
        let again = try Fixtures.run(refresh, catalog: catalog)
        XCTAssertEqual(origin.statuses(), [304: 6])
        XCTAssertEqual(again.progress.unchanged, 6)
        XCTAssertEqual(try Data(contentsOf: BundleLayout(root: out).manifest), manifest, "manifest byte-identical")
        // Nothing changed, so nothing is rewritten: the temporary pages a refresh writes while it
        // runs do not count as the bundle's pages (they did once, and every refresh rewrote it).
        XCTAssertEqual(FileStamp.of(path: BundleLayout(root: out).manifest.path), manifestStamp, "manifest.json not rewritten")
    }

    func testLastModifiedRevalidationSendsIfModifiedSince() throws {
        let origin = Origin(validators: [.lastModified])
        let (out, config, catalog) = try setUp(origin, records: 4)
        _ = try Fixtures.run(config, catalog: catalog)
        origin.resetCounts()
        XCTAssertTrue(try Fixtures.manifest(in: out).items.allSatisfy { $0.lastModified != nil && $0.etag == nil })
        let stamps = try fileStamps(out)
        origin.change(path(of: catalog, id: 3), to: "/600/000003")
        var refresh = config
        refresh.refresh = true
        let summary = try Fixtures.run(refresh, catalog: catalog)
        XCTAssertEqual(origin.statuses(), [200: 1, 304: 3])
        XCTAssertEqual(origin.conditional(header: "if-modified-since"), 4)
        XCTAssertEqual(origin.conditional(header: "if-none-match"), 0)
        XCTAssertEqual([summary.progress.unchanged, summary.progress.changed], [3, 1])
        let after = try fileStamps(out)
        XCTAssertEqual(after.filter { $0.key != 3 }, stamps.filter { $0.key != 3 })
        let item = try XCTUnwrap(Fixtures.manifest(in: out).items.first { $0.id == 3 })
        XCTAssertEqual(item.sha256, SHA256.hex(origin.body(path(of: catalog, id: 3))))
        XCTAssertEqual(item.lastModified, origin.lastModified(path(of: catalog, id: 3)))
    }

    func testServerWithoutValidatorsGetsPlainGETsAndOnlyDifferentBytesAreReplaced() throws {
        let origin = Origin(validators: [])
        let (out, config, catalog) = try setUp(origin, records: 5)
        _ = try Fixtures.run(config, catalog: catalog)
        origin.resetCounts()
        let manifest = try Data(contentsOf: BundleLayout(root: out).manifest)
        XCTAssertFalse(String(decoding: manifest, as: UTF8.self).contains("etag"))
        let stamps = try fileStamps(out)
        var refresh = config
        refresh.refresh = true

        let same = try Fixtures.run(refresh, catalog: catalog)
        XCTAssertEqual(origin.statuses(), [200: 5])
        XCTAssertEqual(origin.conditional(header: "if-none-match") + origin.conditional(header: "if-modified-since"), 0)
        XCTAssertEqual(same.progress.unchanged, 5)
        XCTAssertEqual(try fileStamps(out), stamps, "same bytes: no file written")
        XCTAssertEqual(try Data(contentsOf: BundleLayout(root: out).manifest), manifest)

        origin.resetCounts()
        origin.change(path(of: catalog, id: 4), to: "/600/000004")
        let changed = try Fixtures.run(refresh, catalog: catalog)
        XCTAssertEqual([changed.progress.unchanged, changed.progress.changed], [4, 1])
        XCTAssertEqual(try fileStamps(out).filter { $0.key != 4 }, stamps.filter { $0.key != 4 })
        XCTAssertEqual(
            try Fixtures.manifest(in: out).items.first { $0.id == 4 }?.sha256, SHA256.hex(origin.body(path(of: catalog, id: 4))))
    }

    func testFailedRefreshKeepsTheOldImageAndItsDoneStatus() throws {
        let origin = Origin(validators: [.etag])
        let (out, config, catalog) = try setUp(origin, records: 4)
        _ = try Fixtures.run(config, catalog: catalog)
        origin.resetCounts()
        let manifest = try Data(contentsOf: BundleLayout(root: out).manifest)
        let stamps = try fileStamps(out)
        origin.change(path(of: catalog, id: 1), to: "/600/000001")
        origin.change(path(of: catalog, id: 2), to: "/600/000002")
        origin.fail(path(of: catalog, id: 1), status: 503)
        origin.fail(path(of: catalog, id: 2), status: 404)
        var refresh = config
        refresh.refresh = true
        let summary = try Fixtures.run(refresh, catalog: catalog)

        XCTAssertEqual(summary.progress.refreshFailed, 2)
        XCTAssertEqual(summary.progress.unchanged, 2)
        XCTAssertEqual(summary.done, 4, "every image is still done")
        XCTAssertEqual(summary.failed, 0)
        XCTAssertEqual(try fileStamps(out), stamps, "no file touched, none removed")
        XCTAssertEqual(try Data(contentsOf: BundleLayout(root: out).manifest), manifest, "the manifest still lists the old images")
        XCTAssertEqual(JournalIndex(path: BundleLayout(root: out).journal.path).count(of: .done), 4)
        XCTAssertTrue(ProgressLine.closing(summary).contains("2 failed (old images kept)"))
        XCTAssertEqual(RunReport(summary: summary, exitStatus: 1).refresh, RunReport.Refresh(unchanged: 2, changed: 0, failed: 2))

        origin.heal()
        let healed = try Fixtures.run(refresh, catalog: catalog)
        XCTAssertEqual([healed.progress.changed, healed.progress.unchanged], [2, 2])
        XCTAssertEqual(
            try Fixtures.manifest(in: out).items.first { $0.id == 1 }?.sha256, SHA256.hex(origin.body(path(of: catalog, id: 1))))
    }

    func testRestoredBundleIsAdoptedAndOnlyDamagedOrMissingFilesAreFetched() throws {
        let origin = Origin(validators: [.etag, .lastModified])
        let (out, config, catalog) = try setUp(origin, records: 8)
        _ = try Fixtures.run(config, catalog: catalog)
        origin.resetCounts()
        let layout = BundleLayout(root: out)
        let manifest = try Data(contentsOf: layout.manifest)
        let page = try Data(contentsOf: layout.gallery)

        // What unpacking the tarball gives: no .archiver/.
        try FileManager.default.removeItem(at: layout.state)
        var adopted = try Fixtures.run(config, catalog: catalog)
        XCTAssertEqual(adopted.progress.requests, 0, "nothing fetched")
        XCTAssertEqual(adopted.adopted, 8)
        XCTAssertEqual(try Data(contentsOf: layout.manifest), manifest, "manifest byte-identical")
        XCTAssertEqual(try Data(contentsOf: layout.gallery), page, "page byte-identical")
        XCTAssertEqual(JournalIndex(path: layout.journal.path).record(for: 3)?.validators.etag, origin.etag(path(of: catalog, id: 3)))

        // Damaged: one file with a flipped byte, one cut short, one gone.
        try FileManager.default.removeItem(at: layout.state)
        var flipped = try Data(contentsOf: layout.images.appendingPathComponent("2.png"))
        flipped[flipped.count / 2] ^= 0xFF
        try flipped.write(to: layout.images.appendingPathComponent("2.png"))
        try Data("short".utf8).write(to: layout.images.appendingPathComponent("5.png"))
        try FileManager.default.removeItem(at: layout.images.appendingPathComponent("7.png"))
        origin.resetCounts()
        adopted = try Fixtures.run(config, catalog: catalog)
        XCTAssertEqual(adopted.adopted, 5)
        XCTAssertEqual(adopted.progress.requests, 3)
        XCTAssertEqual(origin.statuses(), [200: 3], "plain GETs: the damaged files are not revalidated, they are fetched")
        XCTAssertEqual(try Data(contentsOf: layout.manifest), manifest, "manifest byte-identical")

        // Restored, then refreshed at once: conditional requests from the manifest's validators.
        try FileManager.default.removeItem(at: layout.state)
        origin.resetCounts()
        var refresh = config
        refresh.refresh = true
        let refreshed = try Fixtures.run(refresh, catalog: catalog)
        XCTAssertEqual(origin.statuses(), [304: 8])
        XCTAssertEqual(refreshed.progress.unchanged, 8)
    }

    func testRestoredBundleOfAnotherFieldIsRefused() throws {
        let origin = Origin(validators: [.etag])
        let (out, config, catalog) = try setUp(origin, records: 2)
        _ = try Fixtures.run(config, catalog: catalog)
        origin.resetCounts()
        try FileManager.default.removeItem(at: BundleLayout(root: out).state)
        var thumbnails = config
        thumbnails.field = .thumbnailUrl
        XCTAssertThrowsError(try Fixtures.run(thumbnails, catalog: catalog)) { error in
            XCTAssertEqual((error as? RunError)?.kind, "options-changed")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: BundleLayout(root: out).journal.path), "no journal left behind")
    }

    func testPackAndMergeCarryTheValidatorsSoAMergedBundleRefreshesWith304s() throws {
        let origin = Origin(validators: [.etag, .lastModified])
        let server = try TestServer { origin.respond($0) }
        addTeardownBlock { server.stop() }
        let root = Fixtures.temporaryDirectory(self)
        let catalog = try Fixtures.catalog(Fixtures.records(12))
        func run(_ name: String, shard: Shard?, refresh: Bool = false) throws -> RunSummary {
            var config = Fixtures.configuration(out: root.appendingPathComponent(name), server: server)
            config.shard = shard
            config.refresh = refresh
            return try Fixtures.run(config, catalog: catalog)
        }
        _ = try run("whole", shard: nil)
        _ = try run("s1", shard: Shard(index: 1, count: 2))
        _ = try run("s2", shard: Shard(index: 2, count: 2))
        let tarball = root.appendingPathComponent("s2.tar.gz")
        try BundlePacker().pack(root.appendingPathComponent("s2"), to: tarball)
        let merged = try CommandRunner.run(["merge", "--out", root.appendingPathComponent("merged").path,
                                            root.appendingPathComponent("s1").path, tarball.path])
        XCTAssertEqual(merged.status, 0, merged.stderr)
        let manifest = try Data(contentsOf: BundleLayout(root: root.appendingPathComponent("merged")).manifest)
        XCTAssertEqual(manifest, try Data(contentsOf: BundleLayout(root: root.appendingPathComponent("whole")).manifest))
        XCTAssertTrue(String(decoding: manifest, as: UTF8.self).contains("\"lastModified\": "))

        origin.resetCounts()
        let refreshed = try run("merged", shard: nil, refresh: true)
        XCTAssertEqual(origin.statuses(), [304: 12], "the merged journal kept the validators")
        XCTAssertEqual(refreshed.progress.unchanged, 12)
    }

    func testCancelledRefreshStillListsEveryImageAsDone() throws {
        let origin = Origin(validators: [.etag])
        let server = try TestServer { origin.respond($0) }
        addTeardownBlock { server.stop() }
        let out = Fixtures.temporaryDirectory(self)
        var config = Fixtures.configuration(out: out, server: server, concurrency: 1)
        let catalog = try Fixtures.catalog(Fixtures.records(12))
        _ = try Fixtures.run(config, catalog: catalog)
        let before = try Fixtures.manifest(in: out)
        let stamps = try fileStamps(out)

        // Record 1 changed on the server; the refresh is cancelled while record 12 is asked about.
        origin.change(path(of: catalog, id: 1), to: "/600/000001")
        let arrived = DispatchSemaphore(value: 0), gate = DispatchSemaphore(value: 0)
        server.route(path(of: catalog, id: 12)) { request in
            arrived.signal()
            gate.wait()
            return origin.respond(request)
        }
        config.refresh = true
        let archiver = Archiver(configuration: config, fetcher: Fixtures.fetcher(for: config))
        let summary = Locked<RunSummary?>(nil)
        let finished = expectation(description: "run returned")
        DispatchQueue.global().async {
            summary.withLock { $0 = try? archiver.run(catalog: catalog) }
            finished.fulfill()
        }
        XCTAssertEqual(arrived.wait(timeout: .now() + 10), .success, "record 12's request arrived")
        archiver.cancel()
        wait(for: [finished], timeout: 10)
        gate.signal()

        let interrupted = try XCTUnwrap(summary.withLock { $0 })
        XCTAssertTrue(interrupted.interrupted)
        XCTAssertEqual([interrupted.done, interrupted.pending, interrupted.failed], [12, 0, 0], "nothing became pending")
        XCTAssertEqual(interrupted.progress.changed, 1)
        let after = try Fixtures.manifest(in: out)
        XCTAssertEqual(after.items.first { $0.id == 1 }?.sha256, SHA256.hex(origin.body(path(of: catalog, id: 1))))
        XCTAssertEqual(Array(after.items.dropFirst()), Array(before.items.dropFirst()), "the others as they were, 12 included")
        XCTAssertEqual(try fileStamps(out).filter { $0.key != 1 }, stamps.filter { $0.key != 1 })
    }

    /// SIGKILL a refresh in the middle, several times; the rerun of the same command finishes it.
    func testKilledRefreshFinishesOnRerun() throws {
        let origin = Origin(validators: [.etag])
        let records = Fixtures.records(120)
        let server = try TestServer { origin.respond($0) }
        let out = Fixtures.temporaryDirectory(self)
        let catalogPath = try Fixtures.writeCatalog(
            records, to: out.deletingLastPathComponent().appendingPathComponent("\(out.lastPathComponent).json"))
        addTeardownBlock { try? FileManager.default.removeItem(atPath: catalogPath) }
        let arguments = [
            "run", "--catalog", catalogPath, "--out", out.path, "--concurrency", "4", "--quiet",
            "--mirror", "\(Fixtures.host)=\(server.baseURL)",
        ]
        XCTAssertEqual(try CommandRunner.run(arguments).status, 0)
        let stamps = try fileStamps(out)
        let changedIDs = Set(stride(from: 3, through: 120, by: 7))
        for id in changedIDs { origin.change("/600/" + records[id - 1].url.split(separator: "/").last!, to: String(format: "/600/%06x", id)) }

        for _ in 0..<3 {
            origin.resetCounts()
            let process = try CommandRunner.start(arguments + ["--refresh"])
            let deadline = Date(timeIntervalSinceNow: 20)
            while origin.total() < 30, process.isRunning, Date() < deadline { usleep(1000) }
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        // Without --quiet, which now hides the "refreshing:" line read below.
        let final = try CommandRunner.run(arguments.filter { $0 != "--quiet" } + ["--refresh", "--json"])
        XCTAssertEqual(final.status, 0, final.stderr)
        let report = try JSONDecoder().decode(RunReport.self, from: Data(final.stdout.utf8))
        XCTAssertEqual(report.done, 120)
        XCTAssertEqual(report.refresh?.failed, 0)
        // A file the killed run replaced but had not journaled yet no longer matches its line: it
        // is fetched like any damaged file (at most 2 per request slot), the rest revalidated.
        let plan = try XCTUnwrap(final.stderr.firstMatch(of: #/refreshing: (\d+) done to revalidate, (\d+) to fetch/#))
        let (revalidated, fetched) = (Int(plan.output.1)!, Int(plan.output.2)!)
        XCTAssertEqual(revalidated + fetched, 120, final.stderr)
        XCTAssertLessThanOrEqual(fetched, 8)
        XCTAssertEqual(report.refresh.map { $0.unchanged + $0.changed }, revalidated)
        let manifest = try Fixtures.manifest(in: out)
        for item in manifest.items {
            let id = item.id.integer!
            let servedPath = "/600/" + records[id - 1].url.split(separator: "/").last!
            let file = try Data(contentsOf: out.appendingPathComponent("images/\(item.id).png"))
            XCTAssertEqual(file, origin.body(servedPath), "images/\(item.id).png")
            XCTAssertEqual(item.sha256, SHA256.hex(file))
            XCTAssertEqual(item.etag, origin.etag(servedPath))
            if !changedIDs.contains(id) { XCTAssertEqual(try fileStamps(out)[id], stamps[id], "\(item.id)") }
        }
        origin.resetCounts()
        XCTAssertEqual(try CommandRunner.run(arguments + ["--refresh"]).status, 0)
        XCTAssertEqual(origin.statuses(), [304: 120], "the refresh is complete: everything is current")
    }

    private func setUp(_ origin: Origin, records count: Int) throws -> (URL, RunConfiguration, Catalog) {
        let server = try TestServer { origin.respond($0) }
        addTeardownBlock { server.stop() }
        let out = Fixtures.temporaryDirectory(self)
        let config = Fixtures.configuration(out: out, server: server)
        return (out, config, try Fixtures.catalog(Fixtures.records(count)))
    }

    /// The server path of record `id`'s image.
    private func path(of catalog: Catalog, id: Int) -> String {
        "/600/" + Fixtures.records(id).last!.url.split(separator: "/").last!
    }

    private func fileStamps(_ out: URL) throws -> [Int: FileStamp] {
        var stamps: [Int: FileStamp] = [:]
        for name in Fixtures.imageNames(in: out) where name.hasSuffix(".png") {
            let id = Int(name.dropLast(4))!
            stamps[id] = FileStamp.of(path: BundleLayout(root: out).images.appendingPathComponent(name).path)
        }
        return stamps
    }
}

/// A placeholder image server with validators, as a static server gives them: each path has a
/// version; changing its bytes bumps the version, and so its ETag and Last-Modified. Conditional
/// requests are answered as RFC 9110 says (If-None-Match first, else If-Modified-Since).
private final class Origin: Sendable {
    enum Kind: Sendable { case etag, lastModified }

    private struct State {
        var replaced: [String: String] = [:]  // path -> the path whose bytes it serves now
        var versions: [String: Int] = [:]
        var failing: [String: Int] = [:]
        var statuses: [Int: Int] = [:]
        var conditional: [String: Int] = [:]
        var total = 0
    }

    private let kinds: [Kind]
    private let state = Locked(State())

    init(validators: [Kind]) {
        kinds = validators
    }

    func body(_ path: String) -> Data {
        Fixtures.served(state.withLock { $0.replaced[path] } ?? path)
    }

    func etag(_ path: String) -> String? {
        kinds.contains(.etag) ? "\"\(path.split(separator: "/").last!)-v\(state.withLock { $0.versions[path, default: 0] })\"" : nil
    }

    func lastModified(_ path: String) -> String? {
        guard kinds.contains(.lastModified) else { return nil }
        let seconds = 1_700_000_000 + 3600 * state.withLock { $0.versions[path, default: 0] }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
    }

    func change(_ path: String, to other: String) {
        state.withLock {
            $0.replaced[path] = other
            $0.versions[path, default: 0] += 1
        }
    }

    func fail(_ path: String, status: Int) { state.withLock { $0.failing[path] = status } }
    func heal() { state.withLock { $0.failing = [:] } }
    func statuses() -> [Int: Int] { state.withLock { $0.statuses } }
    func conditional(header: String) -> Int { state.withLock { $0.conditional[header, default: 0] } }
    func total() -> Int { state.withLock { $0.total } }

    func resetCounts() {
        state.withLock {
            $0.statuses = [:]
            $0.conditional = [:]
            $0.total = 0
        }
    }

    func respond(_ request: HTTPRequest) -> HTTPResponse {
        let path = request.pathWithoutQuery
        let etag = etag(path), lastModified = lastModified(path)
        let response: HTTPResponse
        if let status = state.withLock({ $0.failing[path] }) {
            response = .text(status, "failing on purpose\n")
        } else if let match = request.headers["if-none-match"] {
            response = match == etag ? HTTPResponse(status: 304) : full(path, etag, lastModified)
        } else if let since = request.headers["if-modified-since"], since == lastModified {
            response = HTTPResponse(status: 304)
        } else {
            response = full(path, etag, lastModified)
        }
        state.withLock { state in
            state.total += 1
            state.statuses[response.status, default: 0] += 1
            for name in ["if-none-match", "if-modified-since"] where request.headers[name] != nil {
                state.conditional[name, default: 0] += 1
            }
        }
        return response
    }

    private func full(_ path: String, _ etag: String?, _ lastModified: String?) -> HTTPResponse {
        var response = HTTPResponse.png(body(path))
        if let etag { response.headers.append(("ETag", etag)) }
        if let lastModified { response.headers.append(("Last-Modified", lastModified)) }
        return response
    }
}

extension FileStamp {
    /// The stamp of the regular file at `path` itself (a link is none): what the tests compare
    /// to see whether a file was written again.
    static func of(path: String) -> FileStamp? {
        var info = stat()
        guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return FileStamp(info)
    }
}
