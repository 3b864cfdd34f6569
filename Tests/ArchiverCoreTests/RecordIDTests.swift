import Foundation
import XCTest
@testable import ArchiverCore

/// String ids (issue #15): one id whatever the format spells it in, compared and ordered by
/// bytes, and carried through the journal, the catalog's index and the manifest unchanged.
final class RecordIDTests: XCTestCase {
    func testACanonicalDecimalStringIsTheIntegerAndNothingElseIs() {
        XCTAssertEqual(RecordID("7"), RecordID(7))
        XCTAssertEqual(RecordID("-12").integer, -12)
        XCTAssertEqual(RecordID("0").integer, 0)
        XCTAssertEqual(RecordID("9223372036854775807").integer, Int.max)
        XCTAssertEqual(RecordID("-9223372036854775808").integer, Int.min)
        for text in ["007", "+7", "-0", " 7", "7 ", "7.0", "1e3", "9223372036854775808", "", "-", "٣"] {
            XCTAssertEqual(RecordID(text).string, text, text)
            XCTAssertNotEqual(RecordID(text), RecordID(7), text)
        }
    }

    func testStringsAreEqualAndOrderedByTheirBytesAfterEveryInteger() {
        let composed = RecordID("\u{E9}"), decomposed = RecordID("e\u{301}")
        XCTAssertNotEqual(composed, decomposed, "two spellings Unicode calls equal are two ids")
        XCTAssertEqual(Set([composed, decomposed, RecordID("\u{E9}")]).count, 2)
        let ids: [RecordID] = ["b", 10, "B", "", -3, "a", "ab", "\u{E9}", "e\u{301}", "~", "007", 2]
        XCTAssertEqual(ids.sorted(), [-3, 2, 10, "", "007", "B", "a", "ab", "b", "e\u{301}", "~", "\u{E9}"])
    }

    func testMessagesShowAStringIDQuotedOnOneLine() {
        XCTAssertEqual(RecordID(17).description, "17")
        XCTAssertEqual(RecordID("a\tb\n\"c\"").description, #""a\tb\n\"c\"""#)
        let long = RecordID(String(repeating: "é", count: 40))
        XCTAssertEqual(long.description, "\"" + String(repeating: "é", count: 30) + "\"...")
        XCTAssertEqual(RecordID("a" + String(repeating: "é", count: 40)).description, "\"a" + String(repeating: "é", count: 29) + "\"...", "no character is cut")
        XCTAssertEqual("aé".prefix(utf8Bytes: 2), "a")
    }

    func testTheManifestWritesAnIntegerAsANumberAndAStringAsAString() throws {
        struct Box: Codable, Equatable { var id: RecordID }
        let boxes = [Box(id: 7), Box(id: "007"), Box(id: "a\"b")]
        let json = try JSONEncoder().encode(boxes)
        XCTAssertEqual(String(decoding: json, as: UTF8.self), #"[{"id":7},{"id":"007"},{"id":"a\"b"}]"#)
        XCTAssertEqual(try JSONDecoder().decode([Box].self, from: json), boxes)
        XCTAssertEqual(try JSONDecoder().decode(Box.self, from: Data(#"{"id":"7"}"#.utf8)).id, 7)
    }

    func testAnyIDSurvivesAJournalLineAndIntegerLinesAreWrittenAsBefore() throws {
        let hostile: [RecordID] = [
            7, -7, "007", "7\t", "a\tb", "line\nbreak", "cr\r", "back\\slash", "\\t", "%41", "\"", "\"7", "",
            "\u{FFFD}\u{0}\u{1}", "Ünï", RecordID(String(repeating: "x", count: 300)),
        ]
        for id in hostile {
            let record = ItemRecord(id: id, url: "https://h/\t1", source: "s", status: .failed, attempts: 1, error: RecordedError(kind: "io", message: "m"))
            let line = JournalLine.encode(record)
            XCTAssertEqual(line.utf8.filter { $0 == 0x0A }.count, 1, "one line for \(id)")
            let bytes = Array(line.utf8.dropLast())
            XCTAssertEqual(bytes.withUnsafeBufferPointer(JournalLine.decode), record, "\(id)")
            XCTAssertEqual(bytes.withUnsafeBufferPointer(JournalLine.peek)?.id, id, "\(id)")
        }
        let old = "done\t42\thttps://h/42\thttp://m/42\t139\t\(String(repeating: "ab", count: 32))\t600\t600\t1"
        let decoded = try XCTUnwrap(JournalLine.decode(old))
        XCTAssertEqual(decoded.id, 42)
        XCTAssertEqual(JournalLine.encode(decoded), old + "\n", "an integer id's line is written as it always was")
        XCTAssertTrue(JournalLine.encode(ItemRecord(id: "007", url: "u", source: "s", status: .pending)).hasPrefix("pending\t\"007\tu"))
    }

    func testTheJournalIndexFindsStringIDsAndKeepsTheLatestLineOfEach() throws {
        let path = Fixtures.temporaryDirectory(self).appendingPathComponent("journal").path
        let journal = try Journal(path: path)
        func done(_ id: RecordID, bytes: Int64) -> ItemRecord {
            ItemRecord(id: id, url: "u", source: "s", status: .done, bytes: bytes, sha256: SHA256Digest(hex: String(repeating: "0a", count: 32)), width: 1, height: 1, attempts: 1)
        }
        let ids: [RecordID] = ["a", "A", 7, "7x", "\u{E9}", "e\u{301}", "tab\there", ""]
        try journal.append(ids.map { done($0, bytes: 1) })
        try journal.append(done("a", bytes: 2))
        try journal.append(ItemRecord(id: "A", url: "u", source: "s", status: .pending))
        let index = JournalIndex(path: path)
        XCTAssertEqual(index.lineCount, ids.count + 2)
        XCTAssertEqual(index.count, ids.count)
        XCTAssertEqual(Set(index.ids), Set(ids))
        XCTAssertEqual(index.record(for: "a")?.bytes, 2)
        XCTAssertEqual(index.status(of: "A"), .pending)
        for id in ids where id != "a" && id != "A" { XCTAssertEqual(index.record(for: id)?.id, id, "\(id)") }
        XCTAssertNil(index.record(for: "b"))
        XCTAssertNil(index.record(for: 8))
        XCTAssertEqual(index.count(of: .done), ids.count - 1)
    }

    func testStringIDsCostARecordOfAnIntegerCatalogNothing() {
        XCTAssertEqual(MemoryLayout<CatalogRecords.Entry>.stride, 24, "an id (or its place in the arena), an offset, an album")
        XCTAssertEqual(MemoryLayout<JournalIndex.Entry>.stride, 24)
        let catalog = try? Catalog(source: "i.json", data: Data(#"[{"id": 2, "url": "u"}, {"id": "1", "url": "u"}]"#.utf8))
        XCTAssertNil(catalog?.records.arena, "integer ids keep no arena")
        XCTAssertEqual(catalog?.records.byID, [1, 0])
    }

    func testACatalogOrdersMixedIDsAndFindsEachAndRefusesDuplicatesAfterCanonicalising() throws {
        // 250 and 260 bytes, the same first 200, and after every id above in byte order.
        let long = String(repeating: "ÿ", count: 125), longer = String(repeating: "ÿ", count: 130)
        let ids: [RecordID] = ["b", 10, RecordID(long), "", 2, "a", RecordID(longer), "\u{E9}", "e\u{301}", "007"]
        let records = ids.enumerated().map { CatalogRecord(albumId: 1, id: $1, title: "t\($0)", url: "https://h/\($0)", thumbnailUrl: "") }
        let catalog = try Fixtures.catalog(records)
        let inOrder = catalog.records.byID.map { catalog.records.id(at: Int($0)) }
        XCTAssertEqual(Array(inOrder.prefix(8)), [2, 10, "", "007", "a", "b", "e\u{301}", "\u{E9}"])
        XCTAssertEqual(Set(inOrder.suffix(2)), [RecordID(long), RecordID(longer)], "ids over 200 bytes come after their first 200")
        for (position, id) in ids.enumerated() {
            XCTAssertEqual(catalog.records.position(ofID: id), position, "\(id)")
            XCTAssertEqual(catalog.records.id(at: position), id, "\(id)")
        }
        XCTAssertNil(catalog.records.position(ofID: "c"))
        XCTAssertNil(catalog.records.position(ofID: 3))
        XCTAssertNil(catalog.records.position(ofID: RecordID(String(repeating: "ÿ", count: 127))))

        let text = #"[{"id": 7, "url": "u"}, {"id": "x", "url": "u"}, {"id": "7", "url": "u"}, {"id": "x", "url": "u"}]"#
        XCTAssertThrowsError(try Catalog(source: "d.json", data: Data(text.utf8))) { error in
            XCTAssertEqual(error as? CatalogError, .duplicateIDs(source: "d.json", ids: [7, "x"], count: 2))
            XCTAssertEqual("\(error)", #"catalog d.json has duplicate ids: 7, "x""#)
        }
        XCTAssertNoThrow(try Catalog(source: "n.json", data: Data(#"[{"id": "\u00e9", "url": "u"}, {"id": "e\u0301", "url": "u"}]"#.utf8)))
    }
}
