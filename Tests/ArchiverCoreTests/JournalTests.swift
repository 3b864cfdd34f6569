import Foundation
import XCTest
@testable import ArchiverCore

final class JournalTests: XCTestCase {
    /// A sha256 as the archiver writes it; the journal refuses lines whose digest is not one.
    static let digest = SHA256Digest(hex: String(repeating: "0a", count: 32))!

    func testLinesRoundTripFieldsWithTabsNewlinesAndBackslashes() {
        let records = [
            ItemRecord(id: 1, url: "https://h/a\tb", source: "http://m/a\\b", status: .done, bytes: 10, sha256: Self.digest, width: 2, height: 3, attempts: 1),
            ItemRecord(id: -2, url: "u\nv", source: "s\r\n", status: .failed, attempts: 4, error: RecordedError(kind: "http-status", status: 503, message: "HTTP 503\tfrom\nx\\")),
            ItemRecord(id: 3, url: "", source: "", status: .failed, attempts: 1, error: RecordedError(kind: "not-png", message: "")),
        ]
        for record in records {
            let line = JournalLine.encode(record)
            XCTAssertEqual(line.filter { $0 == "\n" }.count, 1)
            XCTAssertEqual(JournalLine.decode(line.dropLast()), record)
        }
    }

    /// A journal or manifest read back may be hostile: a kind no version writes is read as
    /// `unknown` (status, merge and the gallery keep a group per kind), and a message is cut to
    /// 4 KiB at a character (one holds a URL a catalog may make 4 MiB long). Every kind an
    /// `ItemError` has is kept as it is.
    func testAFailuresKindIsOneTheArchiverWritesAndItsMessageIsBounded() throws {
        let url = "https://h/x"
        let errors: [ItemError] = [
            .httpStatus(404, url: url), .timeout(seconds: 3, url: url), .network("n", url: url), .unreachable("u", url: url),
            .hostDown(host: "h", reason: "r", url: url), .tls("t", url: url), .truncated(expected: 2, received: 1, url: url),
            .tooLarge(limit: 1, url: url), .tooManyRedirects(url: url), .headerTooLarge(limit: 1, url: url),
            .forbiddenAddress(url: url), .unauthorized(401, url: url), .notImage("n"), .unacceptedFormat(.gif, accepted: "png"),
            .checksumMismatch(expected: "a", actual: "b", url: url), .invalidURL("u"), .unsafeKey("k"), .io("i"),
        ] + ImageFormat.allCases.map { .invalidImage($0, "bad") }
        for error in errors {
            XCTAssertEqual(RecordedError(error).kind, error.kind, "\(error)")
        }
        XCTAssertEqual(RecordedError(kind: "not-png", message: "m").kind, "not-png", "an older version's kind")

        let line = JournalLine.encode(
            ItemRecord(id: 5, url: url, source: url, status: .failed, attempts: 1, error: RecordedError(kind: "io", message: "m")))
        XCTAssertTrue(line.contains("\tio\t"), line)
        let hostile = line.replacingOccurrences(of: "\tio\t", with: "\tkind-of-its-own-7\t")
        XCTAssertEqual(JournalLine.decode(hostile.dropLast())?.error?.kind, "unknown")

        let item = #"{"albumId": 1, "id": 5, "status": "failed", "title": "", "url": "u", "source": "u", "attempts": 1, "error": {"kind": "<b>x</b>", "message": "m"}}"#
        XCTAssertEqual(try JSONDecoder().decode(Manifest.Item.self, from: Data(item.utf8)).error?.kind, "unknown")

        let long = String(repeating: "\u{e9}", count: 5000) + "z"  // 10,001 bytes, 2 to a character
        let cut = RecordedError(kind: "network", message: long).message
        XCTAssertEqual(cut, String(repeating: "\u{e9}", count: 2048) + "...")
        XCTAssertEqual(RecordedError(kind: "network", message: String(repeating: "a", count: 4096)).message.utf8.count, 4096, "4 KiB is kept whole")
    }

    /// A journal says an id again on every run that reaches it, and a hostile one may say one id
    /// ten million times: the index drops repeated ids while it reads, once the lines pass
    /// twice the ids it kept, and ends with the same latest line per id as reading them all.
    func testTheIndexOfAJournalThatRepeatsItsIDsHoldsTheIDsNotTheLines() throws {
        let dir = Fixtures.temporaryDirectory(self)
        let path = dir.appendingPathComponent("journal").path
        var text = ""
        // 40 integer ids and 10 string ids, said over and over; the last word on each is its own.
        for round in 0..<200 {
            for id in 1...40 { text += JournalLine.encode(ItemRecord(id: RecordID(id), url: "u\(round)", source: "s", status: .pending)) }
            for id in 1...10 {
                let record = ItemRecord(
                    id: RecordID("s\(id)"), url: "u\(round)", source: "s", status: .failed, attempts: round,
                    error: RecordedError(kind: "io", message: "m"))
                text += JournalLine.encode(record)
            }
        }
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        let compacting = JournalIndex(path: path, compactingFrom: 64)
        let whole = JournalIndex(path: path, compactingFrom: .max)
        XCTAssertEqual(whole.peakLines, 10_000)
        XCTAssertLessThan(compacting.peakLines, 200, "at most twice the 50 ids, or the floor, between drops")
        XCTAssertEqual(compacting.lineCount, 10_000)
        XCTAssertEqual(compacting.count, 50)
        XCTAssertEqual(compacting.allRecords(), whole.allRecords())
        XCTAssertEqual(compacting.record(for: 7)?.url, "u199")
        XCTAssertEqual(compacting.record(for: "s3")?.attempts, 199)
    }

    func testDoneLinesCarryValidatorsAndOlderLinesWithoutThemStillRead() {
        let stamp = FileStamp(inode: 42, modified: 1_700_000_000_123_456_789)
        let validators = [
            Validators(etag: "\"5f1a-8b\"", lastModified: "Tue, 14 Nov 2023 22:13:20 GMT"),
            Validators(etag: "W/\"a\\tb\""),
            Validators(lastModified: "Tue, 14 Nov 2023 22:13:20 GMT"),
        ]
        for validators in validators {
            for file in [stamp, nil] {
                let record = ItemRecord(
                    id: 7, url: "u", source: "s", status: .done, bytes: 10, sha256: Self.digest, width: 2, height: 3,
                    attempts: 1, file: file, validators: validators)
                XCTAssertEqual(JournalLine.decode(JournalLine.encode(record).dropLast()), record)
            }
        }
        // Lines of earlier versions: without validators, and without inode and mtime.
        let old = JournalLine.decode("done\t7\tu\ts\t10\t\(Self.digest)\t2\t3\t1\t42\t99")
        XCTAssertEqual(old?.file, FileStamp(inode: 42, modified: 99))
        XCTAssertEqual(old?.validators, Validators())
        XCTAssertEqual(JournalLine.decode("done\t7\tu\ts\t10\t\(Self.digest)\t2\t3\t1")?.validators, Validators())
        // Half a validator pair, or a validator that could end a header line, is not vouched for.
        XCTAssertNil(JournalLine.decode("done\t7\tu\ts\t10\t\(Self.digest)\t2\t3\t1\t42\t99\t\"e\""))
        XCTAssertNil(
            JournalLine.decode("done\t7\tu\ts\t10\t\(Self.digest)\t2\t3\t1\t42\t99\t\"e\\nX: y\"\t")?.validators.etag)
    }

    func testReplayTakesTheLastRecordPerIDAndSkipsTornOrForeignLines() throws {
        let dir = Fixtures.temporaryDirectory(self)
        let path = dir.appendingPathComponent("journal").path
        let journal = try Journal(path: path)
        try journal.append(ItemRecord(id: 1, url: "u", source: "s", status: .failed, attempts: 1, error: RecordedError(kind: "timeout", message: "m")))
        try journal.append([
            ItemRecord(id: 1, url: "u", source: "s", status: .done, bytes: 5, sha256: Self.digest, width: 1, height: 1, attempts: 2),
            ItemRecord(id: 2, url: "u2", source: "s2", status: .done, bytes: 6, sha256: Self.digest, width: 1, height: 1, attempts: 1),
        ])
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        handle.seekToEndOfFile()
        handle.write(Data("garbage line\ndone\t3\tu3\ts3\t7\tz\t1\t1".utf8))  // torn: no newline
        try handle.close()
        let replayed = JournalIndex(path: path).allRecords()
        XCTAssertEqual(replayed.keys.sorted(), [1, 2])
        XCTAssertEqual(replayed[1]?.status, .done)
        XCTAssertEqual(replayed[1]?.attempts, 2)
        XCTAssertTrue(JournalIndex(path: dir.appendingPathComponent("none").path).allRecords().isEmpty)
    }

    func testCompactionKeepsOneLinePerRecord() throws {
        let dir = Fixtures.temporaryDirectory(self)
        let path = dir.appendingPathComponent("journal").path
        let journal = try Journal(path: path)
        for attempt in 1...5 {
            try journal.append(ItemRecord(id: 9, url: "u", source: "s", status: .done, bytes: 1, sha256: Self.digest, width: 1, height: 1, attempts: attempt))
        }
        let latest = JournalIndex(path: path).allRecords()
        try Journal.compact(path: path, records: Array(latest.values))
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").count, 1)
        XCTAssertEqual(JournalIndex(path: path).allRecords(), latest)
    }

    func testIndexCountsWithoutDecodingAndALineDamagedAfterItsIDIsFetchedAgain() throws {
        let dir = Fixtures.temporaryDirectory(self)
        let path = dir.appendingPathComponent("journal").path
        let journal = try Journal(path: path)
        try journal.append([
            ItemRecord(id: 1, url: "u1", source: "s1", status: .done, bytes: 5, sha256: Self.digest, width: 1, height: 1, attempts: 1),
            ItemRecord(id: 2, url: "u2", source: "s2", status: .failed, attempts: 2, error: RecordedError(kind: "timeout", message: "m")),
        ])
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        handle.seekToEndOfFile()
        handle.write(Data("done\t3\tu3\tnot enough fields\n".utf8))
        try handle.close()

        let index = JournalIndex(path: path)
        XCTAssertEqual(index.count, 3)
        XCTAssertEqual(index.count(of: .done), 2)
        XCTAssertEqual(index.count(of: .failed), 1)
        XCTAssertEqual(index.record(for: 2)?.error?.kind, "timeout")
        XCTAssertNil(index.record(for: 3), "a damaged line decodes to nothing")

        let catalog = try Fixtures.catalog([
            CatalogRecord(albumId: 1, id: 1, title: "", url: "http://h/u1", thumbnailUrl: ""),
            CatalogRecord(albumId: 1, id: 3, title: "", url: "u3", thumbnailUrl: ""),
        ])
        let plan = Plan(catalog: catalog, field: .url, mirrors: MirrorMap(), journal: index, skipFailed: false) { $0.bytes == 5 }
        XCTAssertEqual(plan.keptCount, 0, "id 1's URL changed; id 3's line is damaged")
        XCTAssertEqual(plan.pendingRecords + plan.rejectedCount, 2)
    }

    /// Past 1 MiB and 4096 reads the index hands the mapped pages back while it works; every
    /// record must still read back exactly, and the latest line of an id must still win.
    func testALargeJournalReadsBackExactlyAcrossDroppedPages() throws {
        let dir = Fixtures.temporaryDirectory(self)
        let path = dir.appendingPathComponent("journal").path
        let journal = try Journal(path: path)
        let records = (1...12_000).map { id in
            ItemRecord(
                id: RecordID(id), url: "https://via.placeholder.com/600/\(id)", source: "http://127.0.0.1:1/600/\(id)",
                status: .done, bytes: Int64(id), sha256: SHA256Digest(hex: String(repeating: "ab", count: 32)), width: 600, height: 600,
                attempts: 1)
        }
        try journal.append(records)
        var again = records[7]
        again.bytes = 99
        try journal.append(again)
        XCTAssertGreaterThan(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0, 1 << 20)

        let index = JournalIndex(path: path)
        XCTAssertEqual(index.lineCount, 12_001)
        XCTAssertEqual(index.count, 12_000)
        XCTAssertEqual(index.ids, Fixtures.ids(1...12_000))
        for _ in 0..<2 {
            for record in records where record.id != 8 {
                XCTAssertEqual(index.record(for: record.id), record)
            }
        }
        XCTAssertEqual(index.record(for: 8)?.bytes, 99)
    }
}
