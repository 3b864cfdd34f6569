import Foundation
import XCTest
@testable import ArchiverCore
@testable import ArchiverServer

/// Issue #16, item 8: the small things a user meets at the command line, each one line and the
/// documented exit status.
final class CommandMessageTests: XCTestCase {
    func testOutNamingAFileExitsTwoSayingItIsNotADirectory() throws {
        let dir = Fixtures.temporaryDirectory(self)
        let catalog = try Fixtures.writeCatalog(Fixtures.records(1), to: dir.appendingPathComponent("c.json"))
        let file = dir.appendingPathComponent("a-file")
        try Data("keep me".utf8).write(to: file)
        for out in [file.path, file.appendingPathComponent("below").path] {
            let result = try CommandRunner.run(["run", "--catalog", catalog, "--out", out])
            assertOneLineError(result, mentions: [file.path, "is a file, not a directory", "--out"])
        }
        XCTAssertEqual(try Data(contentsOf: file), Data("keep me".utf8))
    }

    func testOutInAnUnwritablePlaceNamesTheSystemsReason() throws {
        let dir = Fixtures.temporaryDirectory(self)
        let catalog = try Fixtures.writeCatalog(Fixtures.records(1), to: dir.appendingPathComponent("c.json"))
        let result = try CommandRunner.run(["run", "--catalog", catalog, "--out", "/proc/archiver-test/out"])
        assertOneLineError(result, mentions: ["cannot create /proc/archiver-test"])
    }

    func testEmptyOutAndEmptyDirectoriesAreUsageErrors() throws {
        let dir = Fixtures.temporaryDirectory(self)
        let catalog = try Fixtures.writeCatalog(Fixtures.records(1), to: dir.appendingPathComponent("c.json"))
        // Run from a directory of its own: the old binary archived into the current directory.
        let cwd = dir.appendingPathComponent("cwd")
        try FileManager.default.createDirectory(at: cwd, withIntermediateDirectories: true)
        func run(_ arguments: [String]) throws -> CommandResult { try CommandRunner.run(arguments, currentDirectory: cwd) }
        assertOneLineError(try run(["run", "--catalog", catalog, "--out", "", "--retries", "0"]), mentions: ["--out needs a DIR"])
        assertOneLineError(try run(["run", "--catalog", catalog, "--out=", "--retries", "0"]), mentions: ["--out needs a DIR"])
        assertOneLineError(try run(["merge", "--out", "", dir.path]), mentions: ["--out needs a DIR"])
        for command in ["status", "pack", "verify"] {
            assertOneLineError(try run([command, ""]), mentions: ["empty argument"])
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: cwd.path), [], "nothing written into the current directory")
    }

    func testQuietPrintsNothingOnAResumeThatSucceeds() throws {
        let server = try Fixtures.placeholderServer()
        let dir = Fixtures.temporaryDirectory(self)
        let catalog = try Fixtures.writeCatalog(Fixtures.records(3), to: dir.appendingPathComponent("c.json"))
        let arguments = ["run", "--catalog", catalog, "--out", dir.appendingPathComponent("out").path,
                         "--mirror", "\(Fixtures.host)=\(server.baseURL)", "--quiet"]
        let first = try CommandRunner.run(arguments)
        XCTAssertEqual(first.status, 0, first.stderr)
        XCTAssertEqual(first.stderr, "")
        let again = try CommandRunner.run(arguments)
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertEqual(again.stderr, "", "--quiet: no 'resuming' line")
    }

    /// A journal keeps lines of records that left the catalog until a run completes; `status`
    /// counts only the records of the bundle's manifest.
    func testStatusCountsOnlyTheBundlesRecords() throws {
        let server = try Fixtures.placeholderServer()
        let out = Fixtures.temporaryDirectory(self)
        let catalog = try Fixtures.catalog(Fixtures.records(4))
        _ = try Fixtures.run(Fixtures.configuration(out: out, server: server), catalog: catalog)
        let layout = BundleLayout(root: out)
        var journal = try String(contentsOf: layout.journal, encoding: .utf8)
        let line = try XCTUnwrap(journal.split(separator: "\n").first { $0.hasPrefix("done\t1\t") })
        for id in [900, 901] {
            journal += "done\t\(id)\t" + line.dropFirst("done\t1\t".count) + "\n"
        }
        try Data(journal.utf8).write(to: layout.journal)

        let status = try XCTUnwrap(BundleStatus.read(directory: out))
        XCTAssertEqual([status.records, status.done, status.failed, status.pending], [4, 4, 0, 0])
        let text = try CommandRunner.run(["status", out.path])
        XCTAssertTrue(text.stdout.contains("4 done, 0 failed, 0 pending of 4"), text.stdout)
    }

    /// `pack` used to pack every file of `images/`, and `verify` of its own tarball then
    /// reported the ones the manifest does not list.
    func testPackLeavesOutStraysSoItsTarballVerifies() throws {
        let fixture = try BundleFixture.make(count: 6, failed: [5])
        defer { fixture.remove() }
        let tarball = fixture.root.path + ".tar.gz"
        defer { try? FileManager.default.removeItem(atPath: tarball) }
        try Data("x".utf8).write(to: fixture.layout.images.appendingPathComponent("9999.png"))
        try Data("y".utf8).write(to: fixture.layout.images.appendingPathComponent("5.png"))

        let pack = try ArchiverRun.run(["pack", fixture.root.path, "--output", tarball])
        XCTAssertEqual(pack.status, 0, pack.stderr)
        XCTAssertTrue(pack.stdout.contains("(5 images)"), pack.stdout)
        XCTAssertEqual(pack.stderr.split(separator: "\n").count, 1, pack.stderr)
        XCTAssertTrue(pack.stderr.contains("left out 2 files"), pack.stderr)
        XCTAssertTrue(pack.stderr.contains("images/5.png, images/9999.png"), pack.stderr)
        let verify = try ArchiverRun.run(["verify", tarball])
        XCTAssertEqual(verify.status, 0, verify.stdout)
        XCTAssertEqual(try ArchiverRun.run(["verify", fixture.root.path]).status, 1, "the directory itself still has strays")
    }

    /// A done item's image that is a FIFO (never opened, so nothing hangs) or is gone is not in
    /// the tarball, and pack says so on stderr (it was left out silently); verify of the
    /// tarball names it.
    func testPackNamesADoneImageThatIsAFIFOOrMissing() throws {
        let fixture = try BundleFixture.make(count: 4)
        defer { fixture.remove() }
        let tarball = fixture.root.path + ".tar.gz"
        defer { try? FileManager.default.removeItem(atPath: tarball) }
        let third = fixture.layout.images.appendingPathComponent("3.png").path
        try FileManager.default.removeItem(atPath: third)
        XCTAssertEqual(mkfifo(third, 0o644), 0)
        try FileManager.default.removeItem(at: fixture.image(4))
        let pack = try ArchiverRun.run(["pack", fixture.root.path, "--output", tarball])
        XCTAssertEqual(pack.status, 0, pack.stderr)
        XCTAssertTrue(pack.stdout.contains("(2 images)"), pack.stdout)
        XCTAssertEqual(
            pack.stderr,
            "archiver: 2 done items' images are missing or not a regular file, so not in the tarball "
                + "(images/3.png, images/4.png); 'archiver verify' of it will name them\n")
        let verify = try ArchiverRun.run(["verify", tarball])
        XCTAssertEqual(verify.status, 1, verify.stdout)
        XCTAssertTrue(verify.stdout.contains("3: missing (images/3.png)"), verify.stdout)
        XCTAssertTrue(verify.stdout.contains("4: missing (images/4.png)"), verify.stdout)
    }
}
