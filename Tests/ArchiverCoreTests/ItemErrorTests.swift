import XCTest
@testable import ArchiverCore

final class ItemErrorTests: XCTestCase {
    func testKindsAreStableAndRetriabilityFollowsStatus() {
        XCTAssertEqual(ItemError.httpStatus(404, url: "u").kind, "http-status")
        XCTAssertFalse(ItemError.httpStatus(404, url: "u").isRetriable)
        XCTAssertTrue(ItemError.httpStatus(503, url: "u").isRetriable)
        XCTAssertEqual(ItemError.notImage("x").kind, "not-image")
        XCTAssertEqual(ItemError.invalidImage(.png, "x").kind, "invalid-png")
    }
}
