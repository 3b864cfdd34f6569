import Foundation
import XCTest
@testable import ArchiverCore

final class GalleryTests: XCTestCase {
    private var fixture: BundleFixture!

    override func setUpWithError() throws {
        fixture = try BundleFixture.make(count: 12, failed: [5], pending: [6]) { id in
            id == 2 ? "<script>alert('x')</script> & \"quotes\"" : "photo \(id)"
        }
    }

    override func tearDown() {
        fixture.remove()
    }

    func testTitlesAreEscaped() throws {
        let html = Gallery.html(for: try fixture.manifest())
        XCTAssertFalse(html.contains("<script>"))
        XCTAssertTrue(html.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;quotes&quot;"))
        XCTAssertFalse(html.contains("<script"), "no script of our own either")
    }

    func testDoneItemsShowTheirImageScaledFailedTheirErrorPendingMarked() throws {
        let html = Gallery.html(for: try fixture.manifest())
        XCTAssertTrue(html.contains("<img loading=\"lazy\" src=\"images/1.png\" width=\"75\" height=\"60\""), "5x4 scaled")
        XCTAssertEqual(html.components(separatedBy: "<img ").count - 1, 10)
        XCTAssertFalse(html.contains("src=\"images/5.png\""))
        XCTAssertTrue(html.contains("<b>http-status 404</b> HTTP 404 from https://via.placeholder.com/600/5"))
        XCTAssertTrue(html.contains("<tr class=\"pending\" id=\"item-6\"><td class=\"image\"><div class=\"pending\">pending</div>"))
    }

    func testItemsAreGroupedByAlbumInOrder() throws {
        let html = Gallery.html(for: try fixture.manifest())
        let headers = ["Album 1 ", "Album 2 ", "Album 3 "].map { html.range(of: "<h2>" + $0)?.lowerBound }
        XCTAssertTrue(headers.allSatisfy { $0 != nil })
        XCTAssertLessThan(headers[0]!, html.range(of: "id=\"item-5\"")!.lowerBound)
        XCTAssertLessThan(html.range(of: "id=\"item-5\"")!.lowerBound, headers[1]!)
        XCTAssertLessThan(headers[1]!, html.range(of: "id=\"item-6\"")!.lowerBound)
    }

    func testNonHTTPURLsAreNotLinks() throws {
        var manifest = try fixture.manifest()
        manifest.items[0].url = "javascript:alert(1)"
        let html = Gallery.html(for: manifest)
        XCTAssertFalse(html.contains("href=\"javascript"))
        XCTAssertTrue(html.contains("<td class=\"url\">javascript:alert(1)"))
    }

    func testOnlyHTTPAndHTTPSInAnyCaseCountAsLinks() {
        for url in ["http://h/1", "https://h/1", "HTTPS://H/1", "hTtP://h"] {
            XCTAssertTrue(Gallery.isHTTP(url), url)
        }
        for url in ["", "http", "http:/", "https:/h", "ftp://h/1", "javascript:alert(1)", " http://h", "httpx://h"] {
            XCTAssertFalse(Gallery.isHTTP(url), url)
        }
    }

    func testPageIsSelfContainedAndDeterministic() throws {
        let manifest = try fixture.manifest()
        let html = Gallery.html(for: manifest)
        XCTAssertEqual(html, Gallery.html(for: manifest))
        XCTAssertFalse(html.contains("<link"))
        XCTAssertFalse(html.contains("src=\"http"))
        XCTAssertFalse(html.contains("url("))
    }

    func testWriteCreatesIndexHTMLAtomically() throws {
        let manifest = try fixture.manifest()
        try Gallery.write(for: manifest, in: fixture.layout)
        XCTAssertEqual(try String(contentsOf: fixture.layout.gallery, encoding: .utf8), Gallery.html(for: manifest))
        let names = try FileManager.default.contentsOfDirectory(atPath: fixture.root.path).sorted()
        XCTAssertEqual(names, [".archiver", "images", "index.html", "manifest.json"])
    }

    func testThumbnailSizeFitsTheSquareKeepingAspect() {
        XCTAssertEqual(Gallery.thumbnailSize(width: 600, height: 600).0, 75)
        XCTAssertTrue(Gallery.thumbnailSize(width: 600, height: 150) == (75, 19))
        XCTAssertTrue(Gallery.thumbnailSize(width: 10, height: 20) == (38, 75))
        XCTAssertTrue(Gallery.thumbnailSize(width: nil, height: nil) == (75, 75))
    }
}
