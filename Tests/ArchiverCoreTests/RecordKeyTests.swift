import Foundation
import XCTest
@testable import ArchiverCore

/// The file names string ids will get (issue #15): safe, reversible, no two alike even to a
/// case-insensitive file system.
final class RecordKeyTests: XCTestCase {
    func testTheIssuesIDsGetSafeNamesAndTheUnsafeOnesNone() {
        let cases: [(String, String?)] = [
            ("a/b", "a%2Fb"), ("..", "%2E."), (".", "%2E"), (".hidden", "%2Ehidden"), ("CON", "%43%4F%4E"), ("con", "%63on"),
            ("nul.txt", "%6Eul.txt"), ("Ünï", "%C3%9Cn%C3%AF"), ("A", "%41"), ("a", "a"), ("7", "7"), ("007", "007"),
            ("-1", "-1"), ("a b%", "a%20b%25"), ("x\u{0}y", "x%00y"),
            ("", nil), (String(repeating: "x", count: 300), nil), (String(repeating: "x", count: 201), nil),
        ]
        for (id, expected) in cases {
            XCTAssertEqual(RecordKey.stem(for: id), expected, id)
        }
    }

    func testEveryNameIsOneFileNameInsideImages() {
        for id in ["a/b", "..", "../../etc/passwd", "/abs", "a\\b", "\u{0}", String(repeating: "é", count: 100), ".partial-x"] {
            guard let stem = RecordKey.stem(for: id) else { return XCTFail(id) }
            XCTAssertFalse(stem.contains("/"), id)
            XCTAssertFalse(stem.contains("\u{0}"), id)
            XCTAssertFalse(stem.hasPrefix("."), id)
            XCTAssertLessThanOrEqual((stem + ".png").utf8.count, 255, id)
        }
    }

    func testNamesRoundTripAndNeverCollideEvenIgnoringCase() {
        var ids = ["A", "a", "Ab", "aB", "ab", "AB", "%41", "%61", "Ü", "ü", "u\u{308}", "con", "Con", "CON", "x.y", "x%2Ey", "7", "07"]
        var generator = SeededGenerator()
        ids += (0..<500).map { _ in
            String((0..<Int.random(in: 1...12, using: &generator)).map { _ in "aAzZ09._-/% éÜ~".randomElement(using: &generator)! })
        }
        var byFoldedName: [String: String] = [:]
        for id in Set(ids) {
            let stem = RecordKey.stem(for: id)!
            XCTAssertEqual(RecordKey.id(fromStem: stem), id, "round trip of \(id)")
            if let other = byFoldedName.updateValue(id, forKey: stem.lowercased()) {
                XCTFail("\(id) and \(other) both give \(stem) ignoring case")
            }
        }
    }

    func testLongIDsGetAHashedNameThatStillDiffers() {
        let one = String(repeating: "é", count: 90), two = String(repeating: "é", count: 89) + "è"
        let (a, b) = (RecordKey.stem(for: one)!, RecordKey.stem(for: two)!)
        XCTAssertNotEqual(a, b)
        XCTAssertTrue(a.contains("~"))
        XCTAssertLessThanOrEqual(a.utf8.count, 200)
        XCTAssertNil(RecordKey.id(fromStem: a), "a hashed name is reversed through the manifest, not the name")
        XCTAssertEqual(RecordKey.stem(for: String(repeating: "x", count: 200)), String(repeating: "x", count: 200))
    }
}
