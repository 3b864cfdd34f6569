import Foundation
import XCTest
@testable import ArchiverCore
@testable import ArchiverServer

final class BundleVerifierTests: XCTestCase {
    private var fixture: BundleFixture!
    private var tarball: URL!

    override func setUpWithError() throws {
        fixture = try BundleFixture.make(count: 20, failed: [5], pending: [6, 7])
        tarball = fixture.root.deletingLastPathComponent().appendingPathComponent(
            fixture.root.lastPathComponent + ".tar.gz")
    }

    override func tearDown() {
        fixture.remove()
        try? FileManager.default.removeItem(at: tarball)
    }

    func testSoundDirectoryVerifiesAndCountsFailedAndPendingItems() throws {
        let report = try BundleVerifier().verify(fixture.root)
        XCTAssertTrue(report.ok, "\(report.problems)")
        XCTAssertEqual(report.items, 20)
        XCTAssertEqual(report.done, 17)
        XCTAssertEqual(report.verified, 17)
        XCTAssertEqual(report.failed, 1)
        XCTAssertEqual(report.pending, 2)
        XCTAssertTrue(report.summary.hasPrefix("OK: 17 of 17 done items verified"), report.summary)
    }

    func testSoundTarballVerifies() throws {
        try BundlePacker().pack(fixture.root, to: tarball)
        let report = try BundleVerifier().verify(tarball)
        XCTAssertTrue(report.ok, "\(report.problems)")
        XCTAssertEqual(report.verified, 17)
        XCTAssertEqual(report.source, tarball.path)
    }

    func testFlippedByteAndDeletedFileAreBothNamedInDirectoryAndTarball() throws {
        try fixture.flipByte(of: 17)
        try FileManager.default.removeItem(at: fixture.image(18))
        try BundlePacker().pack(fixture.root, to: tarball)
        for source in [fixture.root, tarball!] {
            let report = try BundleVerifier().verify(source)
            XCTAssertFalse(report.ok)
            XCTAssertEqual(report.verified, 15)
            XCTAssertEqual(
                report.problems.map(\.message),
                ["17: sha256 mismatch (images/17.png)", "18: missing (images/18.png)"], source.path)
            XCTAssertEqual(report.problems.map(\.kind), [.sha256Mismatch, .missing])
            XCTAssertTrue(report.summary.hasPrefix("BAD: 15 of 17 done items verified"), report.summary)
        }
    }

    /// A manifest's string id may be megabytes, and a report names a thousand problems: the id
    /// a problem carries is clipped to 1 KiB (a short one is kept as it is).
    func testAProblemOfAHugeStringIDCarriesItClipped() throws {
        let bundle = try BundleFixture.make(ids: ["short", 3, "victim"])
        defer { bundle.remove() }
        for id: RecordID in ["short", 3] {
            try FileManager.default.removeItem(at: bundle.layout.images.appendingPathComponent(KeyedStore.fileName(for: id, format: .png)!))
        }
        // No run writes an id that long (it can name no file); a hostile manifest can.
        let manifest = try String(contentsOf: bundle.layout.manifest, encoding: .utf8)
        XCTAssertTrue(manifest.contains(#""id": "victim""#))
        let long = String(repeating: "\u{e9}", count: 5000)
        try Data(manifest.replacingOccurrences(of: #""id": "victim""#, with: #""id": ""# + long + #"""#).utf8).write(to: bundle.layout.manifest)
        let report = try BundleVerifier().verify(bundle.root)
        XCTAssertEqual(report.problems.count, 3)
        let ids = report.problems.compactMap(\.id)
        XCTAssertTrue(ids.contains("short"))
        XCTAssertTrue(ids.contains(3))
        let clipped = try XCTUnwrap(ids.first { $0 != "short" && $0 != 3 })
        XCTAssertLessThanOrEqual(clipped.text.utf8.count, 1024)
        XCTAssertTrue(clipped.text.hasPrefix("\u{e9}\u{e9}") && clipped.text.hasSuffix("…"), clipped.text.suffix(5).description)
    }

    func testTruncatedFileIsASizeMismatch() throws {
        let data = try Data(contentsOf: fixture.image(3))
        try data.prefix(data.count - 4).write(to: fixture.image(3))
        let report = try BundleVerifier().verify(fixture.root)
        XCTAssertEqual(report.problems.map(\.kind), [.sizeMismatch])
        XCTAssertEqual(report.problems.first?.id, 3)
    }

    func testFileMatchingAManifestThatIsNotAPNGIsInvalid() throws {
        var manifest = try fixture.manifest()
        let html = Data("<html>not an image</html>".utf8)
        try html.write(to: fixture.image(4))
        let index = try XCTUnwrap(manifest.items.firstIndex { $0.id == 4 })
        manifest.items[index].bytes = Int64(html.count)
        manifest.items[index].sha256 = SHA256.hex(html)
        try manifest.write(to: fixture.layout.manifest)
        let report = try BundleVerifier().verify(fixture.root)
        XCTAssertEqual(report.problems.map(\.kind), [.notImage])
        XCTAssertTrue(report.problems[0].message.hasPrefix("4: not an image"), report.problems[0].message)
    }

    func testUnlistedFilesAreUnexpectedButDotFilesAndBookkeepingAreNot() throws {
        try PNGEncoder.solid(width: 2, height: 2, red: 1, green: 2, blue: 3)
            .write(to: fixture.layout.images.appendingPathComponent("9999.png"))
        // A failed item's file left behind is not listed either.
        try Data("x".utf8).write(to: fixture.image(5))
        let report = try BundleVerifier().verify(fixture.root)
        XCTAssertEqual(
            report.problems.map(\.message), ["unexpected file images/5.png", "unexpected file images/9999.png"])
        XCTAssertEqual(report.unexpectedFiles, 2)
        XCTAssertEqual(report.badItems, 0)
        XCTAssertEqual(report.verified, 17)
    }

    func testATarballsUnlistedImagesAreUnexpectedAndItsListedOnesAreNot() throws {
        // `pack` leaves unlisted files out, so this tarball is written by hand.
        let writer = try TarballWriter(path: tarball.path, modificationTime: 0)
        try writer.addFile("manifest.json", data: Data(contentsOf: fixture.layout.manifest))
        let names = try FileManager.default.contentsOfDirectory(atPath: fixture.layout.images.path).filter { !$0.hasPrefix(".") }.sorted()
        for name in names {
            try writer.addFile("images/" + name, data: Data(contentsOf: fixture.layout.images.appendingPathComponent(name)))
        }
        try writer.addFile("images/9999.png", data: PNGEncoder.solid(width: 2, height: 2, red: 1, green: 2, blue: 3))
        try writer.close()
        let report = try BundleVerifier().verify(tarball)
        XCTAssertEqual(report.problems.map(\.message), ["unexpected file images/9999.png"])
        XCTAssertEqual(report.verified, report.done)
        XCTAssertGreaterThan(report.verified, 0)
    }

    func testDirectoryWithoutManifestAndUnreadableTarballAreBundleErrors() throws {
        try FileManager.default.removeItem(at: fixture.layout.manifest)
        // No .archiver/ either: no bundle at all (with it, a run that has not ended yet).
        try FileManager.default.removeItem(at: fixture.layout.state)
        XCTAssertThrowsError(try BundleVerifier().verify(fixture.root)) {
            XCTAssertEqual(($0 as? BundleError)?.kind, "no-manifest")
        }
        try Data("this is no tarball".utf8).write(to: tarball)
        XCTAssertThrowsError(try BundleVerifier().verify(tarball)) {
            XCTAssertEqual(($0 as? BundleError)?.kind, "unreadable-tarball")
        }
    }

    func testTruncatedTarballIsUnreadable() throws {
        try BundlePacker().pack(fixture.root, to: tarball)
        let data = try Data(contentsOf: tarball)
        try data.prefix(data.count / 2).write(to: tarball)
        XCTAssertThrowsError(try BundleVerifier().verify(tarball)) {
            XCTAssertEqual(($0 as? BundleError)?.kind, "unreadable-tarball", "\($0)")
        }
    }

    func testBrokenManifestNamesWhereItIsBroken() throws {
        try Data("{\"version\": 1}".utf8).write(to: fixture.layout.manifest)
        XCTAssertThrowsError(try BundleVerifier().verify(fixture.root)) {
            let description = "\($0)"
            XCTAssertTrue(description.contains("not a valid manifest.json"), description)
            XCTAssertFalse(description.contains("\n"), description)
        }
    }

    func testJSONReportRoundTripsAndCarriesOK() throws {
        try FileManager.default.removeItem(at: fixture.image(18))
        let report = try BundleVerifier().verify(fixture.root)
        let data = try JSONEncoder().encode(report)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
        XCTAssertEqual(object["ok"] as? Bool, false)
        XCTAssertEqual(try JSONDecoder().decode(VerificationReport.self, from: data), report)
    }

    /// Verify of a directory, of its pack and of a tarball in id order (not byte order) matches
    /// names the same way: ids whose byte order is not their order, string ids (one named by its
    /// hash), a FIFO and a missing file among the done images, and files no item lists.
    func testVerifyMatchesNamesInAnyOrderWithStringIDsStraysAFIFOAndAMissingImage() throws {
        let ids: [RecordID] = [1, 2, 10, 9, 100, "\u{dc}n\u{ef}", RecordID(String(repeating: "\u{e9}", count: 90)), "a", "007"]
        let bundle = try BundleFixture.make(ids: ids, failed: [9])
        defer { bundle.remove() }
        let sound = try BundleVerifier().verify(bundle.root)
        XCTAssertEqual(sound.problems, [])
        XCTAssertEqual(sound.verified, 8)

        // By hand, in the manifest's order, with files no item lists among them.
        let writer = try TarballWriter(path: tarball.path, modificationTime: 0)
        try writer.addFile("images/11.png", data: Data("x".utf8))
        for id in ids where id != 9 && id != 10 {
            let name = KeyedStore.fileName(for: id, format: .png)!
            try writer.addFile("images/" + name, data: Data(contentsOf: bundle.layout.images.appendingPathComponent(name)))
        }
        try writer.addFile("images/0.png", data: Data("x".utf8))
        try writer.addFile("manifest.json", data: Data(contentsOf: bundle.layout.manifest))
        try writer.close()
        let unordered = try BundleVerifier().verify(tarball)
        XCTAssertEqual(unordered.problems.map(\.message), [
            "10: missing (images/10.png)", "unexpected file images/0.png", "unexpected file images/11.png",
        ])
        XCTAssertEqual(unordered.verified, 7)

        try FileManager.default.removeItem(at: bundle.image(10))
        XCTAssertEqual(mkfifo(bundle.image(10).path, 0o644), 0)
        try FileManager.default.removeItem(at: bundle.image(2))
        for stray in ["zz.png", "0.png", "11.png"] {
            try Data("x".utf8).write(to: bundle.layout.images.appendingPathComponent(stray))
        }
        let directory = try BundleVerifier().verify(bundle.root)
        XCTAssertEqual(Set(directory.problems.filter { $0.kind != .unexpected }.map(\.message)), [
            "2: missing (images/2.png)", "10: not a regular file (images/10.png)",
        ])
        XCTAssertEqual(directory.problems.filter { $0.kind == .unexpected }.map(\.path), ["images/0.png", "images/11.png", "images/zz.png"])
        XCTAssertEqual(directory.verified, 6)

        try BundlePacker().pack(bundle.root, to: tarball)
        let packed = try BundleVerifier().verify(tarball)
        XCTAssertEqual(Set(packed.problems.map(\.message)), ["2: missing (images/2.png)", "10: missing (images/10.png)"])
        XCTAssertEqual(packed.verified, 6)
    }
}

