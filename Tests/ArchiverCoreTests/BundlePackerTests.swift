import Foundation
import XCTest
@testable import ArchiverCore

final class BundlePackerTests: XCTestCase {
    private var fixture: BundleFixture!
    private var outputDirectory: URL!

    override func setUpWithError() throws {
        fixture = try BundleFixture.make(count: 20, failed: [5], pending: [6])
        try Gallery.write(for: fixture.manifest(), in: fixture.layout)
        outputDirectory = try BundleFixture.temporaryDirectory()
    }

    override func tearDown() {
        fixture.remove()
        try? FileManager.default.removeItem(at: outputDirectory)
    }

    private func output(_ name: String) -> URL {
        outputDirectory.appendingPathComponent(name)
    }

    private func entries(of tarball: URL) throws -> [TarballReader.Entry] {
        let reader = try TarballReader(path: tarball.path)
        var entries: [TarballReader.Entry] = []
        while let entry = try reader.next() {
            // The size the header declares, which merge checks before copying an entry.
            XCTAssertEqual(entry.size, Int64(entry.data.count), entry.path)
            entries.append(entry)
        }
        return entries
    }

    func testPackingTwiceGivesIdenticalBytesAndSHA256() throws {
        let first = try BundlePacker().pack(fixture.root, to: output("a.tar.gz"))
        let second = try BundlePacker().pack(fixture.root, to: output("b.tar.gz"))
        XCTAssertEqual(try Data(contentsOf: output("a.tar.gz")), try Data(contentsOf: output("b.tar.gz")))
        XCTAssertEqual(first.sha256, second.sha256)
        XCTAssertEqual(first.sha256, SHA256.hex(try Data(contentsOf: output("a.tar.gz"))))
        XCTAssertEqual(first.bytes, Int64(try Data(contentsOf: output("a.tar.gz")).count))
    }

    func testGzipHeaderHasNoTimestampAndNoFileName() throws {
        try BundlePacker().pack(fixture.root, to: output("a.tar.gz"))
        let header = [UInt8](try Data(contentsOf: output("a.tar.gz")).prefix(10))
        XCTAssertEqual(Array(header[0...2]), [0x1f, 0x8b, 0x08], "gzip, deflate")
        XCTAssertEqual(header[3], 0, "no FNAME or other flags")
        XCTAssertEqual(Array(header[4...7]), [0, 0, 0, 0], "MTIME zero")
    }

    func testTarballHoldsExactlyManifestGalleryAndImagesSortedWithFixedHeaders() throws {
        let result = try BundlePacker().pack(fixture.root, to: output("a.tar.gz"))
        let entries = try entries(of: output("a.tar.gz"))
        let done = (1...20).filter { $0 != 5 && $0 != 6 }
        let pages = ["pages/", "pages/0001.html", "pages/failures-0001.html"]
        let expected = (["index.html", "manifest.json", "images/"] + pages + done.map { "images/\($0).png" })
            .sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        XCTAssertEqual(entries.map(\.path), expected)
        XCTAssertEqual(result.entries, expected.count)
        XCTAssertEqual(result.images, done.count)
        for entry in entries {
            XCTAssertEqual(entry.modificationTime, 0, entry.path)
            XCTAssertEqual(entry.owner, "0:0 root:root", entry.path)
            XCTAssertEqual(entry.permissions, entry.isDirectory ? 0o755 : 0o644, entry.path)
            XCTAssertFalse(entry.path.contains(".archiver") || entry.path.contains("/."), entry.path)
        }
        let manifest = try XCTUnwrap(entries.first { $0.path == "manifest.json" })
        XCTAssertEqual(manifest.data, try Data(contentsOf: fixture.layout.manifest))
        let image = try XCTUnwrap(entries.first { $0.path == "images/17.png" })
        XCTAssertEqual(image.data, try Data(contentsOf: fixture.image(17)))
    }

    /// The pages the manifest calls for are packed and verify as expected files; a page of an
    /// older, longer gallery or a file of someone else's in `pages/` is not packed.
    func testThePagesTheManifestCallsForArePackedAndVerifyWithoutUnexpectedFiles() throws {
        try Data("stale".utf8).write(to: fixture.layout.pages.appendingPathComponent("0002.html"))
        try Data("mine".utf8).write(to: fixture.layout.pages.appendingPathComponent("notes.html"))
        try BundlePacker().pack(fixture.root, to: output("a.tar.gz"))
        let packed = try entries(of: output("a.tar.gz")).filter { $0.path.hasPrefix("pages/") }
        XCTAssertEqual(packed.map(\.path), ["pages/", "pages/0001.html", "pages/failures-0001.html"])
        XCTAssertEqual(packed[1].data, try Data(contentsOf: fixture.layout.pages.appendingPathComponent("0001.html")))
        let report = try BundleVerifier().verify(output("a.tar.gz"))
        XCTAssertEqual(report.problems, [])
        XCTAssertEqual(report.verified, 18)
    }

    func testSourceDateEpochChangesOnlyTheEntryTimes() throws {
        try BundlePacker(modificationTime: 0).pack(fixture.root, to: output("zero.tar.gz"))
        try BundlePacker(modificationTime: 1_700_000_000).pack(fixture.root, to: output("epoch.tar.gz"))
        try BundlePacker(modificationTime: 1_700_000_000).pack(fixture.root, to: output("epoch2.tar.gz"))
        XCTAssertNotEqual(try Data(contentsOf: output("zero.tar.gz")), try Data(contentsOf: output("epoch.tar.gz")))
        XCTAssertEqual(try Data(contentsOf: output("epoch.tar.gz")), try Data(contentsOf: output("epoch2.tar.gz")))
        let zero = try entries(of: output("zero.tar.gz"))
        let epoch = try entries(of: output("epoch.tar.gz"))
        XCTAssertEqual(zero.map(\.path), epoch.map(\.path))
        XCTAssertEqual(zero.map(\.data), epoch.map(\.data))
        XCTAssertEqual(zero.map(\.permissions), epoch.map(\.permissions))
        XCTAssertEqual(Set(epoch.map(\.modificationTime)), [1_700_000_000])
    }

    func testChangedContentChangesTheTarball() throws {
        let before = try BundlePacker().pack(fixture.root, to: output("a.tar.gz"))
        try fixture.flipByte(of: 17)
        let after = try BundlePacker().pack(fixture.root, to: output("b.tar.gz"))
        XCTAssertNotEqual(before.sha256, after.sha256)
    }

    func testPackLeavesNoTemporaryFileAndReplacesAnOldTarball() throws {
        try Data("old".utf8).write(to: output("a.tar.gz"))
        try BundlePacker().pack(fixture.root, to: output("a.tar.gz"))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: outputDirectory.path), ["a.tar.gz"])
        XCTAssertNotEqual(try Data(contentsOf: output("a.tar.gz")), Data("old".utf8))
    }

    func testMissingDirectoryAndMissingManifestAreBundleErrors() throws {
        let missing = fixture.root.appendingPathComponent("nope")
        XCTAssertThrowsError(try BundlePacker().pack(missing, to: output("a.tar.gz"))) {
            XCTAssertEqual($0 as? BundleError, .notFound(missing.path))
        }
        try FileManager.default.removeItem(at: fixture.layout.manifest)
        // No .archiver/ either: no bundle at all (with it, a run that has not ended yet).
        try FileManager.default.removeItem(at: fixture.layout.state)
        XCTAssertThrowsError(try BundlePacker().pack(fixture.root, to: output("a.tar.gz"))) {
            XCTAssertEqual($0 as? BundleError, .noManifest(self.fixture.root.path))
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: outputDirectory.path), [])
    }

    /// Pack walks the manifest's names and those of `images/` side by side in byte order: ids
    /// whose byte order is not their order (2, 10, 100), string ids (one named by its hash),
    /// files no item lists, a FIFO where a done image should be (never opened), and one gone.
    func testPackWalksNamesInByteOrderNamingStraysAndTheImagesItCannotPack() throws {
        let hashed = RecordID(String(repeating: "\u{e9}", count: 90))
        let ids: [RecordID] = [1, 2, 10, 9, 100, "\u{dc}n\u{ef}", hashed, "a", "007"]
        let bundle = try BundleFixture.make(ids: ids)
        defer { bundle.remove() }
        try FileManager.default.removeItem(at: bundle.image(10))
        XCTAssertEqual(mkfifo(bundle.image(10).path, 0o644), 0)
        try FileManager.default.removeItem(at: bundle.image(2))
        for stray in ["zz.png", "0.png", "11.png"] {
            try Data("x".utf8).write(to: bundle.layout.images.appendingPathComponent(stray))
        }
        let result = try BundlePacker().pack(bundle.root, to: output("s.tar.gz"))
        XCTAssertEqual(result.leftOut, .init(keeping: 3, count: 3, first: ["images/0.png", "images/11.png", "images/zz.png"]))
        XCTAssertEqual(result.notPacked, .init(keeping: 3, count: 2, first: ["images/10.png", "images/2.png"]))
        XCTAssertEqual(result.images, 7)
        let byBytes = { (a: String, b: String) in a.utf8.lexicographicallyPrecedes(b.utf8) }
        let packed = ids.filter { $0 != 2 && $0 != 10 }.map { "images/" + KeyedStore.fileName(for: $0, format: .png)! }
        XCTAssertTrue(packed[4].contains("~"), "the long id's file is named by its hash: \(packed[4])")
        let entries = try entries(of: output("s.tar.gz")).map(\.path)
        XCTAssertEqual(entries.filter { $0.hasPrefix("images/") }, ["images/"] + packed.sorted(by: byBytes))
        XCTAssertEqual(entries, entries.sorted(by: byBytes))
        XCTAssertEqual(result.entries, entries.count)
        var planned: [String] = []
        try BundlePacker().forEachEntry(of: bundle.root) { planned.append($0) }
        XCTAssertEqual(planned, entries, "the paths the plan walks are the tarball's")
    }

    /// Without `images/`, every done item's image is named as not packed, the first three by bytes.
    /// A bundle directory may hold any number of files no item lists: pack counts them and
    /// keeps the first three by bytes for its message, not a path string for each.
    func testPackCountsStrayFilesAndKeepsOnlyTheFirstFewNames() throws {
        let bundle = try BundleFixture.make(ids: [1, 2])
        defer { bundle.remove() }
        for n in 0..<1500 {
            try Data("x".utf8).write(to: bundle.layout.images.appendingPathComponent("stray-\(n).png"))
        }
        let result = try BundlePacker().pack(bundle.root, to: output("strays.tar.gz"))
        XCTAssertEqual(result.leftOut, .init(keeping: 3, count: 1500, first: ["images/stray-0.png", "images/stray-1.png", "images/stray-10.png"]))
        XCTAssertEqual(result.images, 2)
        XCTAssertFalse(try entries(of: output("strays.tar.gz")).contains { $0.path.contains("stray") })
    }

    /// A manifest may say a done item's file is outside `images/`: pack never packs such a path
    /// (nor follows it), counts each distinct one as not packed, and keeps them in a table, not
    /// a set of strings (a hostile manifest may list millions). The manifest itself is packed.
    func testDoneItemsListedOutsideImagesAreCountedOnceEachAsNotPacked() throws {
        let bundle = try BundleFixture.make(count: 6)
        defer { bundle.remove() }
        var text = try String(contentsOf: bundle.layout.manifest, encoding: .utf8)
        for (id, path) in [(1, "zz/b.png"), (2, "elsewhere/a.png"), (3, "elsewhere/a.png"), (4, "manifest.json")] {
            text = text.replacingOccurrences(of: "\"path\": \"images/\(id).png\"", with: "\"path\": \"\(path)\"")
        }
        try Data(text.utf8).write(to: bundle.layout.manifest)
        let result = try BundlePacker().pack(bundle.root, to: output("outside.tar.gz"))
        XCTAssertEqual(result.notPacked, .init(keeping: 3, count: 2, first: ["elsewhere/a.png", "zz/b.png"]))
        XCTAssertEqual(result.images, 2, "ids 5 and 6")
        XCTAssertEqual(result.leftOut.count, 4, "1.png to 4.png are no done item's file now")
        let paths = try entries(of: output("outside.tar.gz")).map(\.path)
        XCTAssertTrue(paths.contains("manifest.json"))
        XCTAssertFalse(paths.contains { $0.hasPrefix("elsewhere") || $0.hasPrefix("zz") })
    }

    func testPackWithoutAnImagesDirectoryNamesEveryDoneImageAsNotPacked() throws {
        try FileManager.default.removeItem(at: fixture.layout.images)
        let result = try BundlePacker().pack(fixture.root, to: output("a.tar.gz"))
        XCTAssertEqual(result.notPacked, .init(keeping: 3, count: 18, first: ["images/1.png", "images/10.png", "images/11.png"]))
        XCTAssertEqual(result.images, 0)
        XCTAssertFalse(try entries(of: output("a.tar.gz")).contains { $0.path.hasPrefix("images") })
    }
}
