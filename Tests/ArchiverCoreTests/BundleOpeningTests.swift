#if canImport(Glibc)
import Glibc
#endif
import Foundation
import XCTest
@testable import ArchiverCore

/// The first phase on its own: what opening `--out` refuses, and what it leaves ready.
final class BundleOpeningTests: XCTestCase {
    private var dir: URL!
    private var out: URL!
    private var layout: BundleLayout { BundleLayout(root: out) }

    override func setUpWithError() throws {
        dir = Fixtures.temporaryDirectory(self)
        out = dir.appendingPathComponent("out")
    }

    private func opening(field: ImageField = .url) -> BundleOpening {
        var config = RunConfiguration()
        config.outputDirectory = out
        config.field = field
        return BundleOpening(configuration: config, fileSystem: POSIXFileSystem(), log: { _ in })
    }

    /// The error opening throws, or a failure if it opened.
    private func refusal(_ opening: BundleOpening, _ catalog: Catalog, file: StaticString = #filePath, line: UInt = #line) -> RunError? {
        do {
            _ = try opening.open(for: catalog)
            XCTFail("opened", file: file, line: line)
            return nil
        } catch {
            return error
        }
    }

    func testAFreshDirectoryIsMadeLockedAndLeftWithAnEmptyJournalIndex() throws {
        do {
            let bundle = try opening().open(for: try Fixtures.catalog(Fixtures.records(3)))
            XCTAssertEqual(bundle.adopted, 0)
            XCTAssertTrue(bundle.previous.isEmpty)
            XCTAssertEqual(BundleLayout.fileKind(atPath: layout.images.path), .directory, "the image store is made")
            XCTAssertEqual(BundleLock.isHeld(path: layout.lock.path).held, true)
            XCTAssertEqual(RunOptions.read(layout)?.records, 3, "the options are recorded")
        }
        XCTAssertEqual(BundleLock.isHeld(path: layout.lock.path).held, false, "the lock goes with the opened bundle")
    }

    func testABundleWhoseLockIsHeldIsRefusedNamingTheHolder() throws {
        let catalog = try Fixtures.catalog(Fixtures.records(2))
        do {
            let held = try opening().open(for: catalog)
            let error = refusal(opening(), catalog)
            XCTAssertEqual(error, .locked(directory: out.path, pid: Int(getpid())))
            withExtendedLifetime(held) {}
        }
        XCTAssertNoThrow(try opening().open(for: catalog), "opens once the holder is gone")
    }

    func testADirectoryOfSomeonesOwnFilesIsRefusedAndLeftUntouched() throws {
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        try Data("mine\n".utf8).write(to: out.appendingPathComponent("notes.txt"))
        let error = refusal(opening(), try Fixtures.catalog(Fixtures.records(2)))
        XCTAssertEqual(error?.kind, "not-a-bundle")
        XCTAssertEqual(Fixtures.fileNames(in: out), ["notes.txt"], "nothing is made in it")
    }

    /// `--out` may be a link its user made: the directory it leads to is the one checked, as the
    /// run would write there.
    func testADirectoryOfSomeonesOwnFilesBehindALinkIsRefusedAndLeftUntouched() throws {
        let mine = dir.appendingPathComponent("mine")
        try FileManager.default.createDirectory(at: mine, withIntermediateDirectories: true)
        try Data("mine\n".utf8).write(to: mine.appendingPathComponent("notes.txt"))
        XCTAssertEqual(symlink(mine.path, out.path), 0)
        let error = refusal(opening(), try Fixtures.catalog(Fixtures.records(2)))
        XCTAssertEqual(error, .foreignDirectory(path: out.path, reason: "it holds files of its own (notes.txt)"))
        XCTAssertEqual(Fixtures.fileNames(in: mine), ["notes.txt"], "nothing is made in it")
    }

    /// The refusal names the first three names that are not the bundle's, by `<`, and `...` only
    /// when there are more; one of the bundle's names alone needs a manifest.
    func testARefusedDirectoryIsNamedByItsFirstThreeOwnNamesSorted() throws {
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        func add(_ name: String) { XCTAssertTrue(FileManager.default.createFile(atPath: out.appendingPathComponent(name).path, contents: nil)) }
        func reason() -> String? {
            guard case .foreignDirectory(path: out.path, let reason) = refusal(opening(), try! Fixtures.catalog(Fixtures.records(2))) else { return nil }
            return reason
        }
        add("index.html")
        XCTAssertEqual(reason(), "it has no manifest.json")
        for name in ["zeta", "Beta", "alpha"] { add(name) }
        XCTAssertEqual(reason(), "it holds files of its own (Beta, alpha, zeta)")
        add("manifest.json")
        add(".aardvark")
        XCTAssertEqual(reason(), "it holds files of its own (.aardvark, Beta, alpha, ...)")
        XCTAssertEqual(Fixtures.fileNames(in: out), [".aardvark", "Beta", "alpha", "index.html", "manifest.json", "zeta"], "nothing is made in it")
    }

    /// `--out` may itself be a link its user made: a killed run's debris is removed there too
    /// (the walks of `images/` and `pages/` never go through one).
    func testDebrisIsRemovedInAnOutThatIsALinkToABundle() throws {
        let real = dir.appendingPathComponent("real")
        try FileManager.default.createDirectory(at: BundleLayout(root: real).state, withIntermediateDirectories: true)
        let debris = real.appendingPathComponent(".manifest.json.tmp-123-4")
        try Data("half".utf8).write(to: debris)
        XCTAssertEqual(symlink(real.path, out.path), 0)
        _ = try opening().open(for: try Fixtures.catalog(Fixtures.records(2)))
        XCTAssertFalse(FileManager.default.fileExists(atPath: debris.path))
    }

    func testALinkedImagesDirectoryIsRefusedBeforeAnythingIsMade() throws {
        let outside = dir.appendingPathComponent("outside")
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        XCTAssertEqual(symlink(outside.path, layout.images.path), 0)
        let error = refusal(opening(), try Fixtures.catalog(Fixtures.records(2)))
        XCTAssertEqual(error, .unsafeBundle(path: layout.images.path, found: "a symbolic link", expected: "a directory"))
        XCTAssertEqual(Fixtures.fileNames(in: out), ["images"], "no .archiver/ is made")
        XCTAssertEqual(Fixtures.fileNames(in: outside), [])
    }

    func testARestoredBundleIsAdoptedItsDebrisRemovedAndAnotherFieldRefused() throws {
        let fixture = try BundleFixture.make(count: 6, failed: [2], pending: [3])
        defer { fixture.remove() }
        out = fixture.root
        try FileManager.default.removeItem(at: layout.journal)
        try FileManager.default.removeItem(at: layout.options)
        let debris = layout.root.appendingPathComponent(".manifest.json.tmp-123-4")
        try Data("half".utf8).write(to: debris)
        let catalog = try Catalog(
            source: "fixture.json",
            data: JSONEncoder().encode(try fixture.manifest().items.map { CatalogRecord(albumId: 1, id: $0.id, title: "", url: $0.url, thumbnailUrl: "") }))

        do {
            let bundle = try opening().open(for: catalog)
            XCTAssertEqual(bundle.adopted, 4, "the done items whose files are whole")
            XCTAssertEqual(bundle.previous.ids, Fixtures.ids(1...6).filter { $0 != 3 }, "done and failed journaled, pending not")
            XCTAssertEqual(bundle.previous.record(for: 2)?.status, .failed)
            XCTAssertFalse(FileManager.default.fileExists(atPath: debris.path), "a killed run's temporary file is removed")
        }

        let error = refusal(opening(field: .thumbnailUrl), catalog)
        XCTAssertEqual(error?.kind, "options-changed")
    }
}
