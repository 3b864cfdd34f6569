import CCurl
import Foundation
import XCTest
@testable import ArchiverCore
@testable import ArchiverServer

/// Answers a hostile or broken server gives end as a clear failure of their own, named with the
/// URL that caused it, and are not tried again.
final class HostileResponseTests: XCTestCase {
    private func failure(_ url: URL) -> ItemError? {
        FetcherChecks.error(FetcherChecks.outcome(of: Fixtures.fetcher(for: RunConfiguration()), url).0)?.0
    }

    func testARedirectToAnotherSchemeIsInvalidURLNamingTheFinalURL() throws {
        let server = try TestServer()
        defer { server.stop() }
        for target in ["file:///etc/passwd", "ftp://127.0.0.1/x.png", "gopher://127.0.0.1/x"] {
            server.route("/away", .redirect(to: target))
            let error = failure(server.url("/away"))
            XCTAssertEqual(error?.kind, "invalid-url", "\(target): \(String(describing: error))")
            XCTAssertEqual(error?.isRetriable, false)
            XCTAssertTrue(error?.description.contains(target) ?? false, "\(String(describing: error))")
            XCTAssertTrue(error?.description.contains(server.url("/away").absoluteString) ?? false, "\(String(describing: error))")
        }
    }

    /// A redirect's message names the final URL cut to 1024 bytes, never inside a character:
    /// libcurl keeps a user name's or a fragment's UTF-8 as it is in the URL it reports, and a cut
    /// through a character left U+FFFD in the journal and the manifest. ASCII is cut as before.
    func testARedirectMessageCutsTheFinalURLAt1024BytesNeverInsideACharacter() throws {
        let from = "http://h/a"
        let ascii = "ftp://h/" + String(repeating: "a", count: 2000)
        XCTAssertEqual(CurlFetcher.redirect(to: ascii, from: from), String(ascii.prefix(1024)) + "... (redirected to from http://h/a)")
        let short = "ftp://h/" + String(repeating: "é", count: 100)
        XCTAssertEqual(CurlFetcher.redirect(to: short, from: from), short + " (redirected to from http://h/a)")
        XCTAssertEqual(CurlFetcher.redirect(to: nil, from: from), "an unknown URL (redirected to from http://h/a)")
        // 1023 bytes, then a 2-byte é across the 1024-byte cut: the cut is before it.
        let kept = "ftp://h/" + String(repeating: "a", count: 1015)
        XCTAssertEqual(
            CurlFetcher.redirect(to: kept + String(repeating: "é", count: 10), from: from), kept + "... (redirected to from http://h/a)")

        let server = try TestServer()
        defer { server.stop() }
        let target = "ftp://127.0.0.1/x#" + String(repeating: "a", count: 1005)
        server.route("/away", .redirect(to: target + "é-and-more"))
        let error = failure(server.url("/away"))
        XCTAssertEqual(error?.kind, "invalid-url")
        XCTAssertEqual(
            error?.description, "not an http(s) URL: \(target)... (redirected to from \(server.url("/away").absoluteString))")
    }

    func testAHeaderLineOverLibcurlsLimitIsHeaderTooLargeNotACutBody() throws {
        let server = try TestServer()
        defer { server.stop() }
        let line = String(repeating: "a", count: 1 << 20)
        server.route("/big-header", HTTPResponse(status: 200, headers: [("X-Big", line)], body: .data(Data("hello".utf8))))
        let error = failure(server.url("/big-header"))
        XCTAssertEqual(error, .headerTooLarge(limit: 102_400, url: server.url("/big-header").absoluteString))
        XCTAssertEqual(error?.kind, "header-too-large")
        XCTAssertEqual(error?.isRetriable, false)
        XCTAssertTrue(error?.description.contains("102400 bytes") ?? false, "\(String(describing: error))")
    }

    /// The address is refused when libcurl asks for a socket: nothing is sent to it.
    func testARedirectToALinkLocalAddressIsRefusedBeforeAnyConnection() throws {
        let server = try TestServer()
        defer { server.stop() }
        for target in ["http://169.254.169.254/latest/meta-data/", "http://[fe80::1]/x.png", "http://[::ffff:169.254.1.1]/x"] {
            server.route("/metadata", .redirect(to: target))
            let error = failure(server.url("/metadata"))
            XCTAssertEqual(error?.kind, "forbidden-address", "\(target): \(String(describing: error))")
            XCTAssertEqual(error?.isRetriable, false)
            XCTAssertTrue(error?.description.contains(target) ?? false, "\(String(describing: error))")
        }
    }

    /// A catalog URL with a password at a forbidden address is refused naming it redacted:
    /// libcurl's own URL has the password back, and the message goes to the journal and the
    /// manifest (it named the URL with the password, as a redirect from the redacted one).
    func testAForbiddenURLWithAPasswordIsNamedWithoutIt() throws {
        let passwords = URLPasswords()
        let fetcher = CurlFetcher(limits: FetchLimits(RunConfiguration()), passwords: passwords)
        for given in ["http://ann:s3cret@169.254.169.254/latest/meta-data/", "http://ann:s3cret@[fe80::1]/x.png"] {
            let url = passwords.redacting(given)
            XCTAssertFalse(url.contains("s3cret"))
            let error = FetcherChecks.error(FetcherChecks.outcome(of: fetcher, try XCTUnwrap(URL(string: url))).0)?.0
            XCTAssertEqual(error?.kind, "forbidden-address", "\(given): \(String(describing: error))")
            XCTAssertFalse("\(String(describing: error))".contains("s3cret"), "\(String(describing: error))")
            XCTAssertEqual(error?.description.contains(url), true, "\(String(describing: error))")
            XCTAssertEqual(error?.description.contains("redirected"), false, "\(String(describing: error))")
        }
    }

    /// A header line that starts with "HTTP/" (libcurl passes "HTTP/: 200" on, having a colon)
    /// is a header, not the status line of a new response: it reset the 404 being read to 200.
    func testAHeaderThatLooksLikeAStatusLineIsAHeader() throws {
        let server = try TestServer()
        defer { server.stop() }
        server.route("/gone", HTTPResponse(status: 404, headers: [("HTTP/", "200 OK"), ("X-After", "1")]))
        server.route("/fine", HTTPResponse(status: 200, headers: [("HTTP/", "304"), ("Content-Type", "image/png")], body: .data(PNGFixtures.solid())))
        let error = failure(server.url("/gone"))
        XCTAssertEqual(error?.kind, "http-status", "\(String(describing: error))")
        XCTAssertEqual(error?.status, 404)
        let (outcome, _) = FetcherChecks.outcome(of: Fixtures.fetcher(for: RunConfiguration()), server.url("/fine"))
        guard case .body(let body, _, _)? = outcome else { return XCTFail("\(String(describing: outcome))") }
        XCTAssertEqual(body, PNGFixtures.solid())
    }

    /// Header lines each under the 100 KiB line limit but over 300 KiB in all end the response
    /// in libcurl as a receive error: it is the server's answer, header-too-large, tried once,
    /// not a network failure tried again.
    func testHeadersTooLargeInAllAreHeaderTooLargeNotANetworkError() throws {
        let server = try TestServer()
        defer { server.stop() }
        server.route("/many", HTTPResponse(status: 200, headers: (0..<5000).map { ("X-Filler-\($0)", String(repeating: "f", count: 80)) }))
        let error = failure(server.url("/many"))
        XCTAssertEqual(error?.kind, "header-too-large", "\(String(describing: error))")
        XCTAssertEqual(error?.isRetriable, false)
    }

    func testLinkLocalAddressesAndOnlyThoseAreForbidden() {
        func v4(_ text: String) -> Bool {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            inet_pton(AF_INET, text, &address.sin_addr)
            return withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { ccurl_address_is_forbidden($0) != 0 } }
        }
        func v6(_ text: String) -> Bool {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            inet_pton(AF_INET6, text, &address.sin6_addr)
            return withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { ccurl_address_is_forbidden($0) != 0 } }
        }
        for text in ["169.254.0.0", "169.254.169.254", "169.254.255.255", "100.100.100.200"] { XCTAssertTrue(v4(text), text) }
        for text in ["127.0.0.1", "10.0.0.1", "169.253.255.255", "169.255.0.0", "192.168.1.1", "100.100.100.201", "100.64.0.1"] {
            XCTAssertFalse(v4(text), text)
        }
        for text in ["fe80::1", "febf:ffff::1", "::ffff:169.254.169.254", "fd00:ec2::254"] { XCTAssertTrue(v6(text), text) }
        for text in ["::1", "fec0::1", "fe7f::1", "2001:db8::1", "::ffff:127.0.0.1", "fd00:ec2::253", "fd00::254"] { XCTAssertFalse(v6(text), text) }
    }

    /// Through the whole run: each fails once, is recorded with its kind, and gets no retry.
    func testNoneOfThemIsTriedAgainInARun() throws {
        let server = try TestServer()
        defer { server.stop() }
        server.route("/600/00000a", .redirect(to: "file:///etc/passwd"))
        server.route("/600/00000b", HTTPResponse(status: 200, headers: [("X-Big", String(repeating: "b", count: 1 << 20))]))
        server.route("/600/00000c", .redirect(to: "http://169.254.169.254/latest/meta-data/"))
        let out = Fixtures.temporaryDirectory(self)
        var config = Fixtures.configuration(out: out, server: server)
        config.retries = 3
        let records = [Fixtures.record(1, colour: "00000a"), Fixtures.record(2, colour: "00000b"), Fixtures.record(3, colour: "00000c")]
        let summary = try Fixtures.run(config, catalog: Fixtures.catalog(records))
        XCTAssertEqual(summary.failed, 3)
        let kinds = try Fixtures.manifest(in: out).items.map { $0.error?.kind ?? "done" }
        XCTAssertEqual(kinds, ["invalid-url", "header-too-large", "forbidden-address"])
        for path in ["/600/00000a", "/600/00000b", "/600/00000c"] { XCTAssertEqual(server.count(path), 1, path) }
    }
}
