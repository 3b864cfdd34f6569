import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import ArchiverCore
@testable import ArchiverServer

final class PlaceholderImagesTests: XCTestCase {
    private static var session: URLSession { TestClient.session }

    /// Stands in for the PNG encoder: bytes that spell out what was asked for.
    private static func fakePNG(_ size: Int, _ red: UInt8, _ green: UInt8, _ blue: UInt8) -> Data {
        Data("fake-png \(size) \(red) \(green) \(blue)".utf8)
    }

    private let images = PlaceholderImages(encode: PlaceholderImagesTests.fakePNG)

    private func get(_ path: String) -> HTTPResponse {
        images.respond(to: HTTPRequest(method: "GET", path: path))
    }

    private func body(_ response: HTTPResponse) -> String? {
        guard case .data(let data) = response.body else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    func testSixDigitColourAnswersPNGOfThatSizeAndColour() {
        let response = get("/600/92c952")
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.header("content-type"), "image/png")
        XCTAssertEqual(body(response), "fake-png 600 146 201 82")
    }

    func testFiveAndFourDigitColoursAreLeftPaddedWithZero() {
        XCTAssertEqual(body(get("/150/61a65")), "fake-png 150 6 26 101")  // 061a65
        XCTAssertEqual(body(get("/150/abcd")), "fake-png 150 0 171 205")  // 00abcd
    }

    func testThreeDigitColourExpandsLikeCSS() {
        XCTAssertEqual(body(get("/10/aBc")), "fake-png 10 170 187 204")  // aabbcc
    }

    func testQueryStringIsIgnored() {
        XCTAssertEqual(body(get("/150/92c952?text=hello&x=1")), "fake-png 150 146 201 82")
    }

    func testBadColoursAre404() {
        for path in ["/150/92c95g", "/150/1234567", "/150/ab", "/150/", "/150/-12345", "/150/+abc"] {
            XCTAssertEqual(get(path).status, 404, path)
        }
    }

    func testBadSizesAre404() {
        for path in ["/0/abc", "/2001/abc", "/abc/abc", "/-5/abc", "/+5/abc", "/99999/abc", "//abc"] {
            XCTAssertEqual(get(path).status, 404, path)
        }
        XCTAssertEqual(get("/2000/abc").status, 200)
        XCTAssertEqual(get("/1/abc").status, 200)
    }

    func testOtherPathsAndMethodsAre404() {
        for path in ["/", "/150", "/150/abc/def", "/150/abc/", "150/abc"] {
            XCTAssertEqual(get(path).status, 404, path)
        }
        XCTAssertEqual(images.respond(to: HTTPRequest(method: "POST", path: "/150/abc")).status, 404)
    }

    func testRepeatedRequestsEncodeOnceAndAreByteIdentical() {
        let calls = Locked(0)
        let counted = PlaceholderImages { size, red, green, blue in
            calls.withLock { $0 += 1 }
            return Self.fakePNG(size, red, green, blue)
        }
        let first = counted.respond(to: HTTPRequest(method: "GET", path: "/600/92c952"))
        let second = counted.respond(to: HTTPRequest(method: "GET", path: "/600/92C952?again"))
        _ = counted.respond(to: HTTPRequest(method: "GET", path: "/150/92c952"))
        XCTAssertEqual(calls.withLock { $0 }, 2)
        XCTAssertEqual(counted.cachedImageCount, 2)
        XCTAssertEqual(body(first), body(second))
    }

    func testServedOverHTTP() async throws {
        let server = try HTTPServer(handler: images.respond(to:))
        server.start()
        defer { server.stop() }

        let (data, response) = try await Self.session.data(from: URL(string: server.baseURL + "/150/771796?x")!)
        let http = try XCTUnwrap(response as? HTTPURLResponse)
        XCTAssertEqual(http.statusCode, 200)
        XCTAssertEqual(http.value(forHTTPHeaderField: "Content-Type"), "image/png")
        XCTAssertEqual(data, Self.fakePNG(150, 0x77, 0x17, 0x96))

        let (_, missing) = try await Self.session.data(from: URL(string: server.baseURL + "/150/zzzzzz")!)
        XCTAssertEqual((missing as? HTTPURLResponse)?.statusCode, 404)
    }

    /// Issue #16, item 9: the cache used to keep every image ever asked for.
    /// (The default, 8192, is spelt out so this test also builds against the old server.)
    func testTheCacheKeepsAtMostItsDefaultNumberOfImages() {
        let cap = 8192
        for index in 0..<(cap + 500) {
            _ = images.respond(to: HTTPRequest(method: "GET", path: "/1/" + String(format: "%06x", index)))
        }
        XCTAssertEqual(images.cachedImageCount, cap)
    }

    func testTheCacheEvictsTheLeastRecentlyUsedWithinItsByteBudget() {
        let calls = Locked<[String]>([])
        let small = PlaceholderImages(maxCachedImages: 100, maxCachedBytes: 100) { size, red, green, blue in
            calls.withLock { $0.append("\(size)") }
            return Data(repeating: red, count: 40)
        }
        func get(_ size: Int) -> Data? {
            guard case .data(let data) = small.respond(to: HTTPRequest(method: "GET", path: "/\(size)/aaaaaa")).body else { return nil }
            return data
        }
        let first = get(1)
        _ = get(2)
        _ = get(1)  // 1 is now the most recent
        _ = get(3)  // 120 bytes would not fit: 2, the least recent, goes
        XCTAssertEqual(small.cachedImageCount, 2)
        XCTAssertEqual(small.cachedBytes, 80)
        XCTAssertEqual(get(1), first)
        _ = get(2)
        XCTAssertEqual(calls.withLock { $0 }, ["1", "2", "3", "2"], "1 stayed cached; 2 was made again")
    }
}
