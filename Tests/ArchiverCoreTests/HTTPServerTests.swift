import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import ArchiverCore
@testable import ArchiverServer

final class HTTPServerTests: XCTestCase {
    private var session: URLSession { TestClient.session }

    func testServesBodyWithContentTypeAndContentLength() async throws {
        let server = try TestServer()
        defer { server.stop() }
        server.route("/hello", .text(200, "hello, world"))

        let (data, response) = try await session.data(from: server.url("/hello"))
        let http = try XCTUnwrap(response as? HTTPURLResponse)
        XCTAssertEqual(http.statusCode, 200)
        XCTAssertEqual(http.value(forHTTPHeaderField: "Content-Type"), "text/plain; charset=utf-8")
        XCTAssertEqual(http.value(forHTTPHeaderField: "Content-Length"), "12")
        XCTAssertEqual(String(decoding: data, as: UTF8.self), "hello, world")
        XCTAssertEqual(server.count("/hello"), 1)
    }

    func testEphemeralPortIsReadBackIntoBaseURL() throws {
        let server = try HTTPServer { _ in .text(200, "") }
        defer { server.stop() }
        XCTAssertGreaterThan(server.port, 0)
        XCTAssertEqual(server.baseURL, "http://127.0.0.1:\(server.port)")
    }

    func testBindingAPortInUseThrowsAddressInUse() throws {
        let first = try HTTPServer { _ in .text(200, "") }
        defer { first.stop() }
        XCTAssertThrowsError(try HTTPServer(port: UInt16(first.port)) { _ in .text(200, "") }) { error in
            XCTAssertEqual(error as? HTTPServer.Error, .addressInUse(host: "127.0.0.1", port: UInt16(first.port)))
            XCTAssertTrue("\(error)".contains("address already in use"))
        }
    }

    func testInvalidHostThrows() {
        XCTAssertThrowsError(try HTTPServer(host: "localhost") { _ in .text(200, "") }) { error in
            XCTAssertEqual(error as? HTTPServer.Error, .invalidHost("localhost"))
        }
    }

    func testKeepAliveServesSeveralRequestsOnOneConnection() throws {
        let server = try TestServer { .text(200, "you asked for \($0.path)") }
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)

        for index in 1...3 {
            client.get("/item/\(index)")
            let response = try client.readResponse()
            XCTAssertEqual(response.status, 200)
            XCTAssertEqual(response.headers["connection"], "keep-alive")
            XCTAssertEqual(String(decoding: response.body, as: UTF8.self), "you asked for /item/\(index)")
        }
        XCTAssertEqual(server.total, 3)
    }

    func testPipelinedRequestsAreAnsweredInOrder() throws {
        let server = try TestServer { .text(200, $0.path) }
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)

        client.send("GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n")
        XCTAssertEqual(String(decoding: try client.readResponse().body, as: UTF8.self), "/a")
        XCTAssertEqual(String(decoding: try client.readResponse().body, as: UTF8.self), "/b")
    }

    func testConnectionCloseIsHonoured() throws {
        let server = try TestServer { _ in .text(200, "bye") }
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)

        client.get("/", headers: ["Connection: close"])
        let response = try client.readResponse()
        XCTAssertEqual(response.headers["connection"], "close")
        XCTAssertTrue(client.waitForClose())
    }

    func testRequestBodyIsSkippedAndHeadersAreLowercased() throws {
        let server = try TestServer { .text(200, $0.method + " " + $0.path) }
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)

        client.send("POST /form?x=1 HTTP/1.1\r\nHost: x\r\nX-Custom-Thing: Yes\r\nContent-Length: 5\r\n\r\nhello")
        XCTAssertEqual(String(decoding: try client.readResponse().body, as: UTF8.self), "POST /form?x=1")
        client.get("/next")
        XCTAssertEqual(String(decoding: try client.readResponse().body, as: UTF8.self), "GET /next")

        let first = try XCTUnwrap(server.requests.first)
        XCTAssertEqual(first.headers["x-custom-thing"], "Yes")
        XCTAssertEqual(first.path, "/form?x=1")
    }

    func testHeadSendsHeadersWithoutBody() throws {
        let server = try TestServer { _ in .text(200, "twelve bytes") }
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)

        client.send("HEAD / HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n")
        let head = try client.readResponse(bodyExpected: false)
        XCTAssertEqual(head.headers["content-length"], "12")
        XCTAssertEqual(String(decoding: try client.readResponse().body, as: UTF8.self), "twelve bytes")
    }

    func testMalformedRequestGets400AndClose() throws {
        let server = try TestServer()
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)

        client.send("NONSENSE\r\n\r\n")
        XCTAssertEqual(try client.readResponse().status, 400)
        XCTAssertTrue(client.waitForClose())
        XCTAssertEqual(server.total, 0)
    }

    func testTwentyFourConcurrentRequestsAreAllInFlightAndAnswered() async throws {
        let server = try TestServer { .text(200, $0.path) }
        defer { server.stop() }
        server.holdRequests()
        let count = 24
        let session = self.session

        async let bodies = withThrowingTaskGroup(of: String.self) { group in
            for index in 0..<count {
                group.addTask {
                    let (data, _) = try await session.data(from: server.url("/n/\(index)"))
                    return String(decoding: data, as: UTF8.self)
                }
            }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        let allArrived = await Task.detached { server.waitUntilInFlight(count, timeout: 10) }.value
        XCTAssertTrue(allArrived, "only \(server.inFlight) of \(count) requests reached the handler")
        server.release()

        let answered = try await bodies
        XCTAssertEqual(answered, Set((0..<count).map { "/n/\($0)" }))
        XCTAssertEqual(server.maxInFlight, count)
        XCTAssertEqual(server.total, count)
    }

    func testSixtyFourConnectionsAreServedAtOnce() throws {
        let server = try TestServer { .text(200, $0.path) }
        defer { server.stop() }
        server.holdRequests()
        let clients = try (0..<64).map { _ in try RawHTTPClient(port: server.port) }
        for (index, client) in clients.enumerated() { client.get("/c/\(index)") }

        XCTAssertTrue(server.waitUntilInFlight(64, timeout: 10), "only \(server.inFlight) in flight")
        server.release()
        for (index, client) in clients.enumerated() {
            XCTAssertEqual(String(decoding: try client.readResponse().body, as: UTF8.self), "/c/\(index)")
        }
    }

    func testTruncatedBodyGivesClientAnErrorOrShortBody() async throws {
        let server = try TestServer()
        defer { server.stop() }
        server.route("/short", HTTPResponse(status: 200, body: .truncated(Data(repeating: 7, count: 100), declaredLength: 1000)))

        do {
            let (data, _) = try await session.data(from: server.url("/short"))
            XCTAssertLessThan(data.count, 1000, "a truncated body must not look whole")
        } catch {
            // Expected: libcurl reports "transfer closed with 900 bytes remaining to read".
        }
        let raw = try RawHTTPClient(port: server.port)
        raw.get("/short")
        XCTAssertThrowsError(try raw.readResponse())
    }

    func testResetGivesClientAnError() async throws {
        let server = try TestServer()
        defer { server.stop() }
        server.route("/reset", HTTPResponse(status: 200, body: .reset(Data(repeating: 1, count: 10_000))))

        do {
            let (data, _) = try await session.data(from: server.url("/reset"))
            XCTAssertLessThan(data.count, 10_000, "a reset body must not look whole")
        } catch {
            // Expected: libcurl reports "Connection reset by peer".
        }
        let raw = try RawHTTPClient(port: server.port)
        raw.get("/reset")
        XCTAssertThrowsError(try raw.readResponse())
    }

    func testStreamSendsTotalLengthByRepeatingChunk() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let total: Int64 = 1_000_003
        server.route("/big", HTTPResponse(status: 200, body: .stream(chunk: Data("abc".utf8), totalLength: total)))

        let (data, response) = try await session.data(from: server.url("/big"))
        XCTAssertEqual((response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Length"), "\(total)")
        XCTAssertEqual(Int64(data.count), total)
        XCTAssertEqual(data.prefix(6), Data("abcabc".utf8))
        XCTAssertEqual(data.suffix(4), Data("abca".utf8))  // 1_000_003 = 3 * 333_334 + 1
    }

    func testRedirectIsFollowedByTheClient() async throws {
        let server = try TestServer()
        defer { server.stop() }
        server.route("/old", .redirect(to: "/new"))
        server.route("/new", .text(200, "moved here"))

        let (data, _) = try await session.data(from: server.url("/old"))
        XCTAssertEqual(String(decoding: data, as: UTF8.self), "moved here")
        XCTAssertEqual(server.count("/old"), 1)
        XCTAssertEqual(server.count("/new"), 1)
    }

    func testHangIsUnblockedByStop() throws {
        let server = try TestServer()
        let arrived = DispatchSemaphore(value: 0)
        server.route("/hang") { _ in
            arrived.signal()
            return HTTPResponse(status: 200, body: .hang)
        }
        let client = try RawHTTPClient(port: server.port, timeout: 10)
        client.get("/hang")
        client.get("/after-hang")  // Pipelined behind the hang; must never be answered.
        XCTAssertEqual(arrived.wait(timeout: .now() + 30), .success)

        let stopped = expectation(description: "stop returned")
        DispatchQueue.global().async {
            server.stop()
            stopped.fulfill()
        }
        XCTAssertTrue(client.waitForClose(), "stop() must close a hanging connection")
        wait(for: [stopped], timeout: 10)
        XCTAssertEqual(server.count("/after-hang"), 0)
    }

    func testStopTwiceAndStopBeforeStartAreFine() throws {
        let server = try HTTPServer { _ in .text(200, "") }
        server.stop()
        server.stop()
        server.start()  // After stop: does nothing.

        let running = try TestServer()
        running.stop()
        running.stop()
        XCTAssertThrowsError(try RawHTTPClient(port: running.port), "the listener must be closed")
    }

    func testManyServersStartAndStop() throws {
        for _ in 0..<50 {
            let server = try TestServer()
            let client = try RawHTTPClient(port: server.port)
            client.get("/")
            XCTAssertEqual(try client.readResponse().status, 404)
            server.stop()
            XCTAssertTrue(client.waitForClose())
        }
    }
}
