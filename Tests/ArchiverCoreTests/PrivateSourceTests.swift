import Foundation
import XCTest
@testable import ArchiverCore
@testable import ArchiverServer

/// Issue 24 through the built binary: servers that want a bearer token, basic auth or a cookie,
/// a second host on 127.0.0.2 that must never see them after a redirect, a loopback forward
/// proxy, and after every run a search of every bundle file and all output for each secret.
final class PrivateSourceTests: XCTestCase {
    static let token = "tok-7c1e0d5a-secret"
    static let user = "archivist"
    static let password = "pw-91b3f2-secret"
    static let cookie = "ck-4d8a77-secret"
    static let secrets = [token, password, cookie]
    static var basic: String { "Basic " + Data("\(user):\(password)".utf8).base64EncodedString() }

    /// The environment of the binary with no proxy variables, plus `extra`.
    private func environment(_ extra: [String: String] = [:]) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.lowercased().hasSuffix("_proxy") }
        environment.merge(extra) { $1 }
        return environment
    }

    /// Placeholder images to requests `allowed` accepts, 401 to others.
    private func guardedServer(host: String = "127.0.0.1", _ allowed: @escaping @Sendable (HTTPRequest) -> Bool) throws -> TestServer {
        try TestServer(host: host) { request in
            allowed(request) ? Fixtures.images.respond(to: request) : .text(401, "credentials, please\n")
        }
    }

    /// A catalog of `count` records whose images are at `base` + `/600/<colour>`; its path.
    private func catalog(base: String, count: Int = 4, in directory: URL) throws -> String {
        let records = Fixtures.records(count).map { record -> CatalogRecord in
            var record = record
            record.url = record.url.replacingOccurrences(of: Fixtures.host, with: base)
            record.thumbnailUrl = ""
            return record
        }
        return try Fixtures.writeCatalog(records, to: directory.appendingPathComponent("catalog-\(UUID().uuidString).json"))
    }

    /// Runs `archiver run` into a fresh bundle; checks no secret is printed or in any bundle file.
    private func archive(
        _ catalog: String, _ extra: [String] = [], environment: [String: String]? = nil, file: StaticString = #filePath, line: UInt = #line
    ) throws -> (CommandResult, URL) {
        let out = Fixtures.temporaryDirectory(self).appendingPathComponent("out")
        let result = try CommandRunner.run(
            ["run", "--catalog", catalog, "--out", out.path, "--retries", "0", "--json"] + extra,
            environment: environment ?? self.environment())
        try assertNoSecrets(in: out, result, file: file, line: line)
        return (result, out)
    }

    /// No secret in stdout, stderr, or any file under `out` (hidden state included).
    private func assertNoSecrets(in out: URL, _ result: CommandResult, file: StaticString = #filePath, line: UInt = #line) throws {
        var files = 0
        if let walker = FileManager.default.enumerator(at: out, includingPropertiesForKeys: [.isRegularFileKey]) {
            for case let url as URL in walker where (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true {
                files += 1
                let data = try Data(contentsOf: url)
                for secret in Self.secrets where data.range(of: Data(secret.utf8)) != nil {
                    XCTFail("\(secret) in \(url.path)", file: file, line: line)
                }
            }
        }
        XCTAssertGreaterThan(files, 0, "no bundle written", file: file, line: line)
        for secret in Self.secrets {
            XCTAssertFalse(result.stdout.contains(secret), "\(secret) on stdout", file: file, line: line)
            XCTAssertFalse(result.stderr.contains(secret), "\(secret) on stderr", file: file, line: line)
        }
    }

    /// Every item of the bundle's manifest: done, or failed as `kind`.
    private func assertEvery(_ out: URL, is kind: String?, count: Int = 4, file: StaticString = #filePath, line: UInt = #line) throws {
        let items = try Fixtures.manifest(in: out).items
        XCTAssertEqual(items.count, count, file: file, line: line)
        for item in items {
            if let kind {
                XCTAssertEqual(item.status, .failed, file: file, line: line)
                XCTAssertEqual(item.error?.kind, kind, item.error?.message ?? "", file: file, line: line)
            } else {
                XCTAssertEqual(item.status, .done, item.error?.message ?? "", file: file, line: line)
            }
        }
    }

    func testBearerTokenByHeaderAndHeaderFileArchivesEveryRecordAndWithoutItEveryRecordIsUnauthorized() throws {
        let server = try guardedServer { $0.headers["authorization"] == "Bearer \(Self.token)" }
        let directory = Fixtures.temporaryDirectory(self)
        let catalog = try catalog(base: server.baseURL, in: directory)

        let (refused, refusedOut) = try archive(catalog)
        XCTAssertEqual(refused.status, 1, refused.stderr)
        try assertEvery(refusedOut, is: "unauthorized")
        let message = try XCTUnwrap(Fixtures.manifest(in: refusedOut).items.first?.error?.message)
        XCTAssertTrue(message.hasPrefix("HTTP 401 from http://127.0.0.1:"), message)
        XCTAssertTrue(message.contains("--header, --netrc-file, --cookie, or user:password@ in the URL"), message)
        XCTAssertEqual(server.total, 4, "unauthorized is not retried")

        let (byHeader, byHeaderOut) = try archive(catalog, ["-H", "Authorization: Bearer \(Self.token)"])
        XCTAssertEqual(byHeader.status, 0, byHeader.stderr)
        try assertEvery(byHeaderOut, is: nil)

        let headerFile = directory.appendingPathComponent("headers")
        try Data("# the archive's token\n\nAuthorization: Bearer \(Self.token)\r\nX-Team: images\n".utf8).write(to: headerFile)
        let (byFile, byFileOut) = try archive(catalog, ["--header", "@" + headerFile.path])
        XCTAssertEqual(byFile.status, 0, byFile.stderr)
        try assertEvery(byFileOut, is: nil)
        XCTAssertEqual(server.requests.last?.headers["x-team"], "images")
    }

    func testBasicAuthFromNetrcFileAndFromTheURLArchivesEveryRecordAndTheURLKeepsOnlyStars() throws {
        let server = try guardedServer { $0.headers["authorization"] == Self.basic }
        let directory = Fixtures.temporaryDirectory(self)
        let plain = try catalog(base: server.baseURL, in: directory)

        let (refused, refusedOut) = try archive(plain)
        XCTAssertEqual(refused.status, 1)
        try assertEvery(refusedOut, is: "unauthorized")

        let netrc = directory.appendingPathComponent("netrc")
        try Data("machine 127.0.0.1 login \(Self.user) password \(Self.password)\n".utf8).write(to: netrc)
        let (byNetrc, byNetrcOut) = try archive(plain, ["--netrc-file", netrc.path])
        XCTAssertEqual(byNetrc.status, 0, byNetrc.stderr)
        try assertEvery(byNetrcOut, is: nil)

        let withPassword = try catalog(
            base: server.baseURL.replacingOccurrences(of: "://", with: "://\(Self.user):\(Self.password)@"), in: directory)
        let (byURL, byURLOut) = try archive(withPassword)
        XCTAssertEqual(byURL.status, 0, byURL.stderr)
        try assertEvery(byURLOut, is: nil)
        for item in try Fixtures.manifest(in: byURLOut).items {
            XCTAssertTrue(item.url.hasPrefix("http://\(Self.user):***@127.0.0.1:"), item.url)
            XCTAssertEqual(item.source, item.url)
        }

        // The same command again resumes: every record matches its journaled, redacted URL, so
        // nothing is fetched; --refresh asks again, with the password, and keeps every file.
        let before = server.total
        let again = try CommandRunner.run(
            ["run", "--catalog", withPassword, "--out", byURLOut.path, "--retries", "0", "--json"], environment: environment())
        try assertNoSecrets(in: byURLOut, again)
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertEqual(server.total, before, "a resumed run fetched again: records did not match")
        let refresh = try CommandRunner.run(
            ["run", "--catalog", withPassword, "--out", byURLOut.path, "--retries", "0", "--refresh"], environment: environment())
        try assertNoSecrets(in: byURLOut, refresh)
        XCTAssertEqual(refresh.status, 0, refresh.stderr)
        XCTAssertEqual(server.total, before + 4)
        try assertEvery(byURLOut, is: nil)
        for command in [["status", byURLOut.path], ["status", byURLOut.path, "--json"], ["verify", byURLOut.path, "--json"]] {
            let shown = try CommandRunner.run(command)
            XCTAssertEqual(shown.status, 0, "\(command): \(shown.stderr)")
            try assertNoSecrets(in: byURLOut, shown)
        }

        // --netrc reads ~/.netrc (HOME points at a directory holding one, mode 0600 as curl wants).
        let home = directory.appendingPathComponent("home")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: netrc, to: home.appendingPathComponent(".netrc"))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: home.appendingPathComponent(".netrc").path)
        let (byHomeNetrc, byHomeNetrcOut) = try archive(plain, ["--netrc"], environment: environment(["HOME": home.path]))
        XCTAssertEqual(byHomeNetrc.status, 0, byHomeNetrc.stderr)
        try assertEvery(byHomeNetrcOut, is: nil)
    }

    func testCookieFileArchivesEveryRecordAndAMissingOneIsAUsageError() throws {
        let server = try guardedServer { ($0.headers["cookie"] ?? "").contains("session=\(Self.cookie)") }
        let directory = Fixtures.temporaryDirectory(self)
        let catalog = try catalog(base: server.baseURL, in: directory)

        let (refused, refusedOut) = try archive(catalog)
        XCTAssertEqual(refused.status, 1)
        try assertEvery(refusedOut, is: "unauthorized")

        let cookies = directory.appendingPathComponent("cookies.txt")
        try Data("# Netscape HTTP Cookie File\n127.0.0.1\tFALSE\t/\tFALSE\t0\tsession\t\(Self.cookie)\n".utf8).write(to: cookies)
        let (allowed, allowedOut) = try archive(catalog, ["--cookie", cookies.path])
        XCTAssertEqual(allowed.status, 0, allowed.stderr)
        try assertEvery(allowedOut, is: nil)

        let missing = try CommandRunner.run(["run", "--catalog", catalog, "--cookie", directory.appendingPathComponent("nope").path])
        assertOneLineError(missing, mentions: ["--cookie", "nope"])
        let noNetrc = try CommandRunner.run(["run", "--catalog", catalog, "--netrc-file", directory.path])
        assertOneLineError(noNetrc, mentions: ["--netrc-file"])
    }

    func testACookieTheCatalogServerSetsGoesWithEveryImageRequestAsInCurlsOneJar() throws {
        let server = try guardedServer { ($0.headers["cookie"] ?? "").contains("session=\(Self.cookie)") }
        let directory = Fixtures.temporaryDirectory(self)
        let path = try catalog(base: server.baseURL, count: 8, in: directory)
        server.route("/catalog.json") { _ in
            HTTPResponse(
                status: 200, headers: [("Set-Cookie", "session=\(Self.cookie); Path=/")],
                body: .data(FileManager.default.contents(atPath: path)!))
        }
        let empty = directory.appendingPathComponent("empty-cookies.txt")
        try Data().write(to: empty)
        let (run, out) = try archive(server.baseURL + "/catalog.json", ["--cookie", empty.path, "--concurrency", "8"])
        XCTAssertEqual(run.status, 0, run.stderr)
        try assertEvery(out, is: nil, count: 8)
    }

    /// libcurl keeps every cookie a server sets and walks them all for each request: a server
    /// setting 50 new ones of 4 KB with every image took a 1,100-record run to 258 MB and 178 s.
    /// The jar goes back to the file's cookies once servers have added about 75.
    func testAServerSettingNewCookiesWithEveryResponseCannotGrowTheJarAndTheFilesCookieStillGoesOut() throws {
        let set = Locked(0)
        let withoutTheFile = Locked(0)
        let filler = String(repeating: "x", count: 4000)
        let server = try TestServer { request in
            guard (request.headers["cookie"] ?? "").contains("session=\(Self.cookie)") else {
                withoutTheFile.withLock { $0 += 1 }
                return .text(401, "credentials, please\n")
            }
            var response = Fixtures.images.respond(to: request)
            let first = set.withLock { set in
                defer { set += 50 }
                return set
            }
            // Never sent back (another path), so the requests stay small; only the jar grows.
            response.headers += (first..<first + 50).map { ("Set-Cookie", "k\($0)=\(filler); Path=/elsewhere") }
            return response
        }
        defer { server.stop() }
        let directory = Fixtures.temporaryDirectory(self)
        let catalog = try catalog(base: server.baseURL, count: 300, in: directory)
        let cookies = directory.appendingPathComponent("cookies.txt")
        try Data("127.0.0.1\tFALSE\t/\tFALSE\t0\tsession\t\(Self.cookie)\n".utf8).write(to: cookies)
        let out = directory.appendingPathComponent("out")

        let (run, peak) = try CommandRunner.runMeasuringPeakMemory(
            ["run", "--catalog", catalog, "--out", out.path, "--retries", "0", "--concurrency", "1", "--quiet", "--cookie", cookies.path])
        XCTAssertEqual(run.status, 0, run.stderr)
        try assertEvery(out, is: nil, count: 300)
        XCTAssertEqual(set.withLock { $0 }, 300 * 50)
        XCTAssertEqual(withoutTheFile.withLock { $0 }, 0)
        // 60 MB of cookies kept before (a peak of 97 MiB); 38 MiB now (debug build).
        if !Sanitizers.active { XCTAssertLessThan(peak, 64 << 10, "peak RSS \(peak / 1024) MiB") }
    }

    func testRedirectToAnotherHostFollowsButNeverCarriesTheAuthorizationHeaderTheCookieOrTheURLPassword() throws {
        let second = try TestServer(host: "127.0.0.2", defaultHandler: Fixtures.images.respond(to:))
        let first = try guardedServer { request in
            request.headers["authorization"] != nil && (request.headers["cookie"] ?? "").contains(Self.cookie)
                || request.headers["authorization"] == Self.basic
        }
        // /same/... goes to /600/... on the first host (credentials kept), /away/... to the second.
        let directory = Fixtures.temporaryDirectory(self)
        let records = Fixtures.records(4).enumerated().map { index, record -> CatalogRecord in
            var record = record
            let path = URL(string: record.url)!.path
            let hop = index % 2 == 0 ? "away" : "same"
            first.route("/\(hop)\(path)") { request in
                guard request.headers["authorization"] != nil else { return .text(401, "no\n") }
                return .redirect(to: (hop == "away" ? second.baseURL : first.baseURL) + path)
            }
            record.url = first.baseURL + "/\(hop)" + path
            record.thumbnailUrl = ""
            return record
        }
        let catalog = try Fixtures.writeCatalog(records, to: directory.appendingPathComponent("redirects.json"))
        let cookies = directory.appendingPathComponent("cookies.txt")
        try Data("127.0.0.1\tFALSE\t/\tFALSE\t0\tsession\t\(Self.cookie)\n".utf8).write(to: cookies)

        let (run, out) = try archive(
            catalog, ["--header", "Authorization: Bearer \(Self.token)", "--header", "Cookie: custom=\(Self.cookie)", "--cookie", cookies.path])
        XCTAssertEqual(run.status, 0, run.stderr)
        try assertEvery(out, is: nil)
        XCTAssertEqual(second.total, 2, "the cross-host redirects were not followed")
        for request in second.requests {
            XCTAssertNil(request.headers["authorization"], "Authorization reached 127.0.0.2")
            XCTAssertNil(request.headers["cookie"], "a cookie reached 127.0.0.2")
        }
        let sameHost = first.requests.filter { $0.path.hasPrefix("/600/") }
        XCTAssertEqual(sameHost.count, 2)
        XCTAssertTrue(sameHost.allSatisfy { $0.headers["authorization"] == "Bearer \(Self.token)" }, "a same-host redirect keeps the header")

        // Basic credentials from user:password@ stay with the first host too.
        let withPassword = records.map { record -> CatalogRecord in
            var record = record
            record.url = record.url.replacingOccurrences(of: "://", with: "://\(Self.user):\(Self.password)@")
            return record
        }
        let passwordCatalog = try Fixtures.writeCatalog(withPassword, to: directory.appendingPathComponent("redirects-pw.json"))
        let (byURL, byURLOut) = try archive(passwordCatalog)
        XCTAssertEqual(byURL.status, 0, byURL.stderr)
        try assertEvery(byURLOut, is: nil)
        XCTAssertEqual(second.total, 4)
        XCTAssertTrue(second.requests.allSatisfy { $0.headers["authorization"] == nil }, "basic credentials reached 127.0.0.2")
    }

    /// A forward proxy: answers absolute-URI requests itself, from the path after the authority.
    private func forwardProxy() throws -> TestServer {
        try TestServer { request in
            guard let url = URL(string: request.path), url.scheme == "http" else { return .text(400, "not a proxy request\n") }
            return Fixtures.images.respond(to: HTTPRequest(method: request.method, path: url.path))
        }
    }

    func testProxyVariablesAndProxyOptionRouteEveryRequestAndNoProxyBypassesIt() throws {
        let origin = try Fixtures.placeholderServer()
        let proxy = try forwardProxy()
        let catalog = try catalog(base: origin.baseURL, in: Fixtures.temporaryDirectory(self))

        func check(_ extra: [String], _ variables: [String: String], proxied: Bool, _ what: String) throws {
            let (proxyBefore, originBefore) = (proxy.total, origin.total)
            let (run, out) = try archive(catalog, extra, environment: environment(variables))
            XCTAssertEqual(run.status, 0, "\(what): \(run.stderr)")
            try assertEvery(out, is: nil)
            XCTAssertEqual(proxy.total - proxyBefore, proxied ? 4 : 0, what)
            XCTAssertEqual(origin.total - originBefore, proxied ? 0 : 4, what)
        }
        try check([], ["http_proxy": proxy.baseURL], proxied: true, "http_proxy")
        XCTAssertTrue(proxy.requests.allSatisfy { $0.path.hasPrefix(origin.baseURL + "/600/") }, "absolute-URI requests")
        try check([], ["http_proxy": proxy.baseURL, "NO_PROXY": "127.0.0.1"], proxied: false, "NO_PROXY")
        // libcurl reads http_proxy in lower case only (upper case could come from a CGI request's Proxy: header).
        try check([], ["HTTP_PROXY": proxy.baseURL], proxied: false, "HTTP_PROXY is not read")
        try check([], ["ALL_PROXY": proxy.baseURL], proxied: true, "ALL_PROXY")
        try check(["--noproxy", "127.0.0.1"], ["http_proxy": proxy.baseURL], proxied: false, "--noproxy")
        try check(["--proxy", proxy.baseURL], [:], proxied: true, "--proxy")
        try check(["--proxy", proxy.baseURL, "--noproxy", "*"], [:], proxied: false, "--proxy with --noproxy *")
    }

    func testUserAgentReachesTheServer() throws {
        let server = try Fixtures.placeholderServer()
        let catalog = try catalog(base: server.baseURL, in: Fixtures.temporaryDirectory(self))
        let (run, _) = try archive(catalog, ["--user-agent", "museum-crawler/2.1 (+ops@example.org)"])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(Set(server.requests.map { $0.headers["user-agent"] ?? "" }), ["museum-crawler/2.1 (+ops@example.org)"])
        let (plain, _) = try archive(catalog)
        XCTAssertEqual(plain.status, 0)
        XCTAssertTrue(server.requests.last?.headers["user-agent"]?.hasPrefix("archiver/") ?? false)
    }

    func testCatalogURLBehindATokenOrAPasswordWorksWithTheSameOptions() throws {
        let server = try guardedServer { $0.headers["authorization"] == "Bearer \(Self.token)" || $0.headers["authorization"] == Self.basic }
        let directory = Fixtures.temporaryDirectory(self)
        let path = try catalog(base: server.baseURL, in: directory)
        server.route("/catalog.json") { request in
            guard request.headers["authorization"] != nil else { return .text(401, "no\n") }
            return HTTPResponse(status: 200, body: .data(FileManager.default.contents(atPath: path)!))
        }
        let refused = try CommandRunner.run(
            ["run", "--catalog", server.baseURL + "/catalog.json", "--out", directory.appendingPathComponent("x").path],
            environment: environment())
        assertOneLineError(refused, mentions: ["HTTP 401", "--header"])

        let (byToken, byTokenOut) = try archive(server.baseURL + "/catalog.json", ["--header", "Authorization: Bearer \(Self.token)"])
        XCTAssertEqual(byToken.status, 0, byToken.stderr)
        try assertEvery(byTokenOut, is: nil)

        // A password in --catalog's URL opens the catalog (the images then need one of their own).
        let withPassword = server.baseURL.replacingOccurrences(of: "://", with: "://\(Self.user):\(Self.password)@") + "/catalog.json"
        let (byURL, byURLOut) = try archive(withPassword)
        XCTAssertEqual(byURL.status, 1, byURL.stderr)
        try assertEvery(byURLOut, is: "unauthorized")
        XCTAssertEqual(try Fixtures.manifest(in: byURLOut).catalog.source, "http://\(Self.user):***@127.0.0.1:\(server.port)/catalog.json")
    }

    func testBadHeadersAreOneLineUsageErrorsThatNeverRepeatTheValue() throws {
        let directory = Fixtures.temporaryDirectory(self)
        let file = directory.appendingPathComponent("headers")
        try Data("Authorization Bearer \(Self.token)\n".utf8).write(to: file)
        for (argument, words) in [
            ("Authorization Bearer \(Self.token)", ["--header", "no colon"]),
            ("Bad Name: \(Self.token)", ["--header", "no header name"]),
            ("X-Token: \(Self.token)\r\nHost: elsewhere", ["--header", "CR, LF"]),
            ("@" + file.path, ["--header", "no colon"]),
            ("@" + directory.appendingPathComponent("missing").path, ["--header", "cannot read"]),
        ] {
            let result = try CommandRunner.run(["run", "--header", argument])
            assertOneLineError(result, mentions: words)
            XCTAssertFalse(result.stderr.contains(Self.token), result.stderr)
        }
        assertOneLineError(try CommandRunner.run(["run", "--proxy", "ftp://proxy"]), mentions: ["--proxy"])
    }
}

/// `URLPasswords` alone: the redacted form is a pure function of the URL, and only the fetcher
/// gets the password back.
final class URLPasswordsTests: XCTestCase {
    func testRedactionIsDeterministicAndRestoresOnlyWhatItTookOut() {
        let passwords = URLPasswords()
        let url = "https://ann:s3cret@Images.Example.org:8443/a/b.png?x=1#f"
        XCTAssertEqual(passwords.redacting(url), "https://ann:***@Images.Example.org:8443/a/b.png?x=1#f")
        XCTAssertEqual(passwords.redacting(url), passwords.redacting(url))
        XCTAssertEqual(URLPasswords.redacted(url), "https://ann:***@Images.Example.org:8443/a/b.png?x=1#f")
        XCTAssertEqual(passwords.restoring("https://ann:***@images.example.org:8443/c.png"), "https://ann:s3cret@images.example.org:8443/c.png")
        XCTAssertEqual(passwords.restoring("https://bob:***@images.example.org:8443/c.png"), "https://bob:***@images.example.org:8443/c.png")
        XCTAssertEqual(URLPasswords().restoring("https://ann:***@images.example.org:8443/c.png"), "https://ann:***@images.example.org:8443/c.png")
        for unchanged in ["https://a.org/x@y.png", "https://ann@a.org/x.png", "https://a.org/p?mail=a:b@c", "not a url", ""] {
            XCTAssertEqual(passwords.redacting(unchanged), unchanged)
        }
        XCTAssertEqual(passwords.redacting("http://u:p@ss:w@h/x"), "http://u:***@h/x")
    }
}
