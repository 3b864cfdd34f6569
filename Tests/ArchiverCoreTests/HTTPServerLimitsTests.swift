import Dispatch
import Foundation
import Glibc
import XCTest
@testable import ArchiverCore
@testable import ArchiverServer

/// Issue #16, item 9: what a client can hold of the built-in server is bounded: connections,
/// the time to send a request head, idle keep-alive time, and the threads it costs.
final class HTTPServerLimitsTests: XCTestCase {
    private func server(_ limits: HTTPServer.Limits = .init()) throws -> HTTPServer {
        let server = try HTTPServer(limits: limits) { .text(200, "you asked for \($0.path)") }
        server.start()
        return server
    }

    /// Waits (a bounded while) for `condition`, which the server's threads make true.
    private func eventually(_ condition: () -> Bool, within seconds: Double = 5) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition() {
            if Date() > deadline { return false }
            usleep(2_000)
        }
        return true
    }

    /// The default cap (no new API needed, so this also runs against the old server, where the
    /// 257th connection was served on a thread of its own like every other).
    func testOneConnectionOverTheDefaultCapIsAnswered503AndClosed() throws {
        let server = try server()
        defer { server.stop() }
        let cap = 256
        var held: [RawHTTPClient] = []
        for _ in 0..<cap {
            let client = try RawHTTPClient(port: server.port)
            client.get("/held")
            XCTAssertEqual(try client.readResponse().status, 200)
            held.append(client)
        }
        XCTAssertEqual(server.openConnections, cap)

        let extra = try RawHTTPClient(port: server.port)
        let answer = try extra.readResponse()
        XCTAssertEqual(answer.status, 503)
        XCTAssertEqual(answer.headers["connection"], "close")
        XCTAssertTrue(extra.waitForClose(), "the extra connection is closed at once")
        XCTAssertEqual(server.openConnections, cap)

        held.removeLast()  // closes one: its place is free again
        XCTAssertTrue(eventually { server.openConnections == cap - 1 })
        let next = try RawHTTPClient(port: server.port)
        next.get("/again")
        XCTAssertEqual(try next.readResponse().status, 200)
        XCTAssertGreaterThanOrEqual(server.refusedConnections, 1)
    }

    func testAConnectionThatSendsNoWholeHeadIsAnswered408AndClosedAfterTheHeaderTimeout() throws {
        let server = try server(.init(headerTimeout: 0.2, idleTimeout: 30))
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        let started = Date()
        client.send("GET /slow HTTP/1.1\r\nHost: 127.0.0.1\r\n")  // no blank line: the head never ends
        let answer = try client.readResponse()
        XCTAssertEqual(answer.status, 408)
        XCTAssertTrue(client.waitForClose())
        let elapsed = Date().timeIntervalSince(started)
        XCTAssertGreaterThanOrEqual(elapsed, 0.19)
        XCTAssertLessThan(elapsed, 4, "closed by the 0.2 s header timeout, not the client's 5 s")

        let silent = try RawHTTPClient(port: server.port)
        XCTAssertTrue(silent.waitForClose(), "a connection that sends nothing is closed too")
        XCTAssertTrue(eventually { server.openConnections == 0 })
    }

    func testAnIdleKeepAliveConnectionIsClosedAfterTheIdleTimeout() throws {
        let server = try server(.init(headerTimeout: 30, idleTimeout: 0.2))
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        client.get("/first")
        let first = try client.readResponse()
        XCTAssertEqual(first.headers["connection"], "keep-alive")
        let idleSince = Date()
        XCTAssertTrue(client.waitForClose(), "closed while idle")
        let idle = Date().timeIntervalSince(idleSince)
        XCTAssertGreaterThanOrEqual(idle, 0.19)
        XCTAssertLessThan(idle, 4, "closed by the 0.2 s idle timeout, not the client's 5 s")
        XCTAssertTrue(eventually { server.openConnections == 0 })
    }

    func testAKeepAliveConnectionInUseIsNotCutByTheIdleTimeout() throws {
        let server = try server(.init(headerTimeout: 30, idleTimeout: 0.3))
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        for index in 1...5 {
            client.get("/item/\(index)")
            XCTAssertEqual(String(decoding: try client.readResponse().body, as: UTF8.self), "you asked for /item/\(index)")
            usleep(100_000)  // under the idle timeout between requests
        }
        XCTAssertEqual(server.connectionCounts.accepted, 1)
    }

    func testAnAcceptedSocketIsClosedWhenItsThreadCannotStart() throws {
        let server = try HTTPServer(
            host: "127.0.0.1", port: 0, limits: .init(), startThread: { _ in false }
        ) { _ in .text(200, "never") }
        server.start()
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        client.get("/anything")
        XCTAssertTrue(client.waitForClose(), "closed, not left to sit in CLOSE_WAIT")
        XCTAssertTrue(eventually { server.refusedConnections == 1 })
        XCTAssertEqual(server.openConnections, 0)
    }

    func testThreadsDoNotGrowPastTheCap() throws {
        func threads() -> Int { (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? 0 }
        let server = try server(.init(maxConnections: 8))
        defer { server.stop() }
        let before = threads()
        var clients: [RawHTTPClient] = []
        for _ in 0..<40 { clients.append(try RawHTTPClient(port: server.port)) }
        XCTAssertTrue(eventually { server.connectionCounts.accepted == 40 })
        XCTAssertEqual(server.openConnections, 8)
        XCTAssertEqual(server.refusedConnections, 32)
        // 8 connection threads; some slack for threads Dispatch starts meanwhile (40 without the cap)
        XCTAssertLessThan(threads() - before, 20)
    }
}
