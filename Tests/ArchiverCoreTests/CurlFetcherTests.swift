import Foundation
import XCTest
@testable import ArchiverCore
@testable import ArchiverServer

final class CurlFetcherTests: XCTestCase {
    private let checks = FetcherChecks { CurlFetcher(limits: $0) }

    func testBodyArrivesByteIdenticalWithUserAgent() throws { try checks.bodyArrivesByteIdenticalWithUserAgent() }
    func testEmptyBodyIsABody() throws { try checks.emptyBodyIsABody() }
    func testNotFoundIsHTTPStatus() throws { try checks.notFoundIsHTTPStatus() }
    func testUnavailableCarriesRetryAfter() throws { try checks.unavailableCarriesRetryAfter() }
    func testShortBodyIsTruncated() throws { try checks.shortBodyIsTruncated() }
    func testHugeDeclaredBodyIsTooLargeAtOnce() throws { try checks.hugeDeclaredBodyIsTooLargeAtOnce() }
    func testContentLengthOverCapIsTooLarge() throws { try checks.contentLengthOverCapIsTooLarge() }
    func testBodyAtExactlyTheCapIsABody() throws { try checks.bodyAtExactlyTheCapIsABody() }

    func testUnsizedBodyOverCapIsTooLargeAndStopsTheDownload() throws {
        let sent = try checks.unsizedBodyOverCapIsTooLarge()
        XCTAssertLessThan(sent, 64 << 20, "kept reading a 200 MB body past its 1 MB cap")
    }
    func testUnsizedBodyUnderCapIsABody() throws { try checks.unsizedBodyUnderCapIsABody() }
    func testRedirectIsFollowedToFinalURL() throws { try checks.redirectIsFollowedToFinalURL() }
    func testRedirectLoopIsTooManyRedirects() throws { try checks.redirectLoopIsTooManyRedirects() }
    func testHangIsTimeout() throws { try checks.hangIsTimeout() }
    func testCancelEndsInCancelled() throws { try checks.cancelEndsInCancelled() }
    func testPerHostLimitHoldsAtTheServer() throws { try checks.perHostLimitHoldsAtTheServer() }
    func testConnectionsAreKeptPerHostWhenRequestsAlternateHosts() throws {
        try checks.connectionsAreKeptPerHostWhenRequestsAlternateHosts()
    }

    func testResetMidBodyIsTruncated() throws {
        let error = try checks.resetMidBodyFails()
        XCTAssertEqual(error?.kind, "truncated")
    }

    func testConnectionRefusedIsNetworkWithCurlMessage() throws {
        let server = try TestServer()
        let url = server.url("/gone")
        server.stop()
        let failure = FetcherChecks.error(FetcherChecks.outcome(of: CurlFetcher(limits: FetchLimits()), url).0)
        guard case .network(let message, _)? = failure?.0 else { return XCTFail("expected network, got \(String(describing: failure))") }
        XCTAssertFalse(message.isEmpty)
    }

    func testReleasingTheFetcherCancelsTransfersInFlight() throws {
        let server = try TestServer()
        defer { server.stop() }
        server.route("/hang", HTTPResponse(status: 200, body: .hang))
        let result = Locked<FetchOutcome?>(nil)
        let done = DispatchSemaphore(value: 0)
        server.holdRequests()
        do {
            let fetcher = CurlFetcher(limits: FetchLimits())
            _ = fetcher.fetch(server.url("/hang")) { outcome in
                result.withLock { $0 = outcome }
                done.signal()
            }
            XCTAssertTrue(server.waitUntilInFlight(1))
        }
        XCTAssertEqual(done.wait(timeout: .now() + 2), .success)
        guard case .cancelled? = result.withLock({ $0 }) else { return XCTFail("expected .cancelled") }
    }
}
