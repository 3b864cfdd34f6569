#if canImport(Glibc)
import Glibc
#endif
import Foundation
import XCTest
@testable import ArchiverCore

/// Issue #16: symbolic links planted in a bundle must never make a command write, truncate or
/// prune outside it. Every test checks that the link's target outside the bundle is untouched.
final class BundleLinkTests: XCTestCase {
    private var dir: URL!
    private var outside: URL!
    private var out: URL!
    private var layout: BundleLayout { BundleLayout(root: out) }
    private let precious = Data("precious\n".utf8)

    override func setUpWithError() throws {
        dir = Fixtures.temporaryDirectory(self)
        outside = dir.appendingPathComponent("outside")
        out = dir.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
        try precious.write(to: outside.appendingPathComponent("precious.txt"))
        try precious.write(to: outside.appendingPathComponent("99.png"))
    }

    /// The paths under `outside` and the bytes of its files (none for a directory).
    private func outsideContents() throws -> [String: Data] {
        var contents: [String: Data] = [:]
        for case let path as String in FileManager.default.enumerator(atPath: outside.path)! {
            let url = outside.appendingPathComponent(path)
            contents[path] = BundleLayout.fileKind(atPath: url.path) == .directory ? Data() : try Data(contentsOf: url)
        }
        return contents
    }

    private func link(_ url: URL, to target: URL) throws {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        XCTAssertEqual(symlink(target.path, url.path), 0, "symlink \(url.path)")
    }

    /// Runs the built `archiver run` on a two-record catalog served from loopback.
    private func run(_ extra: [String] = []) throws -> CommandResult {
        let server = try Fixtures.placeholderServer()
        let catalog = try Fixtures.writeCatalog(Fixtures.records(2), to: dir.appendingPathComponent("c.json"))
        return try CommandRunner.run(
            ["run", "--catalog", catalog, "--out", out.path, "--quiet", "--mirror", "\(Fixtures.host)=\(server.baseURL)"] + extra)
    }

    /// Exit 2 with one line on stderr naming `path` as a symbolic link.
    private func assertRefused(_ result: CommandResult, naming path: URL, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(result.status, 2, result.stderr, file: file, line: line)
        XCTAssertEqual(result.stderr.filter { $0 == "\n" }.count, 1, result.stderr, file: file, line: line)
        XCTAssertTrue(result.stderr.contains("\(path.path) is a symbolic link"), result.stderr, file: file, line: line)
    }

    func testALinkAtTheLockIsRefusedAndItsTargetKept() throws {
        try link(layout.lock, to: outside.appendingPathComponent("precious.txt"))
        let before = try outsideContents()
        assertRefused(try run(), naming: layout.lock)
        XCTAssertEqual(try outsideContents(), before)
    }

    func testALinkAtTheJournalIsRefusedAndItsTargetKept() throws {
        try link(layout.journal, to: outside.appendingPathComponent("precious.txt"))
        let before = try outsideContents()
        assertRefused(try run(), naming: layout.journal)
        XCTAssertEqual(try outsideContents(), before)
    }

    func testALinkedImagesDirectoryIsRefusedAndNothingWrittenThrough() throws {
        try link(layout.images, to: outside)
        let before = try outsideContents()
        assertRefused(try run(), naming: layout.images)
        XCTAssertEqual(try outsideContents(), before)
    }

    func testPruneNeverDeletesThroughALinkedImagesDirectory() throws {
        try link(layout.images, to: outside)
        let before = try outsideContents()
        assertRefused(try run(["--prune"]), naming: layout.images)
        XCTAssertEqual(try outsideContents(), before, "99.png is not in the catalog, but it is not the bundle's either")
    }

    func testALinkedPagesDirectoryIsRefusedAndNothingWrittenThrough() throws {
        try link(layout.pages, to: outside)
        let before = try outsideContents()
        assertRefused(try run(), naming: layout.pages)
        XCTAssertEqual(try outsideContents(), before)
    }

    func testPackRefusesALinkedPagesDirectory() throws {
        XCTAssertEqual(try run().status, 0)
        let moved = outside.appendingPathComponent("pages")
        try FileManager.default.moveItem(at: layout.pages, to: moved)
        try link(layout.pages, to: moved)
        let tarball = dir.appendingPathComponent("b.tar.gz")
        assertRefused(try CommandRunner.run(["pack", out.path, "--output", tarball.path]), naming: layout.pages)
        XCTAssertFalse(FileManager.default.fileExists(atPath: tarball.path))
    }

    /// A finished bundle whose `images/` was then swapped for a link to a copy elsewhere.
    private func bundleWithLinkedImages() throws {
        XCTAssertEqual(try run().status, 0)
        let moved = outside.appendingPathComponent("images")
        try FileManager.default.moveItem(at: layout.images, to: moved)
        try link(layout.images, to: moved)
    }

    func testVerifyRefusesALinkedImagesDirectory() throws {
        try bundleWithLinkedImages()
        let before = try outsideContents()
        let verify = try CommandRunner.run(["verify", out.path])
        XCTAssertEqual(verify.stdout, "")
        assertRefused(verify, naming: layout.images)
        XCTAssertEqual(try outsideContents(), before)
    }

    func testPackRefusesALinkedImagesDirectoryAndWritesNoTarball() throws {
        try bundleWithLinkedImages()
        let tarball = dir.appendingPathComponent("b.tar.gz")
        assertRefused(try CommandRunner.run(["pack", out.path, "--output", tarball.path]), naming: layout.images)
        XCTAssertFalse(FileManager.default.fileExists(atPath: tarball.path))
    }

    /// The temporary names of the manifest, the page and the files under `.archiver/` used to be
    /// `.NAME.tmp-PID`, opened with O_TRUNC: a link planted there for the run's pid had its target
    /// overwritten, and was then renamed into place as `manifest.json`.
    func testLinksAtTheOldTemporaryNamesAreNeverWrittenThrough() throws {
        let server = try Fixtures.placeholderServer()
        let names = ["manifest.json", "index.html", ".archiver/journal", ".archiver/options.json", ".archiver/written.json"]
        for (index, name) in names.enumerated() {
            let url = out.appendingPathComponent(name)
            let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).tmp-\(getpid())")
            try precious.write(to: outside.appendingPathComponent("target-\(index)"))
            try link(temporary, to: outside.appendingPathComponent("target-\(index)"))
        }
        let before = try outsideContents()
        let config = Fixtures.configuration(out: out, server: server)
        for count in [2, 3] {  // the second run rewrites every file and compacts the journal
            XCTAssertEqual(try Fixtures.run(config, catalog: Fixtures.catalog(Fixtures.records(count))).done, count)
        }
        XCTAssertEqual(try outsideContents(), before)
        for file in [layout.manifest, layout.gallery, layout.journal] {
            XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: file.path)[.type] as? FileAttributeType, .typeRegular, file.path)
        }
        XCTAssertEqual(try Fixtures.manifest(in: out).items.count, 3)
    }

    func testTheLockAndJournalOpenNoLinkEvenPastTheCheck() throws {
        let target = outside.appendingPathComponent("precious.txt")
        try link(layout.lock, to: target)
        try link(layout.journal, to: target)
        XCTAssertThrowsError(try BundleLock(path: layout.lock.path)) { error in
            XCTAssertTrue("\(error)".contains("symbolic link"), "\(error)")
        }
        XCTAssertThrowsError(try Journal(path: layout.journal.path)) { error in
            XCTAssertTrue("\(error)".contains("symbolic link"), "\(error)")
        }
        XCTAssertEqual(try Data(contentsOf: target), precious)
    }
}
