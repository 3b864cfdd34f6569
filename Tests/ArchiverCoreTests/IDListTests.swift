import XCTest
@testable import ArchiverCore

/// `IDList`: merge's ids per shard, integers kept as integers until a string id comes.
final class IDListTests: XCTestCase {
    func testIntegersThenStringsComeBackInOrderAsTheyWere() {
        var list = IDList()
        XCTAssertNil(list.last)
        let ids: [RecordID] = [1, 7, RecordID(Int.max), "b", 9, "é"]
        for (count, id) in ids.enumerated() {
            list.append(id)
            XCTAssertEqual(list.count, count + 1)
            XCTAssertEqual(list.last, id)
        }
        XCTAssertEqual((0..<list.count).map { list[$0] }, ids)
        XCTAssertEqual(list[3].string, "b", "a string id stays a string")
        XCTAssertEqual(list[4].integer, 9, "an integer after a string stays an integer")
    }
}
