import Foundation
import XCTest
@testable import ArchiverCore

/// String ids (issue #15): one id whatever the format spells it in, compared and ordered by bytes.
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
        XCTAssertEqual(RecordID.prefix("aé", bytes: 2), "a")
    }

    func testTheManifestWritesAnIntegerAsANumberAndAStringAsAString() throws {
        struct Box: Codable, Equatable { var id: RecordID }
        let boxes = [Box(id: 7), Box(id: "007"), Box(id: "a\"b")]
        let json = try JSONEncoder().encode(boxes)
        XCTAssertEqual(String(decoding: json, as: UTF8.self), #"[{"id":7},{"id":"007"},{"id":"a\"b"}]"#)
        XCTAssertEqual(try JSONDecoder().decode([Box].self, from: json), boxes)
        XCTAssertEqual(try JSONDecoder().decode(Box.self, from: Data(#"{"id":"7"}"#.utf8)).id, 7)
    }
}
