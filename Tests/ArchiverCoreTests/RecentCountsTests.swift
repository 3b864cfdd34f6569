import XCTest
@testable import ArchiverServer

final class RecentCountsTests: XCTestCase {
    func testPastItsCapacityTheKeyFirstCountedLongestAgoIsForgottenAndCountsFromOneAgain() {
        var counts = RecentCounts<String>(capacity: 3)
        XCTAssertEqual(["a", "b", "a", "c", "a"].map { counts.increment($0) }, [1, 1, 2, 1, 3])
        XCTAssertEqual(counts.count, 3)
        XCTAssertEqual(counts.increment("d"), 1, "a fourth key forgets a, the oldest, however often it came")
        XCTAssertEqual(counts.count, 3)
        XCTAssertEqual([counts.increment("b"), counts.increment("c"), counts.increment("d")], [2, 2, 2])
        XCTAssertEqual(counts.increment("a"), 1, "forgotten, so new again; b goes")
        XCTAssertEqual(counts.increment("b"), 1)
        XCTAssertEqual(counts.count, 3)
    }
}
