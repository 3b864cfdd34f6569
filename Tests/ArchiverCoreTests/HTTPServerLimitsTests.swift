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

    /// Waits for `condition`, which the server's threads make true (the bound only turns a
    /// condition that never comes into a failure).
    private func eventually(_ condition: () -> Bool, within seconds: Double = 30) -> Bool {
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
        let server = try server(.init(headerTimeout: 0.2, idleTimeout: 300))
        defer { server.stop() }
        // The timeout is the behaviour under test, so it is bounded, loosely: not before its
        // 0.2 s (a slow machine can only make it later), and under the client's own 60 s receive
        // timeout, which is all that could otherwise end the wait; a 408 says which ended it.
        let client = try RawHTTPClient(port: server.port, timeout: 60)
        let started = ContinuousClock.now
        client.send("GET /slow HTTP/1.1\r\nHost: 127.0.0.1\r\n")  // no blank line: the head never ends
        let answer = try client.readResponse()
        XCTAssertEqual(answer.status, 408)
        XCTAssertTrue(client.waitForClose())
        XCTAssertGreaterThanOrEqual(ContinuousClock.now - started, .milliseconds(190))

        let silent = try RawHTTPClient(port: server.port)
        XCTAssertTrue(silent.waitForClose(), "a connection that sends nothing is closed too")
        XCTAssertTrue(eventually { server.openConnections == 0 })
    }

    func testAnIdleKeepAliveConnectionIsClosedAfterTheIdleTimeout() throws {
        let server = try server(.init(headerTimeout: 300, idleTimeout: 0.2))
        defer { server.stop() }
        // Bounded loosely, as the header timeout above: at least 0.2 s, and closed by the server
        // (waitForClose sees the close) before the client's 60 s receive timeout.
        let client = try RawHTTPClient(port: server.port, timeout: 60)
        client.get("/first")
        let first = try client.readResponse()
        XCTAssertEqual(first.headers["connection"], "keep-alive")
        let idleSince = ContinuousClock.now
        XCTAssertTrue(client.waitForClose(), "closed while idle")
        XCTAssertGreaterThanOrEqual(ContinuousClock.now - idleSince, .milliseconds(190))
        XCTAssertTrue(eventually { server.openConnections == 0 })
    }

    func testAKeepAliveConnectionInUseIsNotCutByTheIdleTimeout() throws {
        // No sleep between requests: they go back to back until the connection has lived three
        // idle timeouts. Only a gap of a whole 0.5 s between two of them (a machine stalled that
        // long) could let it be cut; a timer counting from the connection's start cuts it always.
        let server = try server(.init(headerTimeout: 30, idleTimeout: 0.5))
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        let opened = ContinuousClock.now
        var index = 0
        while ContinuousClock.now - opened < .milliseconds(1500) {
            index += 1
            client.get("/item/\(index)")
            XCTAssertEqual(String(decoding: try client.readResponse().body, as: UTF8.self), "you asked for /item/\(index)")
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

    /// The server's own connection threads, counted where it starts them (the whole process's
    /// thread count also moves with Dispatch and other tests).
    func testThreadsDoNotGrowPastTheCap() throws {
        let started = Locked(0)
        let server = try HTTPServer(host: "127.0.0.1", port: 0, limits: .init(maxConnections: 8), startThread: { body in
            started.withLock { $0 += 1 }
            return HTTPServer.startDetachedThread(body)
        }) { .text(200, "you asked for \($0.path)") }
        server.start()
        defer { server.stop() }
        var clients: [RawHTTPClient] = []
        for _ in 0..<40 { clients.append(try RawHTTPClient(port: server.port)) }
        XCTAssertTrue(eventually { server.connectionCounts.accepted == 40 })
        XCTAssertEqual(server.openConnections, 8)
        XCTAssertEqual(server.refusedConnections, 32)
        XCTAssertEqual(started.withLock { $0 }, 8, "one thread per admitted connection, none for the 32 refused")
    }
}
