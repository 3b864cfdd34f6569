import Foundation
import Glibc
import XCTest
@testable import ArchiverCore
@testable import ArchiverServer

/// Options of the README's tables that no other test ran through the built binary, each run
/// once with an effect checked in what the binary leaves (manifest, files, server, output).
/// `--http2`, `--cacert` and `--durable` need HTTPS with ALPN and a syscall trace: they are
/// checked by scripts/acceptance.sh.
final class OptionEffectTests: XCTestCase {
    private func base(_ catalog: String, _ out: URL, _ server: TestServer) -> [String] {
        ["run", "--catalog", catalog, "--out", out.path, "--quiet", "--mirror", "\(Fixtures.host)=\(server.baseURL)"]
    }

    /// The manifest's items as JSON objects, as a user's tool would read them.
    private func items(_ out: URL) throws -> [[String: Any]] {
        let data = try Data(contentsOf: out.appendingPathComponent("manifest.json"))
        return try XCTUnwrap((try JSONSerialization.jsonObject(with: data) as? [String: Any])?["items"] as? [[String: Any]])
    }

    func testRecordsIDTitleAndGroupNameTheKeysOfAWrappedDocument() throws {
        let server = try Fixtures.placeholderServer()
        let dir = Fixtures.temporaryDirectory(self)
        let catalog = dir.appendingPathComponent("doc.json")
        try Data(#"""
            {"data": {"photos": [
              {"pid": "p-1", "caption": "first", "set": 3, "url": "https://via.placeholder.com/600/0000aa", "id": 99, "title": "no", "albumId": 7},
              {"pid": "p-2", "caption": "second", "set": "4", "url": "https://via.placeholder.com/600/0000bb", "id": 98, "title": "no", "albumId": 7}
            ]}}
            """#.utf8).write(to: catalog)
        let out = dir.appendingPathComponent("out")
        let run = try CommandRunner.run(base(catalog.path, out, server) + [
            "--format", "json", "--records", "/data/photos", "--id", "pid", "--title", "caption", "--group", "set",
        ])
        XCTAssertEqual(run.status, 0, run.stderr)
        let items = try items(out)
        XCTAssertEqual(items.map { $0["id"] as? String }, ["p-1", "p-2"])
        XCTAssertEqual(items.map { $0["title"] as? String }, ["first", "second"])
        XCTAssertEqual(items.map { $0["albumId"] as? Int }, [3, 4])
        XCTAssertEqual(Fixtures.imageNames(in: out), ["p-1.png", "p-2.png"])
    }

    func testFormatForcesTheParserInsteadOfDetection() throws {
        let server = try Fixtures.placeholderServer()
        let dir = Fixtures.temporaryDirectory(self)
        let catalog = try Fixtures.writeCatalog(Fixtures.records(2), to: dir.appendingPathComponent("c.txt"))
        let asJSON = try CommandRunner.run(base(catalog, dir.appendingPathComponent("a"), server) + ["--format", "json"])
        XCTAssertEqual(asJSON.status, 0, asJSON.stderr)
        XCTAssertEqual(try items(dir.appendingPathComponent("a")).count, 2)
        // The same JSON read as CSV: its "header" names no id column, so the run refuses it.
        let asCSV = try CommandRunner.run(base(catalog, dir.appendingPathComponent("b"), server) + ["--format", "csv"])
        XCTAssertEqual(asCSV.status, 2, asCSV.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.appendingPathComponent("b/manifest.json").path))

        let lines = dir.appendingPathComponent("c.jsonl")
        try Data(#"{"id": 5, "url": "https://via.placeholder.com/600/00cc00"}"#.utf8 + [0x0A]).write(to: lines)
        let asJSONL = try CommandRunner.run(base(lines.path, dir.appendingPathComponent("c"), server) + ["--format", "jsonl"])
        XCTAssertEqual(asJSONL.status, 0, asJSONL.stderr)
        XCTAssertEqual(try items(dir.appendingPathComponent("c")).map { $0["id"] as? Int }, [5])
    }

    /// A PNG whose CRCs are right but whose deflate stream is corrupt passes the structural check
    /// and fails only when decoded.
    func testValidateFullDecodesWhatStructureTakesOnTrust() throws {
        let server = try Fixtures.placeholderServer()
        server.route("/600/00dead", .png(PNGFixtures.withCorruptDeflate(PNGFixtures.solid(width: 64, height: 64))))
        let dir = Fixtures.temporaryDirectory(self)
        let catalog = try Fixtures.writeCatalog([Fixtures.record(1, colour: "00dead")], to: dir.appendingPathComponent("c.json"))
        let structure = try CommandRunner.run(base(catalog, dir.appendingPathComponent("s"), server) + ["--validate", "structure"])
        XCTAssertEqual(structure.status, 0, structure.stderr)
        let full = try CommandRunner.run(base(catalog, dir.appendingPathComponent("f"), server) + ["--validate", "full"])
        XCTAssertEqual(full.status, 1, full.stderr)
        let item = try XCTUnwrap(try items(dir.appendingPathComponent("f")).first)
        XCTAssertEqual((item["error"] as? [String: Any])?["kind"] as? String, "invalid-png")
        XCTAssertEqual(Fixtures.imageNames(in: dir.appendingPathComponent("f")), [])
    }

    func testMaxBytesFailsABodyOneByteOverItAndTakesOneAtIt() throws {
        let server = try Fixtures.placeholderServer()
        let dir = Fixtures.temporaryDirectory(self)
        let record = Fixtures.record(1, colour: "0000ff")
        let size = Fixtures.served("/600/0000ff").count
        let catalog = try Fixtures.writeCatalog([record], to: dir.appendingPathComponent("c.json"))
        let under = try CommandRunner.run(base(catalog, dir.appendingPathComponent("u"), server) + ["--max-bytes", "\(size - 1)", "--retries", "3"])
        XCTAssertEqual(under.status, 1, under.stderr)
        XCTAssertEqual((try items(dir.appendingPathComponent("u")).first?["error"] as? [String: Any])?["kind"] as? String, "too-large")
        XCTAssertEqual(server.count("/600/0000ff"), 1, "too-large is not retried")
        let at = try CommandRunner.run(base(catalog, dir.appendingPathComponent("a"), server) + ["--max-bytes", "\(size)"])
        XCTAssertEqual(at.status, 0, at.stderr)
    }

    /// Requests to one host are held at the server; a record of a second host, after them in the
    /// catalog, is answered at once. Once it has been, the run has handed out every slot it will:
    /// with --per-host 1 (and --concurrency 4) the first host has exactly one request in flight.
    func testPerHostBoundsRequestsToOneHost() throws {
        let held = try Fixtures.placeholderServer()
        let other = try Fixtures.placeholderServer()
        let dir = Fixtures.temporaryDirectory(self)
        var records = Fixtures.records(6)
        records.append(CatalogRecord(albumId: 1, id: 7, title: "other", url: "https://other.example/600/00abcd", thumbnailUrl: ""))
        let catalog = try Fixtures.writeCatalog(records, to: dir.appendingPathComponent("c.json"))
        held.holdRequests()
        let process = try CommandRunner.start(base(catalog, dir.appendingPathComponent("out"), held) + [
            "--mirror", "https://other.example=\(other.baseURL)", "--concurrency", "4", "--per-host", "1",
        ])
        XCTAssertTrue(held.waitUntilInFlight(1))
        XCTAssertTrue(other.waitUntilTotal(1), "the other host's record was fetched while the first host's were held")
        XCTAssertEqual(held.inFlight, 1, "--per-host 1: one request to the held host")
        held.release()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
        XCTAssertEqual(held.maxInFlight, 1)
        XCTAssertEqual(held.total, 6)
    }

    /// --rate 2: a burst of 2, then one request every 0.5 s. Only a lower bound on the spacing
    /// is checked (a slow machine can only spread requests further apart).
    func testRateSpacesRequestsAfterItsBurst() throws {
        let arrivals = Locked<[ContinuousClock.Instant]>([])
        let server = try TestServer { request in
            arrivals.withLock { $0.append(.now) }
            return Fixtures.images.respond(to: request)
        }
        let dir = Fixtures.temporaryDirectory(self)
        let catalog = try Fixtures.writeCatalog(Fixtures.records(6), to: dir.appendingPathComponent("c.json"))
        let run = try CommandRunner.run(base(catalog, dir.appendingPathComponent("out"), server) + ["--rate", "2", "--concurrency", "6"])
        XCTAssertEqual(run.status, 0, run.stderr)
        let times = arrivals.withLock { $0 }.sorted()
        XCTAssertEqual(times.count, 6)
        guard let first = times.first, let last = times.last else { return }
        // 6 requests at 2 a second after a burst of 2: the last 4 x 0.5 s after the bucket starts.
        // The first arrival may itself come late (a slow connection under ThreadSanitizer came
        // 0.1 s late), so the bound leaves one interval of slack; with no limit all 6 arrive at once.
        XCTAssertGreaterThanOrEqual(last - first, .milliseconds(1500))
    }

    /// A done file rewritten in place with its size and mtime put back fools the size, inode and
    /// mtime check of a plain rerun; --recheck hashes it and fetches it again.
    func testRecheckHashesDoneFilesAPlainRerunTrusts() throws {
        let server = try Fixtures.placeholderServer()
        let dir = Fixtures.temporaryDirectory(self)
        let out = dir.appendingPathComponent("out")
        let records = Fixtures.records(3)
        let catalog = try Fixtures.writeCatalog(records, to: dir.appendingPathComponent("c.json"))
        XCTAssertEqual(try CommandRunner.run(base(catalog, out, server)).status, 0)
        let path = out.appendingPathComponent("images/2.png").path
        let original = try Data(contentsOf: URL(fileURLWithPath: path))
        var info = stat()
        XCTAssertEqual(lstat(path, &info), 0)
        let fd = open(path, O_RDWR)
        var byte: UInt8 = 0
        XCTAssertEqual(pread(fd, &byte, 1, 40), 1)
        byte ^= 0xFF
        XCTAssertEqual(pwrite(fd, &byte, 1, 40), 1)
        var times = [info.st_atim, info.st_mtim]
        XCTAssertEqual(futimens(fd, &times), 0)
        close(fd)
        let before = server.total

        XCTAssertEqual(try CommandRunner.run(base(catalog, out, server)).status, 0)
        XCTAssertEqual(server.total, before, "a plain rerun trusts size, inode and mtime")
        XCTAssertNotEqual(try Data(contentsOf: URL(fileURLWithPath: path)), original)

        let recheck = try CommandRunner.run(base(catalog, out, server) + ["--recheck"])
        XCTAssertEqual(recheck.status, 0, recheck.stderr)
        XCTAssertEqual(server.total, before + 1, "--recheck fetched the rewritten file, and only it")
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), original)
    }

    func testServeListensOnTheHostItIsGiven() throws {
        let out = Pipe()
        let process = try CommandRunner.start(["serve", "--host", "127.0.0.2", "--port", "0"], stdout: out, stderr: out)
        defer {
            process.terminate()
            process.waitUntilExit()
        }
        var banner = ""
        while !banner.contains("\n") {
            let chunk = out.fileHandleForReading.availableData
            guard !chunk.isEmpty else { break }
            banner += String(decoding: chunk, as: UTF8.self)
        }
        let match = try XCTUnwrap(banner.firstMatch(of: /http:\/\/127\.0\.0\.2:(\d+)/), banner)
        let port = try XCTUnwrap(Int(match.output.1))
        let client = try RawHTTPClient(port: port, host: "127.0.0.2", timeout: 30)
        client.get("/3/abc")
        let answer = try client.readResponse()
        XCTAssertEqual(answer.status, 200)
        XCTAssertEqual(try PNGValidator(mode: .full).validate(answer.body), ImageInfo(width: 3, height: 3))
        XCTAssertThrowsError(try RawHTTPClient(port: port, host: "127.0.0.1"), "bound to 127.0.0.2 only")
    }

    /// verify's two kinds no other test produced, through the binary's --json.
    func testVerifyNamesADirectoryAsNotAFileAndOtherDimensionsAsAMismatch() throws {
        let server = try Fixtures.placeholderServer()
        let dir = Fixtures.temporaryDirectory(self)
        let out = dir.appendingPathComponent("out")
        let catalog = try Fixtures.writeCatalog(Fixtures.records(3), to: dir.appendingPathComponent("c.json"))
        XCTAssertEqual(try CommandRunner.run(base(catalog, out, server)).status, 0)
        // images/1.png: a sound PNG of other dimensions, its size and sha256 written into the
        // manifest, so only the dimensions disagree.
        let other = PNGEncoder.solid(width: 5, height: 7, red: 1, green: 2, blue: 3)
        try other.write(to: out.appendingPathComponent("images/1.png"))
        let manifestURL = out.appendingPathComponent("manifest.json")
        var manifest = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: manifestURL)) as? [String: Any])
        var items = try XCTUnwrap(manifest["items"] as? [[String: Any]])
        items[0]["bytes"] = other.count
        items[0]["sha256"] = SHA256.hex(other)
        manifest["items"] = items
        try JSONSerialization.data(withJSONObject: manifest, options: [.sortedKeys]).write(to: manifestURL)
        // images/2.png: a directory where the file should be.
        let second = out.appendingPathComponent("images/2.png")
        try FileManager.default.removeItem(at: second)
        try FileManager.default.createDirectory(at: second, withIntermediateDirectories: false)

        let verify = try CommandRunner.run(["verify", out.path, "--json"])
        XCTAssertEqual(verify.status, 1, verify.stderr)
        let report = try JSONDecoder().decode(VerificationReport.self, from: Data(verify.stdout.utf8))
        XCTAssertEqual(Set(report.problems.map(\.kind)), [.dimensionsMismatch, .notRegularFile], verify.stdout)
        XCTAssertEqual(report.problems.first { $0.kind == .dimensionsMismatch }?.id, 1)
        XCTAssertEqual(report.problems.first { $0.kind == .notRegularFile }?.id, 2)
    }

    func testStatusOnARestoredBundleSaysHowToAdoptIt() throws {
        let server = try Fixtures.placeholderServer()
        let dir = Fixtures.temporaryDirectory(self)
        let out = dir.appendingPathComponent("out")
        let catalog = try Fixtures.writeCatalog(Fixtures.records(3), to: dir.appendingPathComponent("c.json"))
        XCTAssertEqual(try CommandRunner.run(base(catalog, out, server)).status, 0)
        let tarball = dir.appendingPathComponent("b.tar.gz")
        XCTAssertEqual(try CommandRunner.run(["pack", out.path, "--output", tarball.path]).status, 0)
        let restored = dir.appendingPathComponent("restored")
        try FileManager.default.createDirectory(at: restored, withIntermediateDirectories: false)
        let untar = try ArchiverRun.run(shell: #"tar -xzf "$1" -C "$2""#, [tarball.path, restored.path])
        XCTAssertEqual(untar.status, 0, untar.stderr)

        let status = try CommandRunner.run(["status", restored.path])
        assertOneLineError(status, mentions: ["no .archiver/", "archiver run --out \(restored.path)", "archiver verify"])
        // And what it says works: the run adopts every file without a request.
        let before = server.total
        XCTAssertEqual(try CommandRunner.run(base(catalog, restored, server)).status, 0)
        XCTAssertEqual(server.total, before)
        let adopted = try CommandRunner.run(["status", restored.path])
        XCTAssertEqual(adopted.status, 0, adopted.stderr)
        XCTAssertTrue(adopted.stdout.contains("3 done, 0 failed, 0 pending of 3"), adopted.stdout)
    }

    func testFieldPicksTheURLKeyToArchive() throws {
        let server = try Fixtures.placeholderServer()
        let dir = Fixtures.temporaryDirectory(self)
        let out = dir.appendingPathComponent("out")
        let catalog = try Fixtures.writeCatalog([Fixtures.record(1, colour: "00aa00")], to: dir.appendingPathComponent("c.json"))
        let run = try CommandRunner.run(base(catalog, out, server) + ["--field", "thumbnailUrl"])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(server.count("/150/00aa00"), 1)
        XCTAssertEqual(server.count("/600/00aa00"), 0)
        let item = try XCTUnwrap(try items(out).first)
        XCTAssertEqual(item["width"] as? Int, 150)
        XCTAssertEqual(try Data(contentsOf: out.appendingPathComponent("images/1.png")), Fixtures.served("/150/00aa00"))
    }

    func testPruneDeletesTheFilesOfRecordsThatLeftTheCatalog() throws {
        let server = try Fixtures.placeholderServer()
        let dir = Fixtures.temporaryDirectory(self)
        let out = dir.appendingPathComponent("out")
        let records = Fixtures.records(3)
        let catalog = try Fixtures.writeCatalog(records, to: dir.appendingPathComponent("c.json"))
        XCTAssertEqual(try CommandRunner.run(base(catalog, out, server)).status, 0)
        try Fixtures.writeCatalog(Array(records.prefix(2)), to: URL(fileURLWithPath: catalog))
        XCTAssertEqual(try CommandRunner.run(base(catalog, out, server)).status, 0)
        XCTAssertEqual(Fixtures.imageNames(in: out), ["1.png", "2.png", "3.png"], "without --prune the file stays")
        let pruned = try CommandRunner.run(base(catalog, out, server) + ["--prune"])
        XCTAssertEqual(pruned.status, 0, pruned.stderr)
        XCTAssertEqual(Fixtures.imageNames(in: out), ["1.png", "2.png"])
        XCTAssertEqual(try items(out).count, 2)
    }
}
