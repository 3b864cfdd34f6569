import Foundation
import XCTest
@testable import ArchiverCore
@testable import ArchiverServer

/// The behaviour every `Fetching` must show, against real loopback servers; each fetcher's test
/// case calls these with a factory, so the fetchers are held to one contract.
struct FetcherChecks {
    let make: (FetchLimits) -> any Fetching

    /// Fetches `url` and waits for the completion; returns it and the seconds it took.
    static func outcome(
        of fetcher: any Fetching, _ url: URL, wait: TimeInterval = 10, file: StaticString = #filePath, line: UInt = #line
    ) -> (FetchOutcome?, TimeInterval) {
        let result = Locked<FetchOutcome?>(nil)
        let done = DispatchSemaphore(value: 0)
        let started = Date()
        _ = fetcher.fetch(url) { outcome in
            result.withLock { $0 = outcome }
            done.signal()
        }
        let finished = done.wait(timeout: .now() + wait) == .success
        XCTAssertTrue(finished, "no completion within \(wait) s for \(url)", file: file, line: line)
        return (result.withLock { $0 }, Date().timeIntervalSince(started))
    }

    static func error(_ outcome: FetchOutcome?) -> (ItemError, Double?)? {
        if case .failed(let error, let retryAfter)? = outcome { return (error, retryAfter) }
        return nil
    }

    func bodyArrivesByteIdenticalWithUserAgent() throws {
        let server = try TestServer()
        defer { server.stop() }
        var generator = SeededGenerator()
        let served = Data((0..<300_000).map { _ in UInt8.random(in: 0...255, using: &generator) })
        server.route("/blob.png", .png(served))
        let url = server.url("/blob.png?v=1")
        let (outcome, _) = Self.outcome(of: make(FetchLimits()), url)
        guard case .body(let data, let finalURL, _)? = outcome else { return XCTFail("expected a body, got \(String(describing: outcome))") }
        XCTAssertEqual(data, served)
        XCTAssertEqual(finalURL, url.absoluteString)
        XCTAssertEqual(server.requests.first?.headers["user-agent"], "archiver/\(ArchiverVersion.current)")
    }

    func emptyBodyIsABody() throws {
        let server = try TestServer()
        defer { server.stop() }
        server.route("/empty", .png(Data()))
        let (outcome, _) = Self.outcome(of: make(FetchLimits()), server.url("/empty"))
        guard case .body(let data, _, _)? = outcome else { return XCTFail("expected a body, got \(String(describing: outcome))") }
        XCTAssertTrue(data.isEmpty)
    }

    func notFoundIsHTTPStatus() throws {
        let server = try TestServer()
        defer { server.stop() }
        let url = server.url("/missing.png")
        let failure = Self.error(Self.outcome(of: make(FetchLimits()), url).0)
        XCTAssertEqual(failure?.0, .httpStatus(404, url: url.absoluteString))
        XCTAssertNil(failure?.1 ?? nil)
    }

    func unavailableCarriesRetryAfter() throws {
        let server = try TestServer()
        defer { server.stop() }
        server.route("/busy", HTTPResponse(status: 503, headers: [("Retry-After", "7")], body: .data(Data("later".utf8))))
        let url = server.url("/busy")
        let failure = Self.error(Self.outcome(of: make(FetchLimits()), url).0)
        XCTAssertEqual(failure?.0, .httpStatus(503, url: url.absoluteString))
        XCTAssertEqual(failure?.1 ?? nil, 7)
    }

    func shortBodyIsTruncated() throws {
        let server = try TestServer()
        defer { server.stop() }
        server.route("/short", HTTPResponse(status: 200, body: .truncated(Data(count: 1000), declaredLength: 5000)))
        let url = server.url("/short")
        let failure = Self.error(Self.outcome(of: make(FetchLimits()), url).0)
        XCTAssertEqual(failure?.0, .truncated(expected: 5000, received: 1000, url: url.absoluteString))
    }

    /// Returns the error, so callers can state how their fetcher names a reset.
    func resetMidBodyFails() throws -> ItemError? {
        let server = try TestServer()
        defer { server.stop() }
        server.route("/reset", HTTPResponse(status: 200, body: .reset(Data(count: 200_000))))
        let failure = Self.error(Self.outcome(of: make(FetchLimits()), server.url("/reset")).0)
        XCTAssertNotNil(failure, "a reset body must not pass as a body")
        XCTAssertTrue(failure?.0.isRetriable ?? false)
        return failure?.0
    }

    func hugeDeclaredBodyIsTooLargeAtOnce() throws {
        let server = try TestServer()
        defer { server.stop() }
        // Content-Length says 200 MB and no byte of body follows: failing from the header gives
        // too-large; reading the body first would end as truncated instead. No clock involved.
        server.route("/huge", HTTPResponse(status: 200, body: .truncated(Data(), declaredLength: 200 << 20)))
        let url = server.url("/huge")
        let (outcome, _) = Self.outcome(of: make(FetchLimits(maxBytes: 1 << 20)), url)
        XCTAssertEqual(Self.error(outcome)?.0, .tooLarge(limit: 1 << 20, url: url.absoluteString))
    }

    func contentLengthOverCapIsTooLarge() throws {
        let server = try TestServer()
        defer { server.stop() }
        server.route("/big", .png(Data(count: 2 << 20)))
        let url = server.url("/big")
        let (outcome, _) = Self.outcome(of: make(FetchLimits(maxBytes: 1 << 20)), url)
        XCTAssertEqual(Self.error(outcome)?.0, .tooLarge(limit: 1 << 20, url: url.absoluteString))
    }

    func bodyAtExactlyTheCapIsABody() throws {
        let server = try TestServer()
        defer { server.stop() }
        server.route("/fits", .png(Data(repeating: 1, count: 1 << 20)))
        let (outcome, _) = Self.outcome(of: make(FetchLimits(maxBytes: 1 << 20)), server.url("/fits"))
        guard case .body(let data, _, _)? = outcome else { return XCTFail("expected a body, got \(String(describing: outcome))") }
        XCTAssertEqual(data.count, 1 << 20)
    }

    /// Returns how many body bytes the server got to send, so callers can state whether their
    /// fetcher stops reading at the cap or only stops keeping what it reads.
    func unsizedBodyOverCapIsTooLarge() throws -> Int64 {
        let server = try UnsizedBodyServer(total: 200 << 20)
        let url = server.url("/endless.png")
        // Whether the fetcher stopped reading is told by the bytes the server got to send (the
        // callers' check), not by how long it took.
        let (outcome, _) = Self.outcome(of: make(FetchLimits(maxBytes: 1 << 20)), url)
        XCTAssertEqual(Self.error(outcome)?.0, .tooLarge(limit: 1 << 20, url: url.absoluteString))
        server.stop()
        return server.bytesSent
    }

    func unsizedBodyUnderCapIsABody() throws {
        let server = try UnsizedBodyServer(total: 100_000)
        defer { server.stop() }
        let (outcome, _) = Self.outcome(of: make(FetchLimits(maxBytes: 1 << 20)), server.url("/small.png"))
        guard case .body(let data, _, _)? = outcome else { return XCTFail("expected a body, got \(String(describing: outcome))") }
        XCTAssertEqual(data, Data(repeating: 0x2A, count: 100_000))
    }

    func redirectIsFollowedToFinalURL() throws {
        let server = try TestServer()
        defer { server.stop() }
        let served = Data("the new place".utf8)
        server.route("/old", .redirect(to: server.url("/new").absoluteString))
        server.route("/new", .png(served))
        let (outcome, _) = Self.outcome(of: make(FetchLimits()), server.url("/old"))
        guard case .body(let data, let finalURL, _)? = outcome else { return XCTFail("expected a body, got \(String(describing: outcome))") }
        XCTAssertEqual(data, served)
        XCTAssertEqual(finalURL, server.url("/new").absoluteString)
    }

    func redirectLoopIsTooManyRedirects() throws {
        let server = try TestServer()
        defer { server.stop() }
        server.route("/loop", .redirect(to: "/loop"))
        let url = server.url("/loop")
        let (outcome, _) = Self.outcome(of: make(FetchLimits(maxRedirects: 3)), url)
        XCTAssertEqual(Self.error(outcome)?.0, .tooManyRedirects(url: url.absoluteString))
        XCTAssertEqual(server.count("/loop"), 4, "the first request and three redirects")
    }

    func hangIsTimeout() throws {
        let server = try TestServer()
        defer { server.stop() }
        server.route("/hang", HTTPResponse(status: 200, body: .hang))
        let url = server.url("/hang")
        let (outcome, seconds) = Self.outcome(of: make(FetchLimits(timeout: 1)), url)
        XCTAssertEqual(Self.error(outcome)?.0, .timeout(seconds: 1, url: url.absoluteString))
        // The timeout is the behaviour under test: not before its 1 s (a slow machine can only
        // make it later), and loosely bounded above, by the 10 s outcome() waits, so that only a
        // fetcher that never times out fails, not a loaded machine.
        XCTAssertGreaterThan(seconds, 0.9)
    }

    func cancelEndsInCancelled() throws {
        let server = try TestServer()
        defer { server.stop() }
        server.route("/hang", HTTPResponse(status: 200, body: .hang))
        server.route("/after", .text(200, "after"))
        let fetcher = make(FetchLimits())
        let result = Locked<[FetchOutcome]>([])
        let done = DispatchSemaphore(value: 0)
        server.holdRequests()
        let task = fetcher.fetch(server.url("/hang")) { outcome in
            result.withLock { $0.append(outcome) }
            done.signal()
        }
        XCTAssertTrue(server.waitUntilInFlight(1))
        task.cancel()
        XCTAssertEqual(done.wait(timeout: .now() + 30), .success, "no completion after cancel")
        task.cancel()
        // A later request through the same transfer thread: once it completes, a second
        // completion for the cancelled task would already have been delivered.
        server.release()
        let (after, _) = Self.outcome(of: fetcher, server.url("/after"))
        guard case .body? = after else { return XCTFail("the barrier request failed: \(String(describing: after))") }
        let outcomes = result.withLock { $0 }
        XCTAssertEqual(outcomes.count, 1, "the completion runs exactly once")
        guard case .cancelled? = outcomes.first else { return XCTFail("expected .cancelled, got \(outcomes)") }
    }

    /// The caller bounds requests in flight; the fetcher's own bound is per host.
    func perHostLimitHoldsAtTheServer() throws {
        let server = try TestServer { .png(Data($0.path.utf8)) }
        defer { server.stop() }
        let fetcher = make(FetchLimits(concurrency: 16, perHost: 4))
        server.holdRequests()
        let bodies = Locked<[String]>([])
        let done = DispatchGroup()
        for index in 0..<10 {
            done.enter()
            _ = fetcher.fetch(server.url("/item/\(index)")) { outcome in
                if case .body(let data, _, _) = outcome { bodies.withLock { $0.append(String(decoding: data, as: UTF8.self)) } }
                done.leave()
            }
        }
        XCTAssertTrue(server.waitUntilInFlight(4))
        // A barrier instead of a fixed wait: a request to another host, made after the ten, goes
        // through the same transfer loop; by the time it completes the fetcher has started
        // every transfer it was going to start, so a fifth to the held host would be in flight.
        let other = try TestServer { _ in .png(Data("other".utf8)) }
        defer { other.stop() }
        let (barrier, _) = Self.outcome(of: fetcher, other.url("/barrier"))
        guard case .body? = barrier else { return XCTFail("the barrier request failed: \(String(describing: barrier))") }
        XCTAssertEqual(server.inFlight, 4, "a fifth request got past the limit")
        server.release()
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(Set(bodies.withLock { $0 }), Set((0..<10).map { "/item/\($0)" }))
        XCTAssertEqual(server.maxInFlight, 4)
    }

    /// Requests that alternate hosts, 8 in flight, reuse each host's connections: a cap on all
    /// connections made libcurl close one host's idle connection to open another's. Eight lanes
    /// each fetch 25 URLs one after another, every URL on the next host, as an operation of a
    /// catalog whose records alternate hosts does.
    func connectionsAreKeptPerHostWhenRequestsAlternateHosts() throws {
        let servers = try (0..<4).map { _ in try TestServer { .png(Data($0.path.utf8)) } }
        defer { servers.forEach { $0.stop() } }
        let fetcher = make(FetchLimits(concurrency: 8))
        let done = DispatchGroup()
        @Sendable func fetch(lane: Int, step: Int) {
            guard step < 25 else { return done.leave() }
            let index = lane * 25 + step
            _ = fetcher.fetch(servers[index % 4].url("/item/\(index)")) { _ in fetch(lane: lane, step: step + 1) }
        }
        for lane in 0..<8 {
            done.enter()
            fetch(lane: lane, step: 0)
        }
        XCTAssertEqual(done.wait(timeout: .now() + 20), .success)
        for (index, server) in servers.enumerated() {
            XCTAssertEqual(server.total, 50)
            XCTAssertLessThanOrEqual(server.connectionsAccepted, 8, "connections to host \(index)")
        }
    }
}
