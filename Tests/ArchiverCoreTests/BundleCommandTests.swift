import Foundation
import XCTest
@testable import ArchiverCore

/// Runs the built `archiver pack` and `archiver verify` and checks exit codes and output.
final class BundleCommandTests: XCTestCase {
    private var fixture: BundleFixture!
    private var tarball: String { fixture.root.path + ".tar.gz" }

    override func setUpWithError() throws {
        fixture = try BundleFixture.make(count: 20, failed: [5])
    }

    override func tearDown() {
        fixture.remove()
        try? FileManager.default.removeItem(atPath: tarball)
    }

    func testPackPrintsSHA256AndCountsAndVerifyPassesOnBoth() throws {
        let pack = try ArchiverRun.run(["pack", fixture.root.path, "--output", tarball])
        XCTAssertEqual(pack.status, 0, pack.stderr)
        let sha = SHA256.hex(try Data(contentsOf: URL(fileURLWithPath: tarball)))
        XCTAssertEqual(pack.stdout, "\(sha)  \(tarball)\npacked 21 entries (19 images), \(try Data(contentsOf: URL(fileURLWithPath: tarball)).count) bytes\n")
        for source in [fixture.root.path, tarball] {
            let verify = try ArchiverRun.run(["verify", source])
            XCTAssertEqual(verify.status, 0, verify.stdout + verify.stderr)
            XCTAssertEqual(verify.stdout, "OK: 19 of 19 done items verified in \(source) (1 failed, 0 pending in the manifest)\n")
        }
    }

    func testSourceDateEpochSetsTheEntryTimes() throws {
        let run = try ArchiverRun.run(["pack", fixture.root.path, "--output", tarball], environment: ["SOURCE_DATE_EPOCH": "86400"])
        XCTAssertEqual(run.status, 0, run.stderr)
        let reader = try TarballReader(path: tarball)
        XCTAssertEqual(try reader.next()?.modificationTime, 86400)
        let bad = try ArchiverRun.run(["pack", fixture.root.path, "--output", tarball], environment: ["SOURCE_DATE_EPOCH": "yesterday"])
        XCTAssertEqual(bad.status, 2)
    }

    func testVerifyNamesEveryBadItemAndExitsOne() throws {
        try fixture.flipByte(of: 17)
        try FileManager.default.removeItem(at: fixture.image(18))
        try Data("x".utf8).write(to: fixture.layout.images.appendingPathComponent("9999.png"))
        XCTAssertEqual(try ArchiverRun.run(["pack", fixture.root.path, "--output", tarball]).status, 0)
        for source in [fixture.root.path, tarball] {
            let run = try ArchiverRun.run(["verify", source])
            XCTAssertEqual(run.status, 1)
            // pack leaves out the file the manifest does not list
            let unexpected = source == tarball ? [] : ["unexpected file images/9999.png"]
            XCTAssertEqual(
                run.stdout.split(separator: "\n").map(String.init),
                ["17: sha256 mismatch (images/17.png)", "18: missing (images/18.png)"] + unexpected + [
                    "BAD: 17 of 19 done items verified in \(source); 2 bad"
                        + (unexpected.isEmpty ? ", 0 unexpected files" : ", 1 unexpected file") + " (1 failed, 0 pending in the manifest)",
                ])
            XCTAssertEqual(run.stderr, "")
        }
    }

    func testVerifyJSONIsAMachineReadableReport() throws {
        try FileManager.default.removeItem(at: fixture.image(18))
        let run = try ArchiverRun.run(["verify", fixture.root.path, "--json"])
        XCTAssertEqual(run.status, 1)
        let report = try JSONDecoder().decode(VerificationReport.self, from: Data(run.stdout.utf8))
        XCTAssertEqual(report.problems.map(\.message), ["18: missing (images/18.png)"])
        XCTAssertEqual(report.failed, 1)
    }

    /// `--output` in a directory that does not exist: the message names the file asked for and
    /// the system's reason, not the hidden temporary file pack writes first, nor libarchive's words.
    func testPackIntoAMissingDirectorySaysWhichFileAndWhy() throws {
        let output = fixture.root.appendingPathComponent("no-such-dir/out.tar.gz").path
        let run = try ArchiverRun.run(["pack", fixture.root.path, "--output", output])
        XCTAssertEqual(run.stdout, "")
        XCTAssertEqual(run.status, 2, run.stderr)
        XCTAssertEqual(run.stderr, "archiver: cannot write \(output): No such file or directory\n")
    }

    /// A bundle whose first run was killed (or is still going) has `.archiver/` but no manifest
    /// yet: pack and verify say to finish the run, not that it may be no bundle of `archiver run`'s.
    func testPackAndVerifyOfABundleWithoutItsFirstManifestSayToRunAgain() throws {
        try FileManager.default.removeItem(at: fixture.layout.manifest)
        for arguments in [["pack", fixture.root.path, "--output", tarball], ["verify", fixture.root.path]] {
            let run = try ArchiverRun.run(arguments)
            XCTAssertEqual(run.status, 2, run.stderr)
            XCTAssertEqual(
                run.stderr,
                "archiver: \(fixture.root.path) has no manifest.json yet: its first run is still going or was stopped before "
                    + "writing one; run the same 'archiver run' command again to finish it\n")
        }
    }

    func testUnusableInputExitsTwoWithOneLine() throws {
        let missing = fixture.root.appendingPathComponent("nope").path
        try FileManager.default.removeItem(at: fixture.layout.manifest)
        try Data("junk".utf8).write(to: URL(fileURLWithPath: tarball))
        let runs = [
            try ArchiverRun.run(["pack", missing, "--output", tarball + ".out"]),
            try ArchiverRun.run(["pack", fixture.root.path, "--output", tarball + ".out"]),
            try ArchiverRun.run(["verify", missing]),
            try ArchiverRun.run(["verify", fixture.root.path]),
            try ArchiverRun.run(["verify", tarball]),
            try ArchiverRun.run(["verify"]),
        ]
        for run in runs {
            XCTAssertEqual(run.status, 2, run.stderr)
            XCTAssertEqual(run.stdout, "")
            XCTAssertEqual(run.stderr.filter { $0 == "\n" }.count, 1, run.stderr)
            XCTAssertTrue(run.stderr.hasPrefix("archiver: "), run.stderr)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: tarball + ".out"))
    }
}
