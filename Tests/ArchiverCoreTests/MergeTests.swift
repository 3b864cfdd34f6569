import Foundation
import XCTest
@testable import ArchiverCore
@testable import ArchiverServer

/// `archiver merge`: shard bundles, directories and tarballs, joined into the bundle one run of
/// the whole catalog gives, or refused.
final class MergeTests: XCTestCase {
    private var root: URL!
    private var server: TestServer!
    private var catalog: Catalog!

    override func setUpWithError() throws {
        root = Fixtures.temporaryDirectory(self)
        server = try Fixtures.placeholderServer()
        server.route("/600/404040", .text(404, "gone\n"))
        var records = Fixtures.records(45)
        records += [Fixtures.record(46, colour: "404040", album: 2), Fixtures.record(47, colour: "00ff00"), Fixtures.record(48, colour: "00ff00")]
        catalog = try Fixtures.catalog(records)
    }

    /// Runs the whole catalog (shard nil) or one shard into `root/name`.
    @discardableResult
    private func run(_ name: String, shard: Shard?, field: ImageField = .url, catalog: Catalog? = nil) throws -> URL {
        var config = Fixtures.configuration(out: root.appendingPathComponent(name), server: server)
        config.shard = shard
        config.field = field
        _ = try Fixtures.run(config, catalog: catalog ?? self.catalog)
        return config.outputDirectory
    }

    private func shards(_ count: Int, prefix: String = "s") throws -> [String] {
        try (1...count).map { try run("\(prefix)\($0)", shard: Shard(index: $0, count: count)).path }
    }

    private func pack(_ directory: String) throws -> String {
        let tarball = directory + ".tar.gz"
        try BundlePacker().pack(URL(fileURLWithPath: directory), to: URL(fileURLWithPath: tarball))
        return tarball
    }

    private func merge(_ shards: [String], out: String = "merged") throws -> ArchiverRun {
        try ArchiverRun.run(["merge", "--out", root.appendingPathComponent(out).path] + shards)
    }

    private func bytes(_ directory: URL, _ path: String) throws -> Data {
        try Data(contentsOf: directory.appendingPathComponent(path))
    }

    func testMergeOfDirectoriesAndTarballsIsByteIdenticalToOneRunAndCarriesFailures() throws {
        let whole = try run("whole", shard: nil)
        var shards = try shards(3)
        shards[1] = try pack(shards[1])
        shards[2] = try pack(shards[2])
        // Debris an interrupted write leaves in a shard's images/ is not the bundle's: not copied.
        for name in [".partial-3", ".hidden.png"] {
            try Data("debris".utf8).write(to: URL(fileURLWithPath: shards[0]).appendingPathComponent("images/" + name))
        }
        let merge = try merge(shards.reversed())
        XCTAssertEqual(merge.status, 1, "one item failed, as in the run: \(merge.stderr)")
        XCTAssert(merge.stderr.contains("47 done, 1 failed (1 http-status)"), merge.stderr)
        let merged = root.appendingPathComponent("merged")
        for path in ["manifest.json", "index.html"] {
            XCTAssertEqual(try bytes(merged, path), try bytes(whole, path), path)
        }
        XCTAssertEqual(Fixtures.imageNames(in: merged), Fixtures.imageNames(in: whole))
        for name in Fixtures.imageNames(in: whole) {
            XCTAssertEqual(try bytes(merged, "images/" + name), try bytes(whole, "images/" + name), name)
        }
        let failed = try Fixtures.manifest(in: merged).items.first { $0.id == 46 }
        XCTAssertEqual(failed?.status, .failed)
        XCTAssertEqual(failed?.error?.status, 404)
        XCTAssertEqual(
            try Data(contentsOf: URL(fileURLWithPath: try pack(merged.path))),
            try Data(contentsOf: URL(fileURLWithPath: try pack(whole.path))))
        XCTAssertEqual(try ArchiverRun.run(["verify", merged.path]).status, 0)
        // The spools of the shards (a tarball's manifest, the decoded items) are not left in it.
        let state = try FileManager.default.contentsOfDirectory(atPath: BundleLayout(root: merged).state.path)
        XCTAssertEqual(state.filter { $0.hasPrefix("merge-shard-") }, [], "\(state)")
        // What a completed run leaves: a run of the whole catalog into it fetches nothing.
        let requests = server.total
        var config = Fixtures.configuration(out: merged, server: server)
        config.skipFailed = true
        let rerun = try Fixtures.run(config, catalog: catalog)
        XCTAssertEqual(server.total, requests)
        XCTAssertEqual(rerun.done, 47)
        XCTAssertEqual(try bytes(merged, "manifest.json"), try bytes(whole, "manifest.json"))
    }

    /// Dot files in `images/` are debris of interrupted writes, not the bundle's: a tarball
    /// shard's are skipped as a directory shard's are (they were copied and counted as unexpected
    /// files, refusing the merge). `pack` leaves them out, so this tarball is written by hand, as
    /// `tar` of the shard directory would hold them, a dot directory's file included.
    func testDotFilesInATarballShardsImagesAreSkippedAsADirectoryShardsAre() throws {
        let whole = try run("whole", shard: nil)
        let shards = try shards(2)
        for shard in shards {
            let images = URL(fileURLWithPath: shard).appendingPathComponent("images")
            try FileManager.default.createDirectory(at: images.appendingPathComponent(".cache"), withIntermediateDirectories: false)
            for name in [".partial-3", ".hidden.png", ".cache/1.png"] {
                try Data("debris".utf8).write(to: images.appendingPathComponent(name))
            }
        }
        let tarball = root.appendingPathComponent("s2-by-hand.tar.gz").path
        let writer = try TarballWriter(path: tarball, modificationTime: 0)
        let images = URL(fileURLWithPath: shards[1]).appendingPathComponent("images")
        try writer.addDirectory("images/")
        for name in try XCTUnwrap(FileManager.default.subpaths(atPath: images.path)).sorted() {
            let file = images.appendingPathComponent(name)
            if BundleLayout.fileKind(atPath: file.path) == .directory {
                try writer.addDirectory("images/" + name + "/")
            } else {
                try writer.addFile("images/" + name, data: Data(contentsOf: file))
            }
        }
        try writer.addFile("manifest.json", data: Data(contentsOf: BundleLayout(root: URL(fileURLWithPath: shards[1])).manifest))
        try writer.close()

        for given in [[shards[0], shards[1]], [shards[0], tarball]] {
            let out = given[1] == tarball ? "from-tarball" : "from-directories"
            let merge = try merge(given, out: out)
            XCTAssertEqual(merge.status, 1, "one item failed, as in the run: \(merge.stderr)")
            XCTAssertFalse(merge.stderr.contains("unexpected"), merge.stderr)
            XCTAssert(merge.stderr.contains("47 done, 1 failed (1 http-status)"), merge.stderr)
            let merged = root.appendingPathComponent(out)
            XCTAssertEqual(Fixtures.imageNames(in: merged), Fixtures.imageNames(in: whole), out)
            XCTAssertEqual(try bytes(merged, "manifest.json"), try bytes(whole, "manifest.json"), out)
        }
    }

    func testMergeRefusesAMissingShardNamingIt() throws {
        let shards = try shards(4)
        let merge = try merge([shards[0], shards[2]])
        XCTAssertEqual(merge.status, 2)
        XCTAssertEqual(merge.stderr, "archiver: shard 2/4 is missing\narchiver: shard 4/4 is missing\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: root.appendingPathComponent("merged").path))
    }

    func testMergeRefusesTheSameIndexTwice() throws {
        let shards = try shards(2)
        let again = try run("again", shard: Shard(index: 2, count: 2)).path
        let merge = try merge(shards + [again])
        XCTAssertEqual(merge.status, 2)
        XCTAssertEqual(merge.stderr, "archiver: shard 2/2 is given twice: \(shards[1]) and \(again)\n")
    }

    func testMergeRefusesShardsOfAnotherCatalogFieldOrCount() throws {
        let shards = try shards(2)
        let other = try Fixtures.catalog(Fixtures.records(10), source: "other.json")
        let foreign = try run("foreign", shard: Shard(index: 2, count: 2), catalog: other).path
        var merge = try merge([shards[0], foreign])
        XCTAssertEqual(merge.status, 2)
        XCTAssert(merge.stderr.hasPrefix("archiver: shard 2/2 (\(foreign)) is of catalog other.json (sha256 "), merge.stderr)
        XCTAssertEqual(merge.stderr.split(separator: "\n").count, 1, merge.stderr)

        let thumbnails = try run("thumbnails", shard: Shard(index: 2, count: 2), field: .thumbnailUrl).path
        merge = try self.merge([shards[0], thumbnails])
        XCTAssertEqual(merge.status, 2)
        XCTAssert(merge.stderr.contains("archiver: shard 2/2 (\(thumbnails)) archived --field thumbnailUrl, shard 1/2 (\(shards[0])) --field url\n"), merge.stderr)

        let three = try run("three", shard: Shard(index: 2, count: 3)).path
        merge = try self.merge([shards[0], three])
        XCTAssertEqual(merge.status, 2)
        XCTAssert(merge.stderr.contains("archiver: shard 2/3 (\(three)) is one of 3 shards, shard 1/2 (\(shards[0])) one of 2\n"), merge.stderr)
        XCTAssert(merge.stderr.contains("archiver: shard 2/2 is missing\n"), merge.stderr)

        let whole = try run("whole", shard: nil).path
        merge = try self.merge([whole])
        XCTAssertEqual(merge.status, 2)
        XCTAssert(merge.stderr.contains("is not a shard"), merge.stderr)
    }

    func testMergeRefusesADamagedDirectoryOrTarballNamingEachBadItem() throws {
        let shards = try shards(2)
        let manifests = try shards.map { try Manifest.read(from: BundleLayout(root: URL(fileURLWithPath: $0)).manifest) }
        let first = try XCTUnwrap(manifests[0].items.first { $0.status == .done }?.id)
        let second = try XCTUnwrap(manifests[1].items.first { $0.status == .done }?.id)
        for (shard, id) in zip(shards, [first, second]) {
            let url = URL(fileURLWithPath: shard).appendingPathComponent("images/\(id).png")
            var data = try Data(contentsOf: url)
            data[40] ^= 0xff
            try data.write(to: url)
        }
        try FileManager.default.removeItem(atPath: shards[1] + "/images/\(try XCTUnwrap(manifests[1].items.last { $0.status == .done }?.id)).png")
        let tarball = try pack(shards[1])
        let merge = try merge([shards[0], tarball])
        XCTAssertEqual(merge.status, 1)
        let lines = merge.stderr.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 4, merge.stderr)
        XCTAssert(lines.contains("archiver: shard 1/2 (\(shards[0])): \(first): sha256 mismatch (images/\(first).png)"), merge.stderr)
        XCTAssert(lines.contains("archiver: shard 2/2 (\(tarball)): \(second): sha256 mismatch (images/\(second).png)"), merge.stderr)
        XCTAssert(lines[2].hasSuffix("missing (images/\(manifests[1].items.last { $0.status == .done }!.id).png)"), merge.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: root.appendingPathComponent("merged").path))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: root.path).filter { $0.hasPrefix(".") }, [])
    }

    func testMergeRefusesAnUnfinishedShardAndAnExistingOutput() throws {
        let shards = try shards(2)
        let layout = BundleLayout(root: URL(fileURLWithPath: shards[0]))
        var manifest = try Manifest.read(from: layout.manifest)
        manifest.items[0].status = .pending
        try manifest.write(to: layout.manifest)
        var merge = try merge(shards)
        XCTAssertEqual(merge.status, 2)
        XCTAssertEqual(merge.stderr, "archiver: shard 1/2 (\(shards[0])) is unfinished: 1 item pending; run it again to finish it\n")

        try FileManager.default.createDirectory(at: root.appendingPathComponent("taken/x"), withIntermediateDirectories: true)
        merge = try self.merge(shards, out: "taken")
        XCTAssertEqual(merge.status, 2)
        XCTAssert(merge.stderr.contains("already exists"), merge.stderr)
    }

    func testMergeOfFourShardsWhoseIDsInterleaveStreamsThemInIDOrderLikeOneRun() throws {
        let whole = try run("whole", shard: nil)
        var shards = try shards(4)
        // The shards' ids interleave: joining them is a merge in id order, not a concatenation.
        let owners = try (1...48).map { id -> Int in
            try XCTUnwrap(shards.firstIndex { shard in
                (try? Fixtures.manifest(in: URL(fileURLWithPath: shard)).items.contains { $0.id == RecordID(integerLiteral: id) }) == true
            })
        }
        XCTAssertGreaterThan(zip(owners, owners.dropFirst()).count { $0 != $1 }, 8, "\(owners)")
        XCTAssertEqual(Set(owners).count, 4)
        shards[0] = try pack(shards[0])
        let merge = try merge([shards[3], shards[0], shards[2], shards[1]])
        XCTAssertEqual(merge.status, 1, merge.stderr)
        let merged = root.appendingPathComponent("merged")
        for path in ["manifest.json", "index.html"] + Fixtures.fileNames(in: whole.appendingPathComponent("pages")).map({ "pages/" + $0 }) {
            XCTAssertEqual(try bytes(merged, path), try bytes(whole, path), path)
        }
        XCTAssertEqual(Fixtures.fileNames(in: merged.appendingPathComponent("pages")), Fixtures.fileNames(in: whole.appendingPathComponent("pages")))
        XCTAssertEqual(Fixtures.imageNames(in: merged), Fixtures.imageNames(in: whole))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: merged.appendingPathComponent(".archiver").path).filter { $0.hasPrefix("merge-") }, [])
        XCTAssertEqual(try ArchiverRun.run(["verify", merged.path]).status, 0)
    }

    func testMergeRefusesAShardWhoseManifestIsOutOfIDOrderNamingIt() throws {
        let shards = try shards(3)
        let layout = BundleLayout(root: URL(fileURLWithPath: shards[1]))
        var lines = try String(contentsOf: layout.manifest, encoding: .utf8).components(separatedBy: "\n")
        let items = lines.indices.filter { lines[$0].hasPrefix("    {") }
        XCTAssertGreaterThan(items.count, 2)
        let (one, two) = (items[0], items[1])
        (lines[one], lines[two]) = (lines[two], lines[one])
        try lines.joined(separator: "\n").write(to: layout.manifest, atomically: true, encoding: .utf8)
        let manifest = try Fixtures.manifest(in: layout.root)
        let (first, second) = (manifest.items[0].id, manifest.items[1].id)
        XCTAssertGreaterThan(first, second)

        let merge = try merge(shards)
        XCTAssertEqual(merge.status, 2, merge.stderr)
        XCTAssertEqual(
            merge.stderr,
            "archiver: shard 2/3 (\(shards[1])) lists its items out of id order (\(second) after \(first)); merge reads each shard's manifest in id order, as archiver writes it\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: root.appendingPathComponent("merged").path))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: root.path).filter { $0.hasPrefix(".") }, [])
    }

    func testMergeJSONSummaryCountsTheShardsAndItemsAndLogsNoTerminalCodes() throws {
        var shards = try shards(2)
        shards[1] = try pack(shards[1])
        let merge = try ArchiverRun.run(["merge", "--json", "--out", root.appendingPathComponent("merged").path] + shards)
        XCTAssertEqual(merge.status, 1, merge.stderr)
        let summary = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(merge.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(summary["shards"] as? Int, 2)
        XCTAssertEqual(summary["tarballs"] as? Int, 1)
        XCTAssertEqual(summary["done"] as? Int, 47)
        XCTAssertEqual(summary["failed"] as? Int, 1)
        XCTAssertEqual(summary["exitStatus"] as? Int, 1)
        XCTAssertEqual(summary["failuresByKind"] as? [String: Int], ["http-status": 1])
        XCTAssertFalse(merge.stderr.contains("\u{1B}"), "not a terminal: plain lines only: \(merge.stderr)")
    }

    func testMergeProgressLineSaysRecordsJoinedShardsRateAndETA() {
        var progress = BundleMerger.Progress()
        progress.shards = 4
        progress.shardsRead = 2
        XCTAssertEqual(progress.line(seconds: 1), "reading shards: 2/4 shards read")
        progress.shardsRead = 4
        progress.records = 200_000
        progress.recordsJoined = 50_000
        progress.readSeconds = 8
        XCTAssertEqual(progress.line(seconds: 10), "50000/200000 records joined, 4/4 shards read  25000 records/s  ETA 6 s")
    }

    /// `Shard.maxCount` allows 100,000 shards, but the join kept each item's shard in 16 bits,
    /// and a record in shard 65,537 trapped it (SIGILL). The index is now 32 bits wide: the
    /// record of the last of 65,538 shards (the others hold none) is joined from that shard.
    /// The shards' items are joined in id order through a heap of the shards by their next id:
    /// 300 shards of interleaved integer and string ids (some shards empty, one holding most)
    /// come out as one sort of them all would give, and an id in two shards is refused.
    func testShardsAreJoinedInIDOrderWhateverTheirNumber() throws {
        let info = Manifest.CatalogInfo(source: "test.json", sha256: String(repeating: "0", count: 64), records: 1)
        var generator = SeededGenerator()
        var all: [RecordID] = (1...3000).map { RecordID($0 * 7 % 3001) } + (0..<500).map { RecordID("s\($0 * 13 % 500)") }
        all.shuffle(using: &generator)
        var byShard = [[RecordID]](repeating: [], count: 300)
        for (index, id) in all.enumerated() {
            let shard = index % 3 == 0 ? 5 : Int.random(in: 0..<300, using: &generator)
            if shard % 37 != 36 { byShard[shard].append(id) } else { byShard[5].append(id) }
        }
        func bundles(_ ids: [[RecordID]]) -> [ShardBundle] {
            ids.enumerated().map { index, ids in
                var digest = ShardDigest(name: "shard \(index + 1)/\(ids.count)", shard: nil, copies: ShardDigest.Copies())
                for id in ids.sorted() {
                    digest.add(Manifest.Item(id: id, albumId: 1, title: "t", url: "u", source: "u", status: .pending, attempts: 0))
                }
                return ShardBundle(path: "s\(index)", isTarball: false, catalog: info, field: .url, version: 1, digest: digest, items: "")
            }
        }
        let shards = bundles(byShard)
        XCTAssertTrue(byShard.contains { $0.isEmpty }, "some shards are empty")
        let order = try MergedOutput.order(shards)
        let joined = (0..<order.count).map { shards[Int(order.shard[$0])].digest.ids[Int(order.position[$0])] }
        XCTAssertEqual(joined, all.sorted())
        var twice = byShard
        twice[200].append(all[17])
        XCTAssertThrowsError(try MergedOutput.order(bundles(twice))) { error in
            XCTAssertTrue("\(error)".contains("\(all[17]) is in both"), "\(error)")
        }
    }

    func testMergeJoinsARecordOfShardBeyondUInt16() throws {
        let count = Int(UInt16.max) + 3
        let info = Manifest.CatalogInfo(source: "test.json", sha256: String(repeating: "0", count: 64), records: 1)
        let shards = (1...count).map { index in
            var digest = ShardDigest(name: "shard \(index)/\(count)", shard: nil, copies: ShardDigest.Copies())
            if index == count { digest.add(Manifest.Item(id: 7, albumId: 1, title: "t", url: "u", source: "u", status: .pending, attempts: 0)) }
            return ShardBundle(path: "s\(index)", isTarball: false, catalog: info, field: .url, version: 1, digest: digest, items: "")
        }
        let order = try MergedOutput.order(shards)
        XCTAssertEqual(order.count, 1)
        XCTAssertEqual(order.shard.map(Int.init), [count - 1])
        XCTAssertEqual(order.position, [0])
    }
}
