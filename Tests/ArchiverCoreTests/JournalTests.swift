import Foundation
import XCTest
@testable import ArchiverCore

final class JournalTests: XCTestCase {
    func testLinesRoundTripFieldsWithTabsNewlinesAndBackslashes() {
        let records = [
            ItemRecord(id: 1, url: "https://h/a\tb", source: "http://m/a\\b", status: .done, bytes: 10, sha256: "ab", width: 2, height: 3, attempts: 1),
            ItemRecord(id: -2, url: "u\nv", source: "s\r\n", status: .failed, attempts: 4, error: RecordedError(kind: "http-status", status: 503, message: "HTTP 503\tfrom\nx\\")),
            ItemRecord(id: 3, url: "", source: "", status: .failed, attempts: 1, error: RecordedError(kind: "not-png", message: "")),
        ]
        for record in records {
            let line = JournalLine.encode(record)
            XCTAssertEqual(line.filter { $0 == "\n" }.count, 1)
            XCTAssertEqual(JournalLine.decode(line.dropLast()), record)
        }
    }

    func testReplayTakesTheLastRecordPerIDAndSkipsTornOrForeignLines() throws {
        let dir = Fixtures.temporaryDirectory(self)
        let path = dir.appendingPathComponent("journal").path
        let journal = try Journal(path: path)
        try journal.append(ItemRecord(id: 1, url: "u", source: "s", status: .failed, attempts: 1, error: RecordedError(kind: "timeout", message: "m")))
        try journal.append([
            ItemRecord(id: 1, url: "u", source: "s", status: .done, bytes: 5, sha256: "x", width: 1, height: 1, attempts: 2),
            ItemRecord(id: 2, url: "u2", source: "s2", status: .done, bytes: 6, sha256: "y", width: 1, height: 1, attempts: 1),
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
            try journal.append(ItemRecord(id: 9, url: "u", source: "s", status: .done, bytes: 1, sha256: "h", width: 1, height: 1, attempts: attempt))
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
            ItemRecord(id: 1, url: "u1", source: "s1", status: .done, bytes: 5, sha256: "x", width: 1, height: 1, attempts: 1),
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
        let plan = Plan(catalog: catalog, field: .url, mirrors: MirrorMap(), journal: index, skipFailed: false) { _ in 5 }
        XCTAssertEqual(plan.keptCount, 0, "id 1's URL changed; id 3's line is damaged")
        XCTAssertEqual(plan.pendingRecords + plan.rejected.count, 2)
    }
}
