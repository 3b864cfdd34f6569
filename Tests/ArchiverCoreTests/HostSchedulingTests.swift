import Foundation
import XCTest
@testable import ArchiverCore
@testable import ArchiverServer

/// Catalogs spread over several hosts: connections kept per host, `--per-host`, and a slow host
/// holding up only its own share of the work.
final class HostSchedulingTests: XCTestCase {
    /// `count` placeholder servers and a catalog whose record i lives on host i mod count, under
    /// its own catalog host name mirrored to that server.
    private func hosts(_ count: Int, records: Int) throws -> (servers: [TestServer], catalog: Catalog, mirrors: MirrorMap) {
        let servers = try (0..<count).map { _ in try Fixtures.placeholderServer() }
        let list = Fixtures.records(records).enumerated().map { index, record in
            var record = record
            record.url = record.url.replacingOccurrences(of: Fixtures.host, with: "https://h\(index % count).example")
            return record
        }
        let mirrors = MirrorMap(servers.indices.map { (from: "https://h\($0).example", to: servers[$0].baseURL) })
        return (servers, try Fixtures.catalog(list), mirrors)
    }

    /// Before, libcurl's total connection cap made a request to one host close an idle
    /// connection to another, so a catalog alternating hosts reconnected for nearly every image.
    func testConnectionsAreKeptPerHostWhenTheCatalogAlternatesHosts() throws {
        let (servers, catalog, mirrors) = try hosts(4, records: 400)
        let out = Fixtures.temporaryDirectory(self)
        var config = Fixtures.configuration(out: out, server: servers[0], concurrency: 8)
        config.mirrors = mirrors
        let summary = try Fixtures.run(config, catalog: catalog)
        XCTAssertEqual(summary.done, 400)
        for (index, server) in servers.enumerated() {
            XCTAssertEqual(server.total, 100, "host \(index)")
            // 8 in flight over 4 hosts: each host keeps its lanes' connections, never more than
            // the 8 requests in flight need. One per request would be 100 (it was 33 to 45).
            XCTAssertLessThanOrEqual(server.connectionsAccepted, 8, "connections to host \(index)")
        }
    }

    /// With `--per-host 2`, a host whose requests hang gets 2 and no more, and the other host's
    /// records are all fetched meanwhile: the feed gives free slots to hosts that have room.
    func testPerHostLimitKeepsOtherHostsBusyWhileOneHangs() throws {
        let (servers, catalog, mirrors) = try hosts(2, records: 60)
        let (slow, fast) = (servers[0], servers[1])
        let out = Fixtures.temporaryDirectory(self)
        var config = Fixtures.configuration(out: out, server: slow, concurrency: 8)
        config.mirrors = mirrors
        config.perHost = 2
        slow.holdRequests()
        let finished = DispatchSemaphore(value: 0)
        let result = Locked<Result<RunSummary, any Error>?>(nil)
        let configuration = config
        Thread {
            result.withLock { $0 = Result { try Fixtures.run(configuration, catalog: catalog) } }
            finished.signal()
        }.start()

        XCTAssertTrue(slow.waitUntilInFlight(2), "the slow host gets its 2 requests")
        XCTAssertTrue(fast.waitUntilTotal(30), "every record of the other host is fetched while the slow one hangs")
        XCTAssertEqual(slow.inFlight, 2)
        XCTAssertEqual(slow.total, 2, "no third request went to the held host")
        slow.release()
        XCTAssertEqual(finished.wait(timeout: .now() + 20), .success)
        let summary = try XCTUnwrap(result.withLock { $0 }).get()
        XCTAssertEqual(summary.done, 60)
        XCTAssertEqual(slow.maxInFlight, 2)
        XCTAssertLessThanOrEqual(fast.maxInFlight, 2)
        XCTAssertLessThanOrEqual(slow.peakConnections, 2)
        XCTAssertLessThanOrEqual(fast.peakConnections, 2)
    }

    func testHostKeyIsSchemeHostAndPortLowercased() {
        XCTAssertEqual(HostLanes.host(of: "https://IMG.Example.com:8443/600/a?x=1"), "https://img.example.com:8443")
        XCTAssertEqual(HostLanes.host(of: "http://127.0.0.1:80?q"), "http://127.0.0.1:80")
        XCTAssertEqual(HostLanes.host(of: "http://h"), "http://h")
        XCTAssertNotEqual(HostLanes.host(of: "http://h/x"), HostLanes.host(of: "https://h/x"))
    }

    /// A free slot goes to the host whose next job comes first in the plan, never to a host at
    /// its `perHost` limit.
    func testLanesServeHostsInPlanOrderAndRespectThePerHostLimit() {
        var lanes = HostLanes(perHost: 2, readAheadLimit: 100)
        func job(_ host: String, _ n: Int) -> FetchJob {
            FetchJob(address: "http://\(host)/\(n)", targets: [.init(id: RecordID(n), position: Int32(n), url: "u\(n)")])
        }
        // Plan order: a0 a1 b2 a3 b4 b5
        for (n, host) in ["a", "a", "b", "a", "b", "b"].enumerated() { lanes.add(job(host, n), index: n) }
        XCTAssertEqual(lanes.buffered, 6)
        XCTAssertEqual(lanes.next?.host, "http://a")
        XCTAssertEqual(lanes.take(upTo: 2)?.jobs.map(\.targets[0].id), [0, 1])
        XCTAssertEqual(lanes.next?.host, "http://b", "b's next job (2) comes before a's (3)")
        XCTAssertEqual(lanes.take(upTo: 1)?.jobs.map(\.targets[0].id), [2])
        XCTAssertEqual(lanes.take(upTo: 1)?.jobs.map(\.targets[0].id), [3])
        XCTAssertEqual(lanes.take(upTo: 1)?.jobs.map(\.targets[0].id), [4])
        XCTAssertNil(lanes.take(upTo: 1), "a has no jobs left, b is at its limit of 2")
        lanes.finished("http://b")
        XCTAssertEqual(lanes.take(upTo: 1)?.jobs.map(\.targets[0].id), [5])
        XCTAssertEqual(lanes.buffered, 0)
        XCTAssertNil(lanes.next)
    }
}
