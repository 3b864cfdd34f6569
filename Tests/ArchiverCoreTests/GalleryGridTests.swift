import Foundation
import XCTest
@testable import ArchiverCore

/// The gallery as something to look at (issue 26): the front page's album covers, the details
/// each image carries for the dialog, image files named by the manifest's paths, every field
/// escaped in its new places, and the inline script and search box on item pages only.
final class GalleryGridTests: XCTestCase {
    /// A done item of `album` with the recorded facts of a 600x400 image.
    private func done(_ id: Int, album: Int, title: String? = nil, path: String? = nil) -> Manifest.Item {
        Manifest.Item(
            id: RecordID(id), albumId: album, title: title ?? "photo \(id)", url: "https://img.example/600/\(id)",
            source: "https://img.example/600/\(id)", status: .done, path: path ?? "images/\(id).png", bytes: 1234,
            sha256: String(repeating: "ab", count: 32), width: 600, height: 400, attempts: 1)
    }

    private func failed(_ id: Int, album: Int) -> Manifest.Item {
        Manifest.Item(
            id: RecordID(id), albumId: album, title: "photo \(id)", url: "https://img.example/600/\(id)",
            source: "https://img.example/600/\(id)", status: .failed, attempts: 1,
            error: RecordedError(kind: "timeout", message: "no answer in 30 s"))
    }

    private func gallery(_ items: [Manifest.Item], source: String = "photos.json") throws -> [String: String] {
        try GalleryFiles.expected(for: Manifest(
            catalog: Manifest.CatalogInfo(source: source, sha256: String(repeating: "0", count: 64), records: items.count),
            field: .url, items: items))
    }

    /// An album's cover is its first done item (an album with none shows a tile saying so), and
    /// links to where the album starts; each card has the album's size and its failures.
    func testEachAlbumsCoverIsItsFirstDoneImageLinkingToItsPlace() throws {
        let items = [failed(1, album: 7), done(2, album: 7), done(3, album: 7), failed(4, album: 8)]
            + (5...1004).map { done($0, album: 9) } + [failed(1005, album: 9), done(1006, album: 10)]
        let front = try gallery(items)["index.html"]!
        XCTAssertTrue(front.contains(
            "<ul class=\"grid covers\">\n<li><a href=\"pages/0001.html#group-1\"><img loading=\"lazy\" src=\"images/2.png\" "
                + "width=\"150\" height=\"100\" alt=\"photo 2\"><span><b>Album 7</b><small>#1 · 3 items · 1 failed</small></span></a></li>\n"
                + "<li class=\"failed\"><a href=\"pages/0001.html#group-4\"><div class=\"tile\">no image</div>"
                + "<span><b>Album 8</b><small>#4 · 1 item · 1 failed</small></span></a></li>\n"
                + "<li><a href=\"pages/0001.html#group-5\"><img loading=\"lazy\" src=\"images/5.png\""))
        XCTAssertTrue(front.contains("<li><a href=\"pages/0002.html#group-1006\"><img loading=\"lazy\" src=\"images/1006.png\""))
        XCTAssertTrue(front.contains("<small>#5 · 1001 items · 1 failed</small>"))
        XCTAssertTrue(front.contains("1006 items from photos.json: 1003 done, 3 failed, 0 pending."), "the counts stay")
        XCTAssertTrue(front.contains("<a href=\"pages/failures-0001.html#kind-timeout\">timeout</a>: 3 items"))
        XCTAssertEqual(GalleryFiles.count("<img ", in: front), 3)
    }

    /// Past `Gallery.coveredGroups` albums, the first that many have covers and the rest are
    /// linked by number; every album is linked once.
    func testAlbumsPastTheCoveredOnesAreLinkedByNumber() throws {
        let count = Gallery.coveredGroups + 3
        let front = try gallery((1...count).map { done($0, album: $0) })["index.html"]!
        XCTAssertEqual(GalleryFiles.count("<img ", in: front), Gallery.coveredGroups)
        XCTAssertEqual(GalleryFiles.count("#group-", in: front), count)
        XCTAssertTrue(front.contains(
            "</ul>\n<p>The other 3, by number:</p>\n<nav> <a href=\"pages/0001.html#group-501\">501</a> "
                + "<a href=\"pages/0001.html#group-502\">502</a> <a href=\"pages/0001.html#group-503\">503</a></nav>\n</section>"))
    }

    /// The image comes from the path the manifest records, so its extension is the format's:
    /// a JPEG's details say `jpeg`; a `%` in a key is written `%25`; an item without a path
    /// falls back to its id's `.png`.
    func testTheImageFileAndFormatComeFromTheRecordedPath() throws {
        var noPath = done(3, album: 1)
        noPath.path = nil
        let items = [done(1, album: 1, path: "images/1.jpg"), done(2, album: 1, path: "images/2.webp"), noPath]
        var string = done(4, album: 1, path: "images/a%2Fb.gif")
        string.id = RecordID("a/b")
        let files = try gallery(items + [string])
        let page = files["pages/0001.html"]!
        XCTAssertTrue(page.contains("<a href=\"../images/1.jpg\" data-f=\"jpeg\""))
        XCTAssertTrue(page.contains("<img loading=\"lazy\" src=\"../images/1.jpg\""))
        XCTAssertTrue(page.contains("<a href=\"../images/2.webp\" data-f=\"webp\""))
        XCTAssertTrue(page.contains("<a href=\"../images/3.png\" data-f=\"png\""))
        XCTAssertTrue(page.contains("<a href=\"../images/a%252Fb.gif\" data-f=\"gif\""))
        XCTAssertTrue(files["index.html"]!.contains("src=\"images/1.jpg\""), "the cover too")
    }

    /// The details a done image carries: format, size, bytes, sha256 and the catalog URL, and
    /// the URL fetched only when a mirror made it another.
    func testEachImageCarriesItsDetailsAndTheMirrorOnlyWhenOneWasUsed() throws {
        var mirrored = done(2, album: 1)
        mirrored.source = "http://127.0.0.1:8080/600/2"
        let page = try gallery([done(1, album: 1), mirrored])["pages/0001.html"]!
        XCTAssertTrue(page.contains(
            "<a href=\"../images/1.png\" data-f=\"png\" data-w=\"600\" data-h=\"400\" data-b=\"1234\" "
                + "data-s=\"\(String(repeating: "ab", count: 32))\" data-u=\"https://img.example/600/1\"><img "))
        XCTAssertTrue(page.contains("data-u=\"https://img.example/600/2\" data-m=\"http://127.0.0.1:8080/600/2\"><img "))
        XCTAssertEqual(GalleryFiles.count("data-m=", in: page), 1)
        XCTAssertTrue(page.contains("<dialog id=\"details\""))
        XCTAssertTrue(page.contains("<div class=\"search\" id=\"search\" role=\"search\" hidden>"), "hidden without the script")
        for script in ["textContent=s.m", "showModal", "ArrowLeft", "ArrowRight", "/^https?:\\/\\//i.test(url)"] {
            XCTAssertTrue(page.contains(script), script)
        }
        XCTAssertFalse(page.contains("innerHTML"), "the script sets text, never markup")
    }

    /// Titles, URLs, the mirror, the recorded facts and the source, with `<>&"'` in each, are
    /// escaped wherever they now appear: alt text, captions, `data-` attributes, covers.
    func testEveryFieldIsEscapedInTheTilesDetailsAndCovers() throws {
        let hostile = "<b>\"a\" & 'b'</b>"
        let escaped = "&lt;b&gt;&quot;a&quot; &amp; &#39;b&#39;&lt;/b&gt;"
        var item = done(1, album: 1, title: hostile, path: "images/1.p\"ng")
        item.url = "https://h/\"><script>alert(1)</script>"
        item.source = "http://m/'><img src=x onerror=alert(2)>"
        item.sha256 = "\"><script>alert(3)</script>"
        let files = try gallery([item, failed(2, album: 1)], source: hostile)
        let page = files["pages/0001.html"]!
        XCTAssertTrue(page.contains("alt=\"\(escaped)\""))
        XCTAssertTrue(page.contains("<span class=\"t\">\(escaped)</span>"))
        XCTAssertTrue(page.contains("data-u=\"https://h/&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;\""))
        XCTAssertTrue(page.contains("data-m=\"http://m/&#39;&gt;&lt;img src=x onerror=alert(2)&gt;\""))
        XCTAssertTrue(page.contains("data-s=\"&quot;&gt;&lt;script&gt;alert(3)&lt;/script&gt;\""))
        XCTAssertTrue(page.contains("<a href=\"../images/1.p%22ng\" data-f=\"p&quot;ng\""))
        XCTAssertTrue(files["index.html"]!.contains("alt=\"\(escaped)\""), "the cover's alt text")
        for (path, html) in files {
            for raw in [hostile, "<script>alert", "<img src=x", "1.p\"ng"] { XCTAssertFalse(html.contains(raw), "\(path): \(raw)") }
        }
    }

    /// A cover's alt text keeps `Gallery.coverTitleBytes` of a long title, cut on a character.
    func testALongTitleIsCutOnTheCoverOnly() throws {
        let title = String(repeating: "é", count: 80)  // 160 bytes
        let files = try gallery([done(1, album: 1, title: title)])
        XCTAssertTrue(files["index.html"]!.contains("alt=\"\(String(repeating: "é", count: 50))…\""))
        XCTAssertTrue(files["pages/0001.html"]!.contains("alt=\"\(title)\""))
    }

    /// The same manifest gives the same bytes, covers, details and script included.
    func testTheGridPagesAreReproducible() throws {
        let items = (1...2500).map { $0 % 7 == 0 ? failed($0, album: $0 / 40) : done($0, album: $0 / 40) }
        XCTAssertEqual(try gallery(items), try gallery(items))
    }
}
