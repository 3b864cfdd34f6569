import XCTest
@testable import ArchiverCore

final class ItemErrorTests: XCTestCase {
    func testKindsAreStableAndRetriabilityFollowsStatus() {
        XCTAssertEqual(ItemError.httpStatus(404, url: "u").kind, "http-status")
        XCTAssertFalse(ItemError.httpStatus(404, url: "u").isRetriable)
        XCTAssertTrue(ItemError.httpStatus(503, url: "u").isRetriable)
        XCTAssertEqual(ItemError.notImage("x").kind, "not-image")
        XCTAssertEqual(ItemError.invalidImage(.jpeg, "x").kind, "invalid-jpeg")
        XCTAssertEqual(ItemError.invalidImage(.webp, "x").kind, "invalid-webp")
        XCTAssertEqual(ItemError.unacceptedFormat(.gif, accepted: "png").kind, "unaccepted-format")
        XCTAssertEqual(ItemError.unauthorized(403, url: "u").kind, "unauthorized")
        XCTAssertEqual(ItemError.unauthorized(403, url: "u").status, 403)
        XCTAssertFalse(ItemError.unauthorized(401, url: "u").isRetriable)
        XCTAssertEqual(ItemError.invalidImage(.png, "x").kind, "invalid-png")
    }
}
