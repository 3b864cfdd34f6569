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

    func testConnectionRefusedIsUnreachableWithCurlMessage() throws {
        let server = try TestServer()
        let url = server.url("/gone")
        server.stop()
        let failure = FetcherChecks.error(FetcherChecks.outcome(of: CurlFetcher(limits: FetchLimits()), url).0)
        XCTAssertEqual(failure?.0.kind, "network")
        guard case .unreachable(let message, _)? = failure?.0 else { return XCTFail("expected unreachable, got \(String(describing: failure))") }
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
        XCTAssertEqual(done.wait(timeout: .now() + 30), .success)
        guard case .cancelled? = result.withLock({ $0 }) else { return XCTFail("expected .cancelled") }
    }

    /// A connection libcurl keeps between requests stays in the fetcher's epoll set with no
    /// events (one epoll_ctl to reuse it instead of three). A parked socket still reports errors,
    /// level-triggered, so when the server resets it, it must leave the set (or the loop would
    /// wake for it on every wait); the next request then connects again.
    func testAKeptConnectionIsParkedAndLeavesTheWaitSetWhenReset() throws {
        let reset = DispatchSemaphore(value: 0)
        let connections = Locked(0)
        let server = try RawLoopbackServer { fd in
            connections.withLock { $0 += 1 }
            RawLoopbackServer.readRequest(fd)
            let answer = "HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nContent-Length: 3\r\n\r\nabc"
            guard RawLoopbackServer.send(fd, Array(answer.utf8)) else { return }
            reset.wait()
            var option = linger(l_onoff: 1, l_linger: 0)  // closing now sends a reset
            setsockopt(fd, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
        }
        let fetcher = CurlFetcher(limits: FetchLimits())
        guard case .body? = FetcherChecks.outcome(of: fetcher, server.url("/a")).0 else { return XCTFail("expected a body") }
        let socket = try XCTUnwrap(WaitSets.socket(connectedTo: server.port), "no kept connection")
        let set = try XCTUnwrap(WaitSets.epoll(holding: socket), "the kept connection left the wait set")
        // The kernel always reports errors and hang-ups: a parked socket's mask is just those.
        XCTAssertEqual(WaitSets.events(of: socket, in: set), 0x18 /* EPOLLERR | EPOLLHUP */, "a kept connection waits on nothing")

        reset.signal()
        let deadline = Date() + 30  // a bound on waiting for the event, not a speed limit
        while WaitSets.events(of: socket, in: set) != nil, Date() < deadline { usleep(1000) }
        XCTAssertNil(WaitSets.events(of: socket, in: set), "a reset kept connection stayed in the wait set")

        guard case .body? = FetcherChecks.outcome(of: fetcher, server.url("/b")).0 else { return XCTFail("expected a body") }
        XCTAssertEqual(connections.withLock { $0 }, 2)
        reset.signal()
        server.stop()
    }
}

/// The process's epoll sets as `/proc/self/fdinfo` shows them.
private enum WaitSets {
    static func descriptors() -> [Int32] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).compactMap { Int32($0) }
    }

    /// A socket of this process whose peer is 127.0.0.1:`port`.
    static func socket(connectedTo port: Int) -> Int32? {
        descriptors().first { fd in
            var address = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let named = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &length) == 0 }
            }
            return named && address.sin_family == sa_family_t(AF_INET) && Int(UInt16(bigEndian: address.sin_port)) == port
        }
    }

    /// The epoll descriptor whose set holds `fd`.
    static func epoll(holding fd: Int32) -> Int32? {
        descriptors().first { events(of: fd, in: $0) != nil }
    }

    /// The events `set` waits on for `fd`; nil when `set` is not an epoll set holding it.
    static func events(of fd: Int32, in set: Int32) -> UInt32? {
        guard let info = try? String(contentsOfFile: "/proc/self/fdinfo/\(set)", encoding: .utf8) else { return nil }
        for line in info.split(separator: "\n") where line.hasPrefix("tfd:") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 4, Int32(fields[1]) == fd, fields[2] == "events:" else { continue }
            return UInt32(fields[3], radix: 16)
        }
        return nil
    }
}
