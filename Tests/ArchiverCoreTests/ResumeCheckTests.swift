import Foundation
import XCTest
@testable import ArchiverCore

/// State that heals (issue #16, finding 7): a resumed run trusts a journaled file only while it
/// is the file the journal recorded, and the journal reads back every id and byte it wrote.
final class ResumeCheckTests: XCTestCase {
    private static let digest = String(repeating: "0a", count: 32)

    private func done(_ id: Int, url: String = "u", sha256: String = digest, width: Int = 1) -> ItemRecord {
        ItemRecord(id: RecordID(id), url: url, source: "s", status: .done, bytes: 5, sha256: SHA256Digest(hex: sha256), width: width, height: 1, attempts: 1)
    }

    func testIDsOfNineteenDigitsAndBothEndsOfIntRoundTripThroughTheJournal() throws {
        let ids = [1_000_000_000_000_000_000, -100_000_000_000_000_000, Int.max, Int.min, 0]
        let path = Fixtures.temporaryDirectory(self).appendingPathComponent("journal").path
        try Journal(path: path).append(ids.map { done($0) })
        let index = JournalIndex(path: path)
        XCTAssertEqual(index.ids, ids.sorted().map { RecordID($0) })
        XCTAssertEqual(index.count(of: .done), ids.count)
        for id in ids { XCTAssertEqual(index.record(for: RecordID(id))?.id, RecordID(id)) }
        let overflowing = "done\t9223372036854775808\tu\ts\t5\t\(Self.digest)\t1\t1\t1"
        XCTAssertNil(JournalLine.decode(overflowing), "an id past Int.max is damage, not a wrapped id")
    }

    func testATabBeforeACombiningMarkIsEscapedAsBytesAndRoundTrips() {
        let record = done(1, url: "https://h/a\t\u{301}b\r\n\u{301}\\\u{301}")
        let line = JournalLine.encode(record)
        XCTAssertEqual(line.utf8.filter { $0 == 0x0A }.count, 1)
        XCTAssertEqual(line.utf8.filter { $0 == 0x09 }.count, 8, "only the separators are tabs")
        XCTAssertEqual(JournalLine.decode(line.dropLast()), record)
    }

    func testLinesWhoseDigestDimensionsOrSizeCannotBeTheArchiversAreNotTrusted() {
        let good = "done\t1\tu\ts\t5\t\(Self.digest)\t600\t600\t1"
        XCTAssertNotNil(JournalLine.decode(good))
        for bad in [
            "done\t1\tu\ts\t5\tnot-a-digest\t600\t600\t1",
            "done\t1\tu\ts\t5\t\(Self.digest.uppercased())\t600\t600\t1",
            "done\t1\tu\ts\t5\t\(Self.digest)0\t600\t600\t1",
            "done\t1\tu\ts\t5\t\(Self.digest)\t0\t600\t1",
            "done\t1\tu\ts\t5\t\(Self.digest)\t600\t-3\t1",
            "done\t1\tu\ts\t5\t\(Self.digest)\t600\t99999999999\t1",
            "done\t1\tu\ts\t-5\t\(Self.digest)\t600\t600\t1",
            "done\t1\tu\ts\t5\t\(Self.digest)\t600\t600\t1\t12",
        ] {
            XCTAssertNil(JournalLine.decode(bad), bad)
        }
    }

    func testALineOfAnOlderVersionWithoutInodeAndMtimeStillReads() throws {
        let old = try XCTUnwrap(JournalLine.decode("done\t1\tu\ts\t5\t\(Self.digest)\t600\t600\t1"))
        XCTAssertNil(old.file)
        var stamped = old
        stamped.file = FileStamp(inode: UInt64.max, modified: -1_500_000_000)
        XCTAssertEqual(JournalLine.decode(JournalLine.encode(stamped).dropLast()), stamped)
    }

    func testACanonicallyEquivalentURLIsAnotherURL() throws {
        let composed = "\(Fixtures.host)/600/ff0000?v=\u{e9}", decomposed = "\(Fixtures.host)/600/ff0000?v=e\u{301}"
        XCTAssertEqual(composed, decomposed, "Swift calls them equal; a server need not")
        let path = Fixtures.temporaryDirectory(self).appendingPathComponent("journal").path
        try Journal(path: path).append(done(1, url: composed))
        let catalog = try Fixtures.catalog([
            CatalogRecord(albumId: 1, id: 1, title: "", url: decomposed, thumbnailUrl: "")
        ])
        let plan = Plan(
            catalog: catalog, field: .url, mirrors: MirrorMap(), journal: JournalIndex(path: path), skipFailed: false
        ) { _ in true }
        XCTAssertEqual(plan.keptCount, 0)
        XCTAssertEqual(plan.invalidated, [0], "the old line is superseded before anything is fetched")
        var lines: [ItemRecord] = []
        plan.invalidations(of: catalog.records) { lines += $0 }
        XCTAssertEqual(lines.map(\.id), [1])
        XCTAssertEqual(lines.map(\.status), [.pending])
        XCTAssertEqual(lines.map { Array($0.url.utf8) }, [Array(composed.utf8)], "the line names the URL the old file came from")
    }

    /// The server of `archived()`, kept for the test's later runs.
    private var server: TestServer?

    /// Runs 3 records into a fresh bundle served by `server`.
    private func archived() throws -> (RunConfiguration, Catalog, BundleLayout) {
        let server = try Fixtures.placeholderServer()
        self.server = server
        let out = Fixtures.temporaryDirectory(self)
        let config = Fixtures.configuration(out: out, server: server)
        let catalog = try Fixtures.catalog(Fixtures.records(3))
        XCTAssertEqual(try Fixtures.run(config, catalog: catalog).done, 3)
        return (config, catalog, BundleLayout(root: out))
    }

    /// Flips one byte of `path` in place (same inode, same size), then sets its mtime `shift`
    /// nanoseconds from what it was (0: the old mtime restored, hiding the write).
    private func damageInPlace(_ path: String, shiftingMtimeBy shift: Int64) throws {
        var info = stat()
        XCTAssertEqual(lstat(path, &info), 0)
        let fd = open(path, O_RDWR)
        XCTAssertGreaterThanOrEqual(fd, 0)
        var byte: UInt8 = 0
        XCTAssertEqual(pread(fd, &byte, 1, 40), 1)
        byte ^= 0xFF
        XCTAssertEqual(pwrite(fd, &byte, 1, 40), 1)
        let nanoseconds = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec) + shift
        var times = [timespec](repeating: timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000)), count: 2)
        XCTAssertEqual(futimens(fd, &times), 0)
        close(fd)
    }

    private func assertFetchedAgain(_ config: RunConfiguration, _ catalog: Catalog, _ layout: BundleLayout) throws {
        let again = try Fixtures.run(config, catalog: catalog)
        XCTAssertEqual(again.progress.requests, 1, "the changed file is fetched again")
        XCTAssertEqual(again.done, 3)
        XCTAssertTrue(try BundleVerifier().verify(layout.root).ok)
    }

    func testAFileRewrittenInPlaceWithTheSameSizeIsFetchedAgain() throws {
        let (config, catalog, layout) = try archived()
        try damageInPlace(layout.images.appendingPathComponent("2.png").path, shiftingMtimeBy: 1_000_000_000)
        try assertFetchedAgain(config, catalog, layout)
    }

    func testAFileReplacedByOtherBytesOfTheSameSizeAndMtimeIsFetchedAgain() throws {
        let (config, catalog, layout) = try archived()
        let path = layout.images.appendingPathComponent("2.png").path
        var info = stat()
        XCTAssertEqual(lstat(path, &info), 0)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        bytes[40] ^= 0xFF
        // A new inode, by rename (Foundation's `.atomic` leaves a directory in /tmp each time).
        try bytes.write(to: URL(fileURLWithPath: path + ".new"))
        XCTAssertEqual(rename(path + ".new", path), 0)
        var times = [info.st_mtim, info.st_mtim]
        XCTAssertEqual(utimensat(AT_FDCWD, path, &times, 0), 0)
        try assertFetchedAgain(config, catalog, layout)
    }

    func testRecheckHashesEveryDoneFileAndCatchesDamageThatKeptItsStamp() throws {
        var (config, catalog, layout) = try archived()
        try damageInPlace(layout.images.appendingPathComponent("3.png").path, shiftingMtimeBy: 0)
        XCTAssertEqual(try Fixtures.run(config, catalog: catalog).progress.requests, 0, "size, inode and mtime all match")
        config.recheck = true
        try assertFetchedAgain(config, catalog, layout)
    }

    func testAJournalLineWithADamagedDigestIsFetchedAgainRatherThanVouchedFor() throws {
        let (config, catalog, layout) = try archived()
        var journal = try String(contentsOf: layout.journal, encoding: .utf8)
        let sha = try XCTUnwrap(Fixtures.manifest(in: layout.root).items[0].sha256)
        journal = journal.replacingOccurrences(of: sha, with: String(sha.dropLast()) + "Z")
        try journal.write(to: layout.journal, atomically: false, encoding: .utf8)
        try assertFetchedAgain(config, catalog, layout)
    }

    func testNineteenDigitIDsAreKeptOnResumeAndCountedDoneByStatus() throws {
        let server = try Fixtures.placeholderServer()
        let out = Fixtures.temporaryDirectory(self)
        let config = Fixtures.configuration(out: out, server: server)
        let catalog = try Fixtures.catalog([
            Fixtures.record(1_000_000_000_000_000_000, colour: "00ff00"),
            Fixtures.record(-100_000_000_000_000_000, colour: "0000ff"),
        ])
        XCTAssertEqual(try Fixtures.run(config, catalog: catalog).done, 2)
        let again = try Fixtures.run(config, catalog: catalog)
        XCTAssertEqual(again.progress.requests, 0)
        XCTAssertEqual(again.done, 2)
        let status = try XCTUnwrap(BundleStatus.read(directory: out))
        XCTAssertEqual([status.done, status.pending], [2, 0])
    }
}
