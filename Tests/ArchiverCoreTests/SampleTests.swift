import XCTest
@testable import ArchiverCore

/// `Sample` and `String.clipped`: what merge and verify keep of paths from outside.
final class SampleTests: XCTestCase {
    func testASampleCountsEveryOneAndKeepsTheFirstFew() {
        var sample = Sample(keeping: 3)
        var built = 0
        for index in 0..<1000 {
            sample.add({ built += 1; return "p\(index)" }())
        }
        XCTAssertEqual(sample.count, 1000)
        XCTAssertEqual(sample.first, ["p0", "p1", "p2"])
        XCTAssertEqual(sample.unnamed, 997)
        XCTAssertEqual(built, 3, "only the kept ones are built")
    }

    func testClippedCutsAtACharacterToOneKiBWithAMarkerAndOnlyOnce() {
        XCTAssertEqual("images/1.png".clipped, "images/1.png")
        let exact = String(repeating: "a", count: String.maxShownBytes)
        XCTAssertEqual(exact.clipped, exact)
        // Two-byte characters: the cut falls inside one and backs off to its start.
        let long = String(repeating: "é", count: 300_000)
        let clipped = long.clipped
        XCTAssertLessThanOrEqual(clipped.utf8.count, String.maxShownBytes)
        XCTAssertGreaterThan(clipped.utf8.count, String.maxShownBytes - 4)
        XCTAssert(clipped.hasSuffix("…"))
        XCTAssertEqual(String(clipped.dropLast()), String(repeating: "é", count: clipped.count - 1))
        XCTAssertEqual(clipped.clipped, clipped)
    }
}
