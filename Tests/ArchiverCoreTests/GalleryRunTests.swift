import Foundation
import XCTest
@testable import ArchiverCore

/// The paged gallery as `archiver run` writes it: failures by kind, stale pages removed on a
/// rerun, and an unchanged rerun that rewrites no page.
final class GalleryRunTests: XCTestCase {
    /// `count` records whose URLs are not http(s): each fails as `invalid-url` without a request.
    private func unfetchable(_ count: Int) -> [CatalogRecord] {
        (1...count).map { CatalogRecord(albumId: 1 + $0 / 300, id: RecordID($0), title: "ftp \($0)", url: "ftp://h/\($0).png", thumbnailUrl: "") }
    }

    private func pageNames(_ out: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: BundleLayout(root: out).pages.path).sorted()
    }

    func testARunWithFailuresListsEachFailedItemUnderItsKind() throws {
        let server = try Fixtures.placeholderServer()
        let out = Fixtures.temporaryDirectory(self)
        var records = Fixtures.records(6)
        records += [CatalogRecord(albumId: 1, id: 7, title: "ftp <7>", url: "ftp://h/7.png", thumbnailUrl: "")]
        records += [8, 9].map { CatalogRecord(albumId: 2, id: $0, title: "gone \($0)", url: Fixtures.host + "/600/nothex\($0)", thumbnailUrl: "") }
        let summary = try Fixtures.run(Fixtures.configuration(out: out, server: server), catalog: Fixtures.catalog(records))
        XCTAssertEqual(summary.failed, 3)
        let manifest = try Fixtures.manifest(in: out)
        let failures = try String(contentsOf: out.appendingPathComponent("pages/failures-0001.html"), encoding: .utf8)
        for item in manifest.items where item.status == .failed {
            let kind = try XCTUnwrap(item.error?.kind)
            let section = try XCTUnwrap(failures.range(of: "<section id=\"kind-\(kind)\">"), kind)
            let rest = failures[section.upperBound...]
            let end = rest.range(of: "</section>")!.lowerBound
            XCTAssertTrue(rest[..<end].contains("<tr id=\"item-\(item.id)\">"), "\(item.id) under \(kind)")
            XCTAssertTrue(rest[..<end].contains(Gallery.escape(item.error!.message)), "\(item.id)'s message")
        }
        XCTAssertTrue(failures.contains("<td class=\"title\">ftp &lt;7&gt;</td>"))
        let front = try String(contentsOf: out.appendingPathComponent("index.html"), encoding: .utf8)
        XCTAssertTrue(front.contains("6 done, 3 failed, 0 pending"))
        XCTAssertTrue(front.contains("<a href=\"pages/failures-0001.html#kind-invalid-url\">invalid-url</a>: 1 item"))
    }

    /// A rerun with fewer records removes the pages beyond the new counts; what is left is
    /// exactly what the manifest gives, and every page the front page links to exists.
    func testARerunWithFewerRecordsRemovesTheStalePages() throws {
        let server = try Fixtures.placeholderServer()
        let out = Fixtures.temporaryDirectory(self)
        let config = Fixtures.configuration(out: out, server: server)
        XCTAssertEqual(try Fixtures.run(config, catalog: Fixtures.catalog(unfetchable(2500))).failed, 2500)
        XCTAssertEqual(try pageNames(out), ["0001.html", "0002.html", "0003.html", "failures-0001.html", "failures-0002.html", "failures-0003.html"])

        XCTAssertEqual(try Fixtures.run(config, catalog: Fixtures.catalog(unfetchable(1200))).failed, 1200)
        XCTAssertEqual(try pageNames(out), ["0001.html", "0002.html", "failures-0001.html", "failures-0002.html"])
        let files = try GalleryFiles.read(out)
        XCTAssertEqual(files, try GalleryFiles.expected(for: Fixtures.manifest(in: out)))
        XCTAssertTrue(GalleryFiles.reachable(in: files).isSuperset(of: files.keys))
        XCTAssertEqual(server.total, 0)
    }

    func testAnUnchangedRerunRewritesNoPageButRepairsAMissingOrAddedOne() throws {
        let server = try Fixtures.placeholderServer()
        let out = Fixtures.temporaryDirectory(self)
        var config = Fixtures.configuration(out: out, server: server)
        config.skipFailed = true  // otherwise each rerun tries the failures again, and rewrites
        let catalog = try Fixtures.catalog(Fixtures.records(3) + unfetchable(1100).dropFirst(3))
        _ = try Fixtures.run(config, catalog: catalog)
        let pages = BundleLayout(root: out).pages
        let before = try GalleryFiles.read(out)
        func inode(_ name: String) throws -> Int {
            try XCTUnwrap(FileManager.default.attributesOfItem(atPath: pages.appendingPathComponent(name).path)[.systemFileNumber] as? Int)
        }
        let inodes = try ["0001.html", "0002.html", "failures-0001.html"].map(inode)

        let debris = pages.appendingPathComponent(".0001.html.tmp-4242-17")  // what a SIGKILL leaves
        try Data("half a page".utf8).write(to: debris)
        _ = try Fixtures.run(config, catalog: catalog)
        XCTAssertEqual(try ["0001.html", "0002.html", "failures-0001.html"].map(inode), inodes, "an unchanged bundle is not rewritten")
        XCTAssertFalse(FileManager.default.fileExists(atPath: debris.path), "a killed run's temporary page is removed")

        try FileManager.default.removeItem(at: pages.appendingPathComponent("0002.html"))
        _ = try Fixtures.run(config, catalog: catalog)
        XCTAssertEqual(try GalleryFiles.read(out), before, "a missing page is written again")

        try Data("stale".utf8).write(to: pages.appendingPathComponent("0003.html"))
        _ = try Fixtures.run(config, catalog: catalog)
        XCTAssertEqual(try GalleryFiles.read(out), before, "a page the gallery does not have is removed")
        XCTAssertEqual(server.total, 3)
    }
}
