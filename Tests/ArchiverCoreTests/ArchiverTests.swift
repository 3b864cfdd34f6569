import Foundation
import XCTest
@testable import ArchiverCore
@testable import ArchiverServer

/// `archiver run` in-process against a loopback server: the whole pipeline with real parts.
final class ArchiverTests: XCTestCase {
    func testWholeRunWritesEveryRecordByteIdenticalWithAMatchingManifest() throws {
        let server = try Fixtures.placeholderServer()
        let out = Fixtures.temporaryDirectory(self)
        var records = Fixtures.records(40)
        records.append(Fixtures.record(41, colour: "61a65"))  // 5 hex digits, as 302 catalog records have
        let summary = try Fixtures.run(Fixtures.configuration(out: out, server: server), catalog: Fixtures.catalog(records))

        XCTAssertEqual(summary.done, 41)
        XCTAssertEqual(summary.failed, 0)
        XCTAssertFalse(summary.interrupted)
        let manifest = try Fixtures.manifest(in: out)
        XCTAssertEqual(manifest.items.map(\.id), Fixtures.ids(1...41))
        XCTAssertEqual(manifest.catalog.records, 41)
        for (item, record) in zip(manifest.items, records) {
            let path = "/600/" + record.url.split(separator: "/").last!
            let file = try Data(contentsOf: out.appendingPathComponent("images/\(record.id).png"))
            XCTAssertEqual(file, Fixtures.served(path), "images/\(record.id).png")
            XCTAssertEqual(item.status, .done)
            XCTAssertEqual(item.path, "images/\(record.id).png")
            XCTAssertEqual(item.sha256, SHA256.hex(file))
            XCTAssertEqual(item.bytes, Int64(file.count))
            XCTAssertEqual(item.width, 600)
            XCTAssertEqual(item.height, 600)
            XCTAssertEqual(item.url, record.url)
            XCTAssertEqual(item.source, server.baseURL + path)
            XCTAssertEqual(item.attempts, 1)
        }
        XCTAssertEqual(server.total, 41)
        XCTAssertEqual(Fixtures.imageNames(in: out).count, 41)
        let gallery = try GalleryFiles.read(out)
        let itemPages = gallery.filter { $0.key.hasPrefix("pages/0") }
        XCTAssertEqual(itemPages.values.reduce(0) { $0 + GalleryFiles.count("<img", in: $1) }, 41, "the front page's are album covers")
    }

    /// The run streams manifest.json and the gallery from the catalog and its outcomes, never
    /// holding the items; they must be exactly what the whole manifest gives, whatever the
    /// catalog's order, with shared URLs, a refused URL and a failure among the records.
    func testStreamedManifestAndPageAreWhatTheWholeManifestGives() throws {
        let server = try Fixtures.placeholderServer()
        let out = Fixtures.temporaryDirectory(self)
        var records = Fixtures.records(30).map { record in
            var record = record
            record.albumId = [3, 1, 2][record.id.integer! % 3]
            return record
        }
        records += [Fixtures.record(31, colour: "205992", album: 2), Fixtures.record(32, colour: "205992", album: 1)]
        records.append(CatalogRecord(albumId: 1, id: 33, title: "ftp", url: "ftp://h/x.png", thumbnailUrl: ""))
        records.append(CatalogRecord(albumId: 2, id: 34, title: "gone", url: Fixtures.host + "/600/nothex", thumbnailUrl: ""))
        var generator = SeededGenerator()
        records.shuffle(using: &generator)
        let catalog = try Fixtures.catalog(records)

        let summary = try Fixtures.run(Fixtures.configuration(out: out, server: server), catalog: catalog)
        XCTAssertEqual(summary.done, 32)
        XCTAssertEqual(summary.failed, 2)
        XCTAssertEqual(server.count("/600/205992"), 1, "two records share one request")

        let written = try Data(contentsOf: out.appendingPathComponent("manifest.json"))
        let manifest = try Fixtures.manifest(in: out)
        XCTAssertEqual(manifest.items.map(\.id), Fixtures.ids(1...34))
        XCTAssertEqual(written, manifest.encoded(), "the streamed bytes are the canonical encoding")
        XCTAssertEqual(manifest.items.first { $0.id == 33 }?.error?.kind, "invalid-url")
        XCTAssertEqual(manifest.items.first { $0.id == 34 }?.status, .failed)
        XCTAssertEqual(manifest.items.first { $0.id == 31 }?.sha256, manifest.items.first { $0.id == 32 }?.sha256)
        XCTAssertEqual(try GalleryFiles.read(out), try GalleryFiles.expected(for: manifest))
        let page = try String(contentsOf: out.appendingPathComponent("pages/0001.html"), encoding: .utf8)
        let rows = page.matches(of: /<li class="\w+" id="item-(\d+)">/).map { Int($0.output.1)! }
        XCTAssertEqual(rows, Array(1...34), "in id order, whatever the catalog's order")
        XCTAssertTrue(page.contains("<section class=\"album\" id=\"group-31\">\n<h2>Album 2 <small>(1 item from #31)"), "a heading per run of an album")
    }

    /// Two spellings of one Unicode text (é composed, and e plus a combining accent) are equal
    /// Strings but different URLs: each is requested, not merged into one job.
    func testURLsThatAreOnlyUnicodeEquivalentAreFetchedSeparately() throws {
        let server = try Fixtures.placeholderServer()
        let out = Fixtures.temporaryDirectory(self)
        let composed = Fixtures.host + "/600/caf\u{E9}", decomposed = Fixtures.host + "/600/cafe\u{301}"
        XCTAssertEqual(composed, decomposed, "Swift calls them equal")
        let records = [
            CatalogRecord(albumId: 1, id: 1, title: "a", url: composed, thumbnailUrl: ""),
            CatalogRecord(albumId: 1, id: 2, title: "b", url: decomposed, thumbnailUrl: ""),
        ]
        _ = try Fixtures.run(Fixtures.configuration(out: out, server: server), catalog: Fixtures.catalog(records))
        XCTAssertEqual(server.total, 2)
    }

    func testDuplicateURLsAreFetchedOnceAndEveryRecordGetsItsFile() throws {
        let server = try Fixtures.placeholderServer()
        let out = Fixtures.temporaryDirectory(self)
        let records = [
            Fixtures.record(1, colour: "205992"), Fixtures.record(2, colour: "aabbcc"),
            Fixtures.record(3, colour: "205992"), Fixtures.record(4, colour: "205992"),
        ]
        let summary = try Fixtures.run(Fixtures.configuration(out: out, server: server), catalog: Fixtures.catalog(records))
        XCTAssertEqual(summary.done, 4)
        XCTAssertEqual(server.count("/600/205992"), 1)
        XCTAssertEqual(server.total, 2)
        let first = try Data(contentsOf: out.appendingPathComponent("images/1.png"))
        XCTAssertEqual(try Data(contentsOf: out.appendingPathComponent("images/3.png")), first)
        XCTAssertEqual(try Data(contentsOf: out.appendingPathComponent("images/4.png")), first)
    }

    func testConcurrencyOneKeepsExactlyOneRequestInFlight() throws {
        try assertConcurrencyBound(1)
    }

    func testConcurrencyFourKeepsExactlyFourRequestsInFlight() throws {
        try assertConcurrencyBound(4)
    }

    /// Holds every request at the server until `limit` are waiting there, then lets them go:
    /// reaching `limit` proves the pool fills, and the maximum ever seen proves it never exceeds it.
    private func assertConcurrencyBound(_ limit: Int) throws {
        let server = try Fixtures.placeholderServer()
        let out = Fixtures.temporaryDirectory(self)
        let config = Fixtures.configuration(out: out, server: server, concurrency: limit)
        let catalog = try Fixtures.catalog(Fixtures.records(limit * 6))
        server.holdRequests()
        let finished = expectation(description: "run finished")
        let result = Locked<RunSummary?>(nil)
        DispatchQueue.global().async {
            let summary = try? Fixtures.run(config, catalog: catalog)
            result.withLock { $0 = summary }
            finished.fulfill()
        }
        XCTAssertTrue(server.waitUntilInFlight(limit, timeout: 10), "the pool never had \(limit) requests in flight")
        server.release()
        wait(for: [finished], timeout: 30)
        XCTAssertEqual(result.withLock { $0 }?.done, limit * 6)
        XCTAssertEqual(server.maxInFlight, limit)
    }

    func testFieldThumbnailURLArchivesTheThumbnails() throws {
        let server = try Fixtures.placeholderServer()
        let out = Fixtures.temporaryDirectory(self)
        var config = Fixtures.configuration(out: out, server: server)
        config.field = .thumbnailUrl
        let summary = try Fixtures.run(config, catalog: Fixtures.catalog(Fixtures.records(5)))
        XCTAssertEqual(summary.done, 5)
        let manifest = try Fixtures.manifest(in: out)
        XCTAssertEqual(manifest.field, .thumbnailUrl)
        XCTAssertEqual(Set(manifest.items.map(\.width)), [150])
        XCTAssertTrue(manifest.items.allSatisfy { $0.url.contains("/150/") && $0.source.hasPrefix(server.baseURL + "/150/") })
        XCTAssertEqual(server.requests.filter { $0.path.hasPrefix("/150/") }.count, 5)
    }

    func testNonPNGAndCorruptPNGBodiesFailWithTheirKindAndLeaveNoFile() throws {
        let server = try Fixtures.placeholderServer()
        var corrupt = Fixtures.served("/600/abcdef")
        corrupt[corrupt.count - 20] ^= 0xFF
        server.route("/600/000001", .text(200, "<html><body>not an image</body></html>"))
        server.route("/600/000002", HTTPResponse(status: 200, headers: [("Content-Type", "image/png")], body: .data(corrupt)))
        let out = Fixtures.temporaryDirectory(self)
        let records = [
            Fixtures.record(1, colour: "000001"), Fixtures.record(2, colour: "000002"), Fixtures.record(3, colour: "abcdef"),
        ]
        let summary = try Fixtures.run(Fixtures.configuration(out: out, server: server), catalog: Fixtures.catalog(records))
        XCTAssertEqual(summary.done, 1)
        XCTAssertEqual(summary.failed, 2)
        let items = try Fixtures.manifest(in: out).items
        XCTAssertEqual(items[0].status, .failed)
        XCTAssertEqual(items[0].error?.kind, "not-image")
        XCTAssertEqual(items[1].error?.kind, "invalid-png")
        XCTAssertNil(items[1].path)
        XCTAssertNil(items[1].sha256)
        XCTAssertEqual(items[2].status, .done)
        XCTAssertEqual(Fixtures.imageNames(in: out), ["3.png"])
        XCTAssertEqual(server.count("/600/000001"), 1, "a bad body is not retried")
    }

    func testHTTPErrorsAreRecordedWithTheirStatusAnd404IsNotRetried() throws {
        let server = try Fixtures.placeholderServer()
        server.route("/600/000404", .text(404, "gone"))
        let out = Fixtures.temporaryDirectory(self)
        var config = Fixtures.configuration(out: out, server: server)
        config.retries = 3
        let summary = try Fixtures.run(config, catalog: Fixtures.catalog([Fixtures.record(7, colour: "000404")]))
        XCTAssertEqual(summary.failed, 1)
        let item = try XCTUnwrap(Fixtures.manifest(in: out).items.first)
        XCTAssertEqual(item.error, RecordedError(kind: "http-status", status: 404, message: "HTTP 404 from \(server.baseURL)/600/000404"))
        XCTAssertEqual(item.attempts, 1)
        XCTAssertEqual(server.count("/600/000404"), 1)
    }

    /// The plan's quick check may only accept what the full parse accepts, and the address it
    /// lets through as written is the one the parse would give.
    func testTheQuickURLCheckNeverAcceptsWhatTheFullParseRejects() {
        func simple(_ text: String) -> Bool {
            var text = text
            return text.withUTF8(Plan.isSimpleHTTPURL)
        }
        for url in ["https://via.placeholder.com/600/92c952", "http://127.0.0.1:8080/600/92c952?n=1", "HTTP://H/x", "http://h", "http://h?q=1&r=2"] {
            XCTAssertTrue(simple(url), url)
            XCTAssertNotNil(Plan.httpURL(url), url)
            XCTAssertEqual(Plan.address(of: url), Plan.httpURL(url)?.absoluteString, url)
        }
        for url in ["http://h:/x", "http://:80/x", "http:///x", "http://u@h/x", "http://h/%41", "http://h/x#f", "http://[::1]/x",
                    "http://h:123456/x", "ftp://h/x", "https//h/x", "http://h/é", "http://h/a b", "httpss://h/x", "http://h\\x/y"] {
            XCTAssertFalse(simple(url), url)
        }
        // Random strings over the characters that matter: a quick yes must always be a full yes.
        let pieces = ["http", "https", "HTTP", "://", ":", "/", "?", "#", "%", "@", "[", "]", "h", "0", "8080", ".", "-", "_",
                      "~", "!", "$", "&", "'", "(", "*", "+", ",", ";", "=", " ", "é", "\\", "\"", "|", "\u{0}"]
        var generator = SeededGenerator()
        var accepted = 0
        for _ in 0..<20_000 {
            var url = Bool.random(using: &generator) ? "http://" : ""
            for _ in 0..<Int.random(in: 1...8, using: &generator) { url += pieces.randomElement(using: &generator)! }
            if simple(url) {
                accepted += 1
                XCTAssertNotNil(Plan.httpURL(url), "quick check accepted \(url)")
                // The job's address is the text as written: it must be what the URL would give.
                XCTAssertEqual(Plan.address(of: url), Plan.httpURL(url)?.absoluteString, url)
            }
        }
        XCTAssertGreaterThan(accepted, 100, "the random URLs exercised the yes side")
    }

    func testURLsThatAreNotHTTPFailAloneWithoutARequest() throws {
        let server = try Fixtures.placeholderServer()
        let out = Fixtures.temporaryDirectory(self)
        var records = Fixtures.records(2)
        records.append(CatalogRecord(albumId: 1, id: 3, title: "t", url: "file:///etc/passwd", thumbnailUrl: ""))
        records.append(CatalogRecord(albumId: 1, id: 4, title: "t", url: "not a url", thumbnailUrl: ""))
        let summary = try Fixtures.run(Fixtures.configuration(out: out, server: server), catalog: Fixtures.catalog(records))
        XCTAssertEqual(summary.done, 2)
        XCTAssertEqual(summary.failuresByKind, ["invalid-url": 2])
        XCTAssertEqual(server.total, 2)
        XCTAssertEqual(Fixtures.imageNames(in: out), ["1.png", "2.png"])
    }

    /// A record without the image key (or with an empty one) fails as invalid-url naming the key,
    /// not with an empty URL after the colon.
    func testARecordWithoutTheImageKeyFailsNamingTheKey() throws {
        let server = try Fixtures.placeholderServer()
        let out = Fixtures.temporaryDirectory(self)
        let records = Fixtures.records(1) + [CatalogRecord(albumId: 1, id: 2, title: "t", url: "", thumbnailUrl: "")]
        let summary = try Fixtures.run(Fixtures.configuration(out: out, server: server), catalog: Fixtures.catalog(records))
        XCTAssertEqual(summary.failuresByKind, ["invalid-url": 1])
        let item = try XCTUnwrap(Fixtures.manifest(in: out).items.last)
        XCTAssertEqual(item.error?.message, #"not an http(s) URL: the record has no "url", or an empty one"#)
    }

    func testMirrorRewritesTheLongestMatchingPrefix() {
        let mirrors = MirrorMap([
            (from: "https://via.placeholder.com", to: "http://a"), (from: "https://via.placeholder.com/150", to: "http://b/t"),
        ])
        XCTAssertEqual(mirrors.resolve("https://via.placeholder.com/600/abc"), "http://a/600/abc")
        XCTAssertEqual(mirrors.resolve("https://via.placeholder.com/150/abc"), "http://b/t/abc")
        XCTAssertEqual(mirrors.resolve("https://example.com/x"), "https://example.com/x")
        XCTAssertEqual(mirrors.resolve("https://via.placeholder.com"), "http://a")
        XCTAssertEqual(mirrors.resolve("https://via.placeholder.com/600/é?q=ü"), "http://a/600/é?q=ü")
        // `rewrites(_:by:to:)` agrees with `resolve` without making the string.
        for url in ["https://via.placeholder.com/600/abc", "https://via.placeholder.com/150/abc", "https://example.com/x",
                    "https://via.placeholder.com", "https://via.placeholder.com/150", ""] {
            let resolved = mirrors.resolve(url)
            XCTAssertTrue(mirrors.rewrites(url, by: mirrors.rule(for: url), to: resolved), url)
            XCTAssertFalse(mirrors.rewrites(url, by: mirrors.rule(for: url), to: resolved + "x"), url)
            XCTAssertFalse(mirrors.rewrites(url, by: mirrors.rule(for: url), to: String(resolved.dropLast())) && !resolved.isEmpty, url)
            XCTAssertFalse(mirrors.rewrites(url, by: mirrors.rule(for: url), to: url + "/other"), url)
        }
        XCTAssertFalse(mirrors.rewrites("https://via.placeholder.com/600/abc", by: mirrors.rule(for: "https://via.placeholder.com/600/abc"), to: "http://b/600/abc"))
        XCTAssertTrue(MirrorMap().rewrites("https://h/x", by: nil, to: "https://h/x"))
        XCTAssertNil(MirrorMap.parseRule("no-equals-sign"))
        XCTAssertNil(MirrorMap.parseRule("=http://to"))
    }

    /// The plan matches each record's URL against the rules once; the job's address and the
    /// manifest's source are made from the rule it chose, and are what `resolve` makes.
    func testMirrorChoicesMakeTheURLFromTheRuleChosenOnce() {
        let map = MirrorMap([
            (from: "https://via.placeholder.com", to: "http://a"), (from: "https://via.placeholder.com/150", to: "http://b/t"),
        ])
        let urls = ["https://via.placeholder.com/600/abc", "https://via.placeholder.com/150/abc", "https://example.com/x", ""]
        var choices = MirrorChoices(map, count: urls.count + 1)
        for (position, url) in urls.enumerated() { choices.choose(url, at: position) }
        for (position, url) in urls.enumerated() {
            XCTAssertEqual(choices.address(of: url, at: position), map.resolve(url), url)
            XCTAssertTrue(choices.isAddress(map.resolve(url), of: url, at: position), url)
            XCTAssertFalse(choices.isAddress(map.resolve(url) + "x", of: url, at: position), url)
        }
        // The choice is kept, not made again: position 2 chose no rule.
        XCTAssertEqual(choices.address(of: "https://via.placeholder.com/600/abc", at: 2), "https://via.placeholder.com/600/abc")
        // A URL its chosen rule does not fit (the catalog edited under the run) is matched again,
        // not cut: position 1 chose the 150 rule.
        XCTAssertEqual(choices.address(of: "https://via.placeholder.com/6", at: 1), "http://a/6")
        XCTAssertEqual(choices.address(of: "x", at: 1), "x")
        XCTAssertTrue(choices.isAddress("x", of: "x", at: 1))
        XCTAssertFalse(choices.isAddress("http://b/t", of: "x", at: 1))
        // A position never chosen matches the rules when asked.
        XCTAssertEqual(choices.address(of: "https://via.placeholder.com/1", at: urls.count), "http://a/1")
        // Past the 254th rule the byte cannot say which: those URLs are matched again, and still right.
        let many = MirrorMap((0..<300).map { (from: "https://h/" + String(repeating: "a", count: $0), to: "http://m\($0)/") })
        var manyChoices = MirrorChoices(many, count: 3)
        for (position, url) in ["https://h/", "https://h/" + String(repeating: "a", count: 299), "https://other/"].enumerated() {
            manyChoices.choose(url, at: position)
            XCTAssertEqual(manyChoices.address(of: url, at: position), many.resolve(url), url)
        }
        XCTAssertEqual(manyChoices.address(of: "https://h/", at: 0), "http://m0/")
        // Without rules nothing is kept and every URL is its own address.
        var none = MirrorChoices(MirrorMap(), count: 2)
        none.choose("https://h/x", at: 1)
        XCTAssertEqual(none.address(of: "https://h/x", at: 1), "https://h/x")
        XCTAssertTrue(none.isAddress("https://h/x", of: "https://h/x", at: 1))
    }

    /// What the manifest says each record was fetched from is the rule the plan chose for it,
    /// for a done, a failed and a rejected record, and two catalog URLs that two rules map to one
    /// address are one request.
    func testTheManifestSourceIsTheURLTheChosenMirrorRuleMakes() throws {
        let server = try Fixtures.placeholderServer()
        server.route("/600/404040", .text(404, "gone\n"))
        let out = Fixtures.temporaryDirectory(self)
        var config = Fixtures.configuration(out: out, server: server)
        config.mirrors = MirrorMap([
            (from: Fixtures.host, to: server.baseURL), (from: "https://other.example/images", to: server.baseURL + "/600"),
            (from: "https://old.example", to: "ftp://old.example"),
        ])
        let records = [
            Fixtures.record(1, colour: "ff0000"),
            CatalogRecord(albumId: 1, id: 2, title: "t", url: "https://other.example/images/ff0000", thumbnailUrl: ""),
            CatalogRecord(albumId: 1, id: 3, title: "t", url: "https://other.example/images/404040", thumbnailUrl: ""),
            CatalogRecord(albumId: 1, id: 4, title: "t", url: "https://old.example/x.png", thumbnailUrl: ""),
        ]
        let summary = try Fixtures.run(config, catalog: Fixtures.catalog(records))
        XCTAssertEqual(summary.done, 2)
        XCTAssertEqual(server.count("/600/ff0000"), 1, "records 1 and 2 share one address")
        let sources = Dictionary(uniqueKeysWithValues: try Fixtures.manifest(in: out).items.map { ($0.id, ($0.source, $0.status)) })
        XCTAssertEqual(sources[1]?.0, server.baseURL + "/600/ff0000")
        XCTAssertEqual(sources[2]?.0, server.baseURL + "/600/ff0000")
        XCTAssertEqual(sources[3]?.0, server.baseURL + "/600/404040")
        XCTAssertEqual(sources[3]?.1, .failed)
        XCTAssertEqual(sources[4]?.0, "ftp://old.example/x.png")
        XCTAssertEqual(sources[4]?.1, .failed)
    }

    /// An Archiver's queue, feed and completion signal serve one run; a second call used to wait
    /// forever on a signal that had already been used.
    func testASecondRunOfOneArchiverFailsInsteadOfHanging() throws {
        let server = try Fixtures.placeholderServer()
        let config = Fixtures.configuration(out: Fixtures.temporaryDirectory(self), server: server)
        let archiver = Archiver(configuration: config, fetcher: Fixtures.fetcher(for: config))
        let catalog = try Fixtures.catalog(Fixtures.records(3))
        XCTAssertEqual(try archiver.run(catalog: catalog).done, 3)
        XCTAssertThrowsError(try archiver.run(catalog: catalog)) { error in
            XCTAssertEqual(error as? RunError, .alreadyRun)
        }
    }
}
