import Foundation
import XCTest
@testable import ArchiverCore

/// `ItemSpool`: the items merge decodes once, written and read back unchanged.
final class ItemSpoolTests: XCTestCase {
    /// An item with every optional field set (a done item's facts and a failure's error both),
    /// and a string id; and a bare pending one with an integer id.
    private func items() -> [Manifest.Item] {
        var full = Manifest.Item(
            id: RecordID("é-7"), albumId: -3, title: "a \"title\"\n", url: "https://example.com/a?b=c",
            source: "http://127.0.0.1:9/a", status: .failed, attempts: 4)
        full.path = "images/e-7.webp"
        full.format = .webp
        full.frames = 12
        full.bytes = 5_000_000_000
        full.sha256 = String(repeating: "ab", count: 32)
        full.width = 640
        full.height = 480
        full.error = RecordedError(kind: "http-status", status: 503, message: "the server answered 503")
        full.etag = "\"v1\""
        full.lastModified = "Tue, 01 Dec 2026 10:00:00 GMT"
        var noStatus = Manifest.Item(
            id: RecordID(Int.min), albumId: Int.max - 1000, title: "", url: "", source: "", status: .failed, attempts: 0)
        noStatus.error = RecordedError(kind: "timeout", message: "timed out")
        let pending = Manifest.Item(id: 7, albumId: 1, title: "t", url: "u", source: "s", status: .pending, attempts: 0)
        return [full, noStatus, pending]
    }

    func testEveryFieldOfAnItemComesBackAsItWas() throws {
        let path = Fixtures.temporaryDirectory(self).appendingPathComponent("items").path
        let writer = try ItemSpool.Writer(path: path)
        // Enough items to cross the writer's and the reader's 64 KiB windows, and one item larger than a window.
        var written: [Manifest.Item] = []
        for round in 0..<1000 { written += items().map { item in var item = item; item.albumId += round; return item } }
        var big = items()[2]
        big.title = String(repeating: "x", count: 200_000)
        written.insert(big, at: 500)
        for item in written { writer.add(item) }
        try writer.finish()

        let reader = try ItemSpool.Reader(path: path)
        var read: [Manifest.Item] = []
        while let item = try reader.next() { read.append(item) }
        XCTAssertEqual(read.count, written.count)
        XCTAssertEqual(read, written)
        XCTAssertEqual(read[0].id.string, "é-7", "a string id stays a string")
    }

    func testASpoolCutInsideAnItemIsAnErrorNotTheEnd() throws {
        let path = Fixtures.temporaryDirectory(self).appendingPathComponent("items").path
        let writer = try ItemSpool.Writer(path: path)
        for item in items() { writer.add(item) }
        try writer.finish()
        let size = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        XCTAssertEqual(truncate(path, off_t(size - 3)), 0)

        let reader = try ItemSpool.Reader(path: path)
        XCTAssertNotNil(try reader.next())
        XCTAssertNotNil(try reader.next())
        XCTAssertThrowsError(try reader.next()) { error in
            XCTAssertEqual((error as? BundleError)?.description.contains("damaged"), true, "\(error)")
        }
    }
}
