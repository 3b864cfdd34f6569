import Foundation
import XCTest
@testable import ArchiverCore

/// Runs of catalogs with string ids (issue #15), on a loopback server: each id's file named by
/// `RecordKey` inside `images/`, the unsafe ones failed alone, and resume, verify, pack and
/// merge working as they do for integer ids.
final class StringIDTests: XCTestCase {
    private static let long = String(repeating: "x", count: 300)
    /// The issue's ids, ids a journal line must escape, an escaping test for the page, and integers.
    private static let ids: [RecordID] = [
        "a/b", "..", "CON", "Ünï", "A", "a", RecordID(long), "", ".", "../../escape", "tab\tand\nnewline", "100%", "back\\slash",
        "007", "<b>\"q\"&'</b>", RecordID(String(repeating: "é", count: 90)), 7, 12,
    ]
    private static let unsafe: Set<RecordID> = [RecordID(long), ""]

    /// A record per id, each with its own image (`/600/<colour>`).
    private func records(_ ids: [RecordID] = ids) -> [CatalogRecord] {
        ids.enumerated().map { index, id in
            let colour = String(format: "%06x", (index + 1) * 2_654_435 % 0xFFFFFF)
            return CatalogRecord(
                albumId: 1 + index / 6, id: id, title: "photo \(index)", url: "\(Fixtures.host)/600/\(colour)", thumbnailUrl: "")
        }
    }

    /// Every path under `root` (directories end in `/`), relative to it.
    private func tree(_ root: URL) -> Set<String> {
        var paths = Set<String>()
        let enumerator = FileManager.default.enumerator(atPath: root.path)
        while let path = enumerator?.nextObject() as? String {
            var isDirectory: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: root.appendingPathComponent(path).path, isDirectory: &isDirectory)
            paths.insert(isDirectory.boolValue ? path + "/" : path)
        }
        return paths
    }

    func testEverySafeIDIsWrittenUnderImagesByItsKeyAndOnlyTheUnsafeOnesFail() throws {
        let server = try Fixtures.placeholderServer()
        let parent = Fixtures.temporaryDirectory(self)
        let out = parent.appendingPathComponent("bundle")
        let records = records()
        let summary = try Fixtures.run(Fixtures.configuration(out: out, server: server), catalog: try Fixtures.catalog(records))
        XCTAssertEqual(summary.failed, 2)
        XCTAssertEqual(summary.done, records.count - 2)
        XCTAssertEqual(summary.failuresByKind, ["unsafe-key": 2])
        XCTAssertEqual(server.total, records.count - 2, "an unsafe id's URL is never fetched")

        let manifest = try Fixtures.manifest(in: out)
        XCTAssertEqual(manifest.items.map(\.id), Self.ids.sorted(), "one item per record, in id order")
        var names = Set<String>()
        for (record, item) in zip(records, records.map { record in manifest.items.first { $0.id == record.id }! }) {
            if Self.unsafe.contains(record.id) {
                XCTAssertEqual(item.status, .failed, "\(record.id)")
                XCTAssertEqual(item.error?.kind, "unsafe-key", "\(record.id)")
                XCTAssertNil(item.path)
                continue
            }
            let name = try XCTUnwrap(RecordKey.stem(for: record.id.text)) + ".png"
            names.insert(name)
            XCTAssertEqual(item.status, .done, "\(record.id)")
            XCTAssertEqual(item.path, "images/" + name)
            let served = Fixtures.served("/600/" + record.url.split(separator: "/").last!)
            XCTAssertEqual(try Data(contentsOf: out.appendingPathComponent("images").appendingPathComponent(name)), served, name)
        }
        XCTAssertEqual(names.count, records.count - 2, "no two ids share a file")
        XCTAssertTrue(names.isSuperset(of: ["a%2Fb.png", "%2E..png", "%43%4F%4E.png", "%41.png", "a.png", "7.png", "007.png"]))
        XCTAssertEqual(Set(Fixtures.imageNames(in: out)), names)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: parent.path), ["bundle"], "nothing beside the bundle")
        let outside = tree(out).filter { path in !["images/", "pages/", ".archiver/"].contains { path.hasPrefix($0) && path != $0 } }
        XCTAssertEqual(outside, ["images/", "pages/", ".archiver/", "manifest.json", "index.html"])
        XCTAssertEqual(tree(out).filter { $0.hasPrefix("images/") && $0 != "images/" }, Set(names.map { "images/" + $0 }))

        let unsafeLines = try String(contentsOf: out.appendingPathComponent("manifest.json"), encoding: .utf8)
            .split(separator: "\n").filter { $0.contains("\"unsafe-key\"") }
        XCTAssertEqual(unsafeLines.count, 2, "each unsafe id has its own line in the manifest")
        XCTAssertTrue(unsafeLines.contains { $0.contains(#""id": """#) })
        XCTAssertTrue(unsafeLines.contains { $0.contains(#""id": "\#(Self.long)""#) })

        let failures = try String(contentsOf: out.appendingPathComponent("pages/failures-0001.html"), encoding: .utf8)
        XCTAssertTrue(failures.contains(">#" + String(repeating: "x", count: 200) + "…</a>"), "the page cuts an id the manifest has whole")
        XCTAssertFalse(failures.contains(String(repeating: "x", count: 201)))

        let verify = try ArchiverRun.run(["verify", out.path])
        XCTAssertEqual(verify.status, 0, verify.stdout + verify.stderr)
        XCTAssertTrue(verify.stdout.hasPrefix("OK: 16 of 16 done items verified"), verify.stdout)
        let status = try ArchiverRun.run(["status", out.path])
        XCTAssertTrue(status.stdout.contains("16 done, 2 failed, 0 pending of 18"), status.stdout)
        XCTAssertTrue(status.stdout.contains("failed unsafe-key: 2"), status.stdout)
        XCTAssertTrue(status.stdout.contains("""
              "": no safe file name for an empty id
              "\(String(repeating: "x", count: 60))"...: no safe file name for an id of 300 bytes, over the limit of 200
            """), "the examples in id order, each id on one line: \(status.stdout)")

        let again = try Fixtures.run(Fixtures.configuration(out: out, server: server), catalog: try Fixtures.catalog(records))
        XCTAssertEqual(again.progress.requests, 0, "a rerun fetches nothing")
        XCTAssertEqual(try Fixtures.manifest(in: out), manifest)
    }

    func testAStringIDIsEscapedInTheManifestAndTheGallery() throws {
        let server = try Fixtures.placeholderServer()
        let out = Fixtures.temporaryDirectory(self)
        let id: RecordID = "<img src=x>\"&'%\u{1}"
        _ = try Fixtures.run(Fixtures.configuration(out: out, server: server), catalog: try Fixtures.catalog(records([id, "ok"])))
        let manifest = try String(contentsOf: out.appendingPathComponent("manifest.json"), encoding: .utf8)
        XCTAssertTrue(manifest.contains(#""id": "<img src=x>\"&'%\u0001""#), manifest)
        XCTAssertEqual(try Fixtures.manifest(in: out).items.first?.id, id)

        let stem = try XCTUnwrap(id.stem)
        XCTAssertEqual(stem, "%3Cimg%20src%3Dx%3E%22%26%27%25%01")
        let page = try String(contentsOf: out.appendingPathComponent("pages/0001.html"), encoding: .utf8)
        XCTAssertFalse(page.contains("<img src=x>"), "the id is text, not markup")
        XCTAssertTrue(page.contains("<small>#&lt;img src=x&gt;&quot;&amp;&#39;%\u{1}</small>"), page)
        XCTAssertTrue(page.contains("id=\"item-\(stem)\""))
        // The file name is a URL on the page: its `%` is `%25`, which a browser decodes back.
        let src = "../images/" + stem.replacingOccurrences(of: "%", with: "%25") + ".png"
        XCTAssertEqual(GalleryFiles.count("src=\"\(src)\"", in: page), 1)
        let file = out.appendingPathComponent("pages").appendingPathComponent(try XCTUnwrap(src.removingPercentEncoding))
        XCTAssertTrue(FileManager.default.fileExists(atPath: file.standardizedFileURL.path), file.path)
        let index = try String(contentsOf: out.appendingPathComponent("index.html"), encoding: .utf8)
        XCTAssertTrue(index.contains("#&lt;img src=x&gt;&quot;&amp;&#39;%\u{1} to #ok"), index)
    }

    func testAResumedStringIDRunFetchesOnlyWhatTheJournalLacks() throws {
        let server = try Fixtures.placeholderServer()
        let out = Fixtures.temporaryDirectory(self)
        let records = records()
        let catalog = try Fixtures.catalog(records)
        let config = Fixtures.configuration(out: out, server: server)
        _ = try Fixtures.run(config, catalog: catalog)
        XCTAssertEqual(server.total, 16)
        // A journal that has part of the run: the first 9 outcomes of a killed run (the
        // manifest is that run's too), and a torn line after them.
        let layout = BundleLayout(root: out)
        let lines = try String(contentsOf: layout.journal, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        XCTAssertEqual(lines.count, 19, "one line per record after compaction, then the end")
        try Data((lines.prefix(9).joined(separator: "\n") + "\n" + lines[9].prefix(12)).utf8).write(to: layout.journal)
        let kept = Set(lines.prefix(9).compactMap { JournalLine.decode($0)?.id })
        XCTAssertEqual(kept.count, 9)

        let resumed = try Fixtures.run(config, catalog: catalog)
        let expected = records.count { !kept.contains($0.id) && !Self.unsafe.contains($0.id) }
        XCTAssertEqual(resumed.progress.requests, expected, "only the records the journal lacks are fetched")
        XCTAssertEqual(server.total, 16 + expected)
        XCTAssertEqual(resumed.done, 16)
        XCTAssertEqual(resumed.failed, 2)
        let index = JournalIndex(path: layout.journal.path)
        XCTAssertEqual(index.lineCount, 18, "compacted again")
        XCTAssertEqual(Set(index.ids), Set(Self.ids))
        XCTAssertEqual(try Fixtures.run(config, catalog: catalog).progress.requests, 0)
    }

    func testARefreshAndTheAdoptionOfARestoredBundleFindStringIDsUnchanged() throws {
        let server = try Fixtures.placeholderServer()
        let root = Fixtures.temporaryDirectory(self)
        let out = root.appendingPathComponent("bundle")
        let catalog = try Fixtures.catalog(records())
        var config = Fixtures.configuration(out: out, server: server)
        _ = try Fixtures.run(config, catalog: catalog)
        let manifest = try Data(contentsOf: out.appendingPathComponent("manifest.json"))
        config.refresh = true
        let refreshed = try Fixtures.run(config, catalog: catalog)
        XCTAssertEqual(refreshed.progress.requests, 16)
        XCTAssertEqual(refreshed.progress.unchanged, 16, "the same bytes: every file kept")
        XCTAssertEqual(try Data(contentsOf: out.appendingPathComponent("manifest.json")), manifest)

        // The bundle proper restored elsewhere, without `.archiver/`: adopted without a request.
        let restored = root.appendingPathComponent("restored")
        try FileManager.default.copyItem(at: out, to: restored)
        try FileManager.default.removeItem(at: restored.appendingPathComponent(".archiver"))
        config = Fixtures.configuration(out: restored, server: server)
        let adopted = try Fixtures.run(config, catalog: catalog)
        XCTAssertEqual(adopted.adopted, 16)
        XCTAssertEqual(adopted.progress.requests, 0)
        XCTAssertEqual(try Data(contentsOf: restored.appendingPathComponent("manifest.json")), manifest)
    }

    func testPackedStringIDShardsMergeIntoTheBundleOfOneRun() throws {
        let server = try Fixtures.placeholderServer()
        let root = Fixtures.temporaryDirectory(self)
        let catalog = try Fixtures.catalog(records())
        func run(_ name: String, shard: Shard?) throws -> URL {
            var config = Fixtures.configuration(out: root.appendingPathComponent(name), server: server)
            config.shard = shard
            _ = try Fixtures.run(config, catalog: catalog)
            return config.outputDirectory
        }
        func pack(_ directory: URL) throws -> URL {
            let tarball = directory.appendingPathExtension("tar.gz")
            try BundlePacker().pack(directory, to: tarball)
            return tarball
        }
        let whole = try run("whole", shard: nil)
        let shards = try (1...3).map { try pack(try run("s\($0)", shard: Shard(index: $0, count: 3))) }
        XCTAssertEqual(try shards.map { try ArchiverRun.run(["verify", $0.path]).status }, [0, 0, 0])
        let merged = root.appendingPathComponent("merged")
        let merge = try ArchiverRun.run(["merge", "--out", merged.path] + shards.map(\.path))
        XCTAssertEqual(merge.status, 1, "the unsafe ids failed, as in one run: \(merge.stderr)")
        XCTAssertEqual(try GalleryFiles.read(merged), try GalleryFiles.read(whole))
        XCTAssertEqual(
            try Data(contentsOf: merged.appendingPathComponent("manifest.json")),
            try Data(contentsOf: whole.appendingPathComponent("manifest.json")))
        XCTAssertEqual(Fixtures.imageNames(in: merged), Fixtures.imageNames(in: whole))
        XCTAssertEqual(try Data(contentsOf: try pack(merged)), try Data(contentsOf: try pack(whole)))
        XCTAssertEqual(try ArchiverRun.run(["verify", merged.path]).status, 0)
    }

    func testACSVCellSpellingAnIntegerIsThatIntegerAsInJSON() throws {
        let server = try Fixtures.placeholderServer()
        let dir = Fixtures.temporaryDirectory(self)
        let url = { (colour: String) in "\(Fixtures.host)/600/\(colour)" }
        let json = """
            [{"id": 7, "url": "\(url("aa0000"))", "title": "seven"},
             {"id": "007", "url": "\(url("00aa00"))", "title": "zero zero seven"},
             {"id": "a,b", "url": "\(url("0000aa"))", "title": "comma"}]
            """
        let csv = "id,url,title\r\n7,\(url("aa0000")),seven\r\n007,\(url("00aa00")),zero zero seven\r\n\"a,b\",\(url("0000aa")),comma\r\n"
        let stringJSON = json.replacingOccurrences(of: #""id": 7"#, with: #""id": "7""#)
        var manifests: [Manifest] = []
        for (name, text) in [("c.json", json), ("c.csv", csv), ("s.json", stringJSON)] {
            let file = dir.appendingPathComponent(name)
            try Data(text.utf8).write(to: file)
            let out = dir.appendingPathComponent(name + ".bundle")
            _ = try Fixtures.run(Fixtures.configuration(out: out, server: server), catalog: try Catalog(source: file.path, path: file.path))
            manifests.append(try Fixtures.manifest(in: out))
            XCTAssertEqual(Fixtures.imageNames(in: out), ["007.png", "7.png", "a%2Cb.png"], name)
        }
        XCTAssertEqual(manifests[0].items.map(\.id), [7, "007", "a,b"])
        XCTAssertEqual(manifests[1].items, manifests[0].items, "CSV 7 is JSON 7")
        XCTAssertEqual(manifests[2].items, manifests[0].items, "JSON \"7\" is JSON 7")
        XCTAssertEqual(
            ManifestEncoding.encode(manifests[1]).split(separator: 0x0A).dropFirst(3).dropLast(2),
            ManifestEncoding.encode(manifests[0]).split(separator: 0x0A).dropFirst(3).dropLast(2), "the same item bytes")
    }

    func testPruneRemovesTheFilesOfStringIDsThatLeftTheCatalogAndNothingElse() throws {
        let server = try Fixtures.placeholderServer()
        let out = Fixtures.temporaryDirectory(self)
        let hashed = RecordID(String(repeating: "é", count: 90))
        let all = records([7, "a/b", "Ünï", hashed, "stay"])
        var config = Fixtures.configuration(out: out, server: server)
        _ = try Fixtures.run(config, catalog: try Fixtures.catalog(all))
        let hashedName = try XCTUnwrap(hashed.stem) + ".png"
        XCTAssertTrue(hashedName.contains("~"))
        let images = BundleLayout(root: out).images
        for name in ["Cover.png", "notes.txt"] { try Data("mine".utf8).write(to: images.appendingPathComponent(name)) }
        config.prune = true
        _ = try Fixtures.run(config, catalog: try Fixtures.catalog(all.filter { $0.id == "stay" || $0.id == 7 }))
        XCTAssertEqual(Fixtures.imageNames(in: out), ["7.png", "Cover.png", "notes.txt", "stay.png"], "names no id has are kept")
        _ = try Fixtures.run(config, catalog: try Fixtures.catalog(all))
        XCTAssertTrue(Fixtures.imageNames(in: out).contains(hashedName))
        _ = try Fixtures.run(config, catalog: try Fixtures.catalog(all.filter { $0.id != hashed }))
        XCTAssertFalse(Fixtures.imageNames(in: out).contains(hashedName), "a hashed name is pruned too")
        XCTAssertEqual(Fixtures.imageNames(in: out).count, 6)
    }
}
