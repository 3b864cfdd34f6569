import Foundation
import XCTest
@testable import ArchiverCore
@testable import ArchiverServer

/// Every way a real image host fails ends as a clear outcome, in bounded time, with no bad file.
final class FaultTests: XCTestCase {
    private let good = PNGEncoder.solid(width: 600, height: 600, red: 0x92, green: 0xC9, blue: 0x52)

    /// A server with the fault routes that logs when each request arrived.
    private func faultServer() throws -> (TestServer, Locked<[(path: String, at: Date)]>) {
        let faults = FaultRoutes(image: good)
        let log = Locked<[(path: String, at: Date)]>([])
        let server = try TestServer { request in
            log.withLock { $0.append((request.pathWithoutQuery, Date())) }
            return faults.respond(to: request) ?? Fixtures.images.respond(to: request)
        }
        return (server, log)
    }

    func testEveryFaultEndsAsItsOutcomeWithinBoundedRequests() throws {
        let (server, log) = try faultServer()
        let expectations: [(fault: String, kind: String?)] = [
            ("500-then-ok", nil), ("503-retry-after", nil), ("429-retry-after", nil), ("reset-then-ok", nil),
            ("redirect", nil), ("octet-stream", nil), ("truncated", "truncated"), ("corrupt-idat", "invalid-png"),
            ("html", "not-image"), ("jpeg", "invalid-jpeg"), ("empty", "not-image"), ("404", "http-status"), ("410", "http-status"),
            ("huge", "too-large"), ("hang", "timeout"), ("loop", "too-many-redirects"), ("giant", "invalid-png"),
        ]
        var records = Fixtures.records(8, firstID: 100)
        for (index, entry) in expectations.enumerated() {
            records.append(CatalogRecord(albumId: 9, id: RecordID(index + 1), title: entry.fault, url: "\(Fixtures.host)/fault/\(entry.fault)/\(index)", thumbnailUrl: ""))
        }
        let out = Fixtures.temporaryDirectory(self)
        var config = Fixtures.configuration(out: out, server: server, concurrency: 8)
        config.retries = 3
        config.timeout = 1
        // Bounded time is shown by the run returning at all (the hang ends by the 1 s timeout,
        // the loop by the redirect cap), not by a wall-clock limit that a loaded machine breaks.
        let summary = try Fixtures.run(config, catalog: Fixtures.catalog(records))

        let items = Dictionary(uniqueKeysWithValues: try Fixtures.manifest(in: out).items.map { ($0.id, $0) })
        for (index, entry) in expectations.enumerated() {
            let item = try XCTUnwrap(items[RecordID(index + 1)])
            let file = out.appendingPathComponent("images/\(index + 1).png")
            if let kind = entry.kind {
                XCTAssertEqual(item.status, .failed, entry.fault)
                XCTAssertEqual(item.error?.kind, kind, "\(entry.fault): \(item.error?.message ?? "")")
                XCTAssertFalse(FileManager.default.fileExists(atPath: file.path), "\(entry.fault) left a file")
            } else {
                XCTAssertEqual(item.status, .done, "\(entry.fault): \(item.error?.message ?? "")")
                XCTAssertEqual(try? Data(contentsOf: file), good, entry.fault)
            }
        }
        XCTAssertEqual(items[12]?.error?.status, 404)
        XCTAssertEqual(items[13]?.error?.status, 410)
        XCTAssertEqual(summary.done, 8 + 6)
        XCTAssertEqual(summary.failed, 11)
        XCTAssertEqual(server.count("/fault/404/11"), 1)
        XCTAssertEqual(server.count("/fault/410/12"), 1)
        XCTAssertEqual(items[1]?.attempts, 3, "500 twice, then the image")
        let requests = log.withLock { $0 }
        for (path, hits) in Dictionary(grouping: requests, by: \.path) where !path.hasPrefix("/fault/loop/") {
            XCTAssertLessThanOrEqual(hits.count, 4, path)
        }
        for fault in ["503-retry-after/1", "429-retry-after/2"] {
            let times = requests.filter { $0.path == "/fault/\(fault)" }.map(\.at)
            XCTAssertEqual(times.count, 2, fault)
            if times.count == 2 {
                // A lower bound only: a slow machine can only make the gap longer.
                XCTAssertGreaterThanOrEqual(times[1].timeIntervalSince(times[0]), 0.95, "\(fault): retried before its Retry-After")
            }
        }
    }

    /// `serve --faults` counts requests per path for the faults that clear up; a client asking
    /// for endless distinct paths grew that table without end. It keeps 65,536 paths, forgetting
    /// the oldest, so the paths of a run (the tests', the demo's) misbehave as they always did.
    func testTheFaultRoutesCountAtMost65536PathsAndTheNewestStillClearUp() {
        let faults = FaultRoutes(image: good)
        func status(_ path: String) -> Int? { faults.respond(to: HTTPRequest(method: "GET", path: path))?.status }
        let cap = 65_536
        XCTAssertEqual([status("/fault/500-then-ok/first"), status("/fault/500-then-ok/first")], [500, 500])
        for index in 0..<(cap + 1000) {
            XCTAssertEqual(status("/fault/500-then-ok/\(index)"), 500)
        }
        XCTAssertEqual(faults.countedPaths, cap)
        for index in 0..<1000 { _ = status("/fault/404/\(index)") }
        XCTAssertEqual(faults.countedPaths, cap, "a fault that counts nothing keeps no count")
        // The newest paths go on as ever: 500 twice, then the image; the oldest was forgotten
        // and starts over.
        let newest = "/fault/500-then-ok/\(cap + 999)"
        XCTAssertEqual([status(newest), status(newest)], [500, 200])
        XCTAssertEqual([status("/fault/reset-then-ok/x"), status("/fault/reset-then-ok/x")], [200, 200])
        XCTAssertEqual(status("/fault/500-then-ok/first"), 500)
        XCTAssertEqual(faults.countedPaths, cap)
    }

    /// The operations hand back how many requests each URL took; the run's count is their sum.
    func testEveryAttemptCountsAsARequestRetriesIncluded() throws {
        let (server, _) = try faultServer()
        let records = [(1, "500-then-ok"), (2, "404")].map { id, fault in
            CatalogRecord(albumId: 9, id: RecordID(id), title: fault, url: "\(Fixtures.host)/fault/\(fault)/\(id)", thumbnailUrl: "")
        }
        var config = Fixtures.configuration(out: Fixtures.temporaryDirectory(self), server: server)
        config.retries = 3
        let summary = try Fixtures.run(config, catalog: Fixtures.catalog(records))
        XCTAssertEqual(summary.done, 1)
        XCTAssertEqual(server.total, 4, "500 twice, then the image; the 404 once")
        XCTAssertEqual(summary.progress.requests, 4)
    }

    func testARetryAfterBeyondTheCapFailsAtOnceInsteadOfWaiting() throws {
        let server = try Fixtures.placeholderServer()
        server.route("/600/000503", HTTPResponse(status: 503, headers: [("Retry-After", "3600")]))
        let out = Fixtures.temporaryDirectory(self)
        let started = Date()
        _ = try Fixtures.run(Fixtures.configuration(out: out, server: server), catalog: Fixtures.catalog([Fixtures.record(1, colour: "000503")]))
        // Not waiting is the behaviour under test: bounded loosely, at a sixtieth of the 3600 s
        // the server asked for, so only a wait that honoured it can fail this.
        XCTAssertLessThan(Date().timeIntervalSince(started), 60)
        let item = try XCTUnwrap(Fixtures.manifest(in: out).items.first)
        XCTAssertEqual(item.error?.kind, "http-status")
        XCTAssertTrue(item.error?.message.contains("Retry-After 3600 s") == true, item.error?.message ?? "")
        XCTAssertEqual(server.count("/600/000503"), 1)
    }

    /// Issue #16: one of these headers used to trap converting Double to Int, killing the run
    /// (SIGILL, no manifest) on every rerun; each must end as its item's failure instead.
    func testAnAbsurdRetryAfterFailsItsItemInsteadOfCrashingTheRun() throws {
        let server = try Fixtures.placeholderServer()
        let values = ["inf", "1e300", "99999999999999999999", "120.5", "nan"]
        var records: [CatalogRecord] = []
        for (index, value) in values.enumerated() {
            let colour = String(format: "00050%d", index)
            server.route("/600/\(colour)", HTTPResponse(status: 503, headers: [("Retry-After", value)]))
            records.append(Fixtures.record(index + 1, colour: colour))
        }
        let dir = Fixtures.temporaryDirectory(self)
        let catalog = try Fixtures.writeCatalog(records, to: dir.appendingPathComponent("c.json"))
        let out = dir.appendingPathComponent("out")
        let run = try CommandRunner.run([
            "run", "--catalog", catalog, "--out", out.path, "--retries", "1", "--quiet",
            "--mirror", "\(Fixtures.host)=\(server.baseURL)",
        ])
        XCTAssertEqual(run.status, 1, "every item fails, the run does not: \(run.stderr)")
        let messages = try Fixtures.manifest(in: out).items.map { $0.error?.message ?? "" }
        XCTAssertEqual(messages.count, values.count)
        guard messages.count == values.count else { return }
        XCTAssertFalse(messages[0].contains("Retry-After"), "inf is no Retry-After: \(messages[0])")
        XCTAssertTrue(messages[1].contains("Retry-After 1e+300 s is beyond the 120 s cap"), messages[1])
        XCTAssertTrue(messages[2].contains("Retry-After 1e+20 s is beyond the 120 s cap"), messages[2])
        XCTAssertTrue(messages[3].contains("Retry-After 120.5 s is beyond the 120 s cap"), messages[3])
        XCTAssertFalse(messages[4].contains("Retry-After"), "nan is no Retry-After: \(messages[4])")
    }

    func testRetryAfterIsAlwaysFiniteAndItsCapNoteShowsTheValueSent() {
        XCTAssertNil(parseRetryAfter("inf"))
        XCTAssertNil(parseRetryAfter("-infinity"))
        XCTAssertNil(parseRetryAfter("nan"))
        XCTAssertEqual(parseRetryAfter("1e300"), 1e300)
        XCTAssertEqual(parseRetryAfter("99999999999999999999"), 1e20)
        XCTAssertEqual(retryAfterBeyondCapNote(120.5, cap: 120), "Retry-After 120.5 s is beyond the 120 s cap")
        XCTAssertEqual(retryAfterBeyondCapNote(3600, cap: 120), "Retry-After 3600 s is beyond the 120 s cap")
        XCTAssertEqual(retryAfterBeyondCapNote(.greatestFiniteMagnitude, cap: 0.5), "Retry-After 1.7976931348623157e+308 s is beyond the 0.5 s cap")
    }

    func testABodyOverMaxBytesFailsAsTooLargeWithoutARetry() throws {
        let server = try Fixtures.placeholderServer()
        let out = Fixtures.temporaryDirectory(self)
        var config = Fixtures.configuration(out: out, server: server)
        config.maxBytes = 100
        config.retries = 3
        let summary = try Fixtures.run(config, catalog: Fixtures.catalog(Fixtures.records(1)))
        XCTAssertEqual(summary.failuresByKind, ["too-large": 1])
        XCTAssertEqual(server.total, 1)
    }

    func testRequestsCarryTheArchiverUserAgent() throws {
        let server = try Fixtures.placeholderServer()
        let out = Fixtures.temporaryDirectory(self)
        _ = try Fixtures.run(Fixtures.configuration(out: out, server: server), catalog: Fixtures.catalog(Fixtures.records(1)))
        XCTAssertEqual(server.requests.first?.headers["user-agent"], "archiver/\(ArchiverVersion.current)")
    }

    func testBackoffDoublesUpToTheCapAndNeverComesBeforeRetryAfter() {
        let backoff = Backoff(base: 0.25, cap: 8, jitter: { 1 })
        XCTAssertEqual((1...7).map { backoff.delay(afterAttempt: $0) }, [0.25, 0.5, 1, 2, 4, 8, 8])
        XCTAssertEqual(backoff.delay(afterAttempt: 1, retryAfter: 5), 5)
        XCTAssertEqual(backoff.delay(afterAttempt: 6, retryAfter: 1), 8)
        let jittered = Backoff(base: 0.25, cap: 8, jitter: { 0.5 })
        XCTAssertEqual(jittered.delay(afterAttempt: 3), 0.5)
    }

    /// The defaults are the README's numbers, written here rather than read from the type: 0.25 s
    /// doubling to 8 s, jittered down to at most half.
    func testBackoffDefaultsAreAQuarterSecondDoublingToEightSeconds() {
        let unjittered = Backoff(jitter: { 1 })
        XCTAssertEqual((1...8).map { unjittered.delay(afterAttempt: $0) }, [0.25, 0.5, 1, 2, 4, 8, 8, 8])
        XCTAssertEqual(unjittered.delay(afterAttempt: 100), 8)
        for attempt in [1, 3, 100] {
            let delay = Backoff().delay(afterAttempt: attempt)
            let ceiling = [1: 0.25, 3: 1.0, 100: 8.0][attempt]!
            XCTAssertGreaterThanOrEqual(delay, ceiling / 2, "attempt \(attempt)")
            XCTAssertLessThanOrEqual(delay, ceiling, "attempt \(attempt)")
        }
    }

    func testRetryAfterParsesSecondsAndHTTPDates() {
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        XCTAssertEqual(parseRetryAfter("7", now: now), 7)
        XCTAssertEqual(parseRetryAfter(" 120 ", now: now), 120)
        XCTAssertEqual(parseRetryAfter("Tue, 14 Nov 2023 22:13:40 GMT", now: now), 20)
        XCTAssertEqual(parseRetryAfter("Tue, 14 Nov 2023 22:00:00 GMT", now: now), 0, "a date in the past means now")
        XCTAssertNil(parseRetryAfter("soon", now: now))
        XCTAssertNil(parseRetryAfter("-3", now: now))
    }

    func testRateLimiterSpacesRequestsAfterAOneSecondBurst() {
        let clock = Locked<UInt64>(1_000_000_000)
        let limiter = RateLimiter(rate: 4) { clock.withLock { $0 } }
        XCTAssertEqual((0..<4).map { _ in limiter.reserve() }, [0, 0, 0, 0])
        XCTAssertEqual(limiter.reserve(), 0.25, accuracy: 1e-9)
        XCTAssertEqual(limiter.reserve(), 0.5, accuracy: 1e-9)
        clock.withLock { $0 += 2_000_000_000 }
        XCTAssertEqual(limiter.reserve(), 0, "two seconds later the bucket is full again")
    }
}
