import Foundation
import XCTest
@testable import ArchiverCore

final class ManifestTests: XCTestCase {
    private func manifest() throws -> Manifest {
        let records = [
            CatalogRecord(albumId: 2, id: 9, title: "quote \" backslash \\ tab \t newline \n bell \u{7} é 🎞", url: "https://h/9", thumbnailUrl: ""),
            CatalogRecord(albumId: 1, id: 3, title: "plain", url: "https://h/3", thumbnailUrl: ""),
            CatalogRecord(albumId: 1, id: 5, title: "pending", url: "https://h/5", thumbnailUrl: ""),
        ]
        let outcomes: [RecordID: ItemRecord] = [
            3: ItemRecord(id: 3, url: "https://h/3", source: "http://m/3", status: .done, bytes: 10, sha256: SHA256Digest(hex: String(repeating: "ab", count: 32)), width: 600, height: 600, attempts: 1),
            9: ItemRecord(id: 9, url: "https://h/9", source: "http://m/9", status: .failed, attempts: 4,
                          error: RecordedError(kind: "http-status", status: 503, message: "HTTP 503 \"busy\"")),
        ]
        return Manifest(catalog: try Fixtures.catalog(records, source: "cat\"alog.json"), field: .url, mirrors: MirrorMap(), outcomes: outcomes)
    }

    func testEncodingRoundTripsThroughAJSONParserWithEveryKindOfString() throws {
        let manifest = try manifest()
        let data = manifest.encoded()
        XCTAssertEqual(try JSONDecoder().decode(Manifest.self, from: data), manifest)
        XCTAssertNoThrow(try JSONSerialization.jsonObject(with: data))
        XCTAssertEqual(manifest.items.map(\.id), [3, 5, 9], "items sorted by id")
        XCTAssertEqual(manifest.items.map(\.status), [.done, .pending, .failed])
    }

    func testOneItemPerLineWithSortedKeysAndNothingRunDependent() throws {
        let text = String(decoding: try manifest().encoded(), as: UTF8.self)
        let lines = text.split(separator: "\n")
        XCTAssertEqual(lines.filter { $0.hasPrefix("    {\"albumId\"") }.count, 3)
        let done = try XCTUnwrap(lines.first { $0.contains("\"id\": 3,") })
        let keys = done.matches(of: #/"(\w+)": /#).map { String($0.output.1) }
        XCTAssertEqual(keys, ["albumId", "attempts", "bytes", "format", "height", "id", "path", "sha256", "source", "status", "title", "url", "width"])
        XCTAssertEqual(try manifest().encoded(), try manifest().encoded())
        XCTAssertTrue(text.hasPrefix("{\n  \"catalog\": {\"records\": 3, \"sha256\": "))
        XCTAssertTrue(text.hasSuffix("  \"version\": 1\n}\n"))
    }

    func testValidatorsAreWrittenOnlyWhenSentWithTheirKeysInOrder() throws {
        let record = CatalogRecord(albumId: 1, id: 4, title: "t", url: "https://h/4", thumbnailUrl: "")
        let outcome = ItemRecord(
            id: 4, url: "https://h/4", source: "http://m/4", status: .done, bytes: 10, sha256: SHA256Digest(hex: String(repeating: "ab", count: 32)), width: 6, height: 6,
            attempts: 1, validators: Validators(etag: "\"5f-8b\"", lastModified: "Tue, 14 Nov 2023 22:13:20 GMT"))
        let manifest = Manifest(catalog: try Fixtures.catalog([record]), field: .url, mirrors: MirrorMap(), outcomes: [4: outcome])
        let text = String(decoding: manifest.encoded(), as: UTF8.self)
        let line = try XCTUnwrap(text.split(separator: "\n").first { $0.contains("\"id\": 4,") })
        let keys = line.matches(of: #/"(\w+)": /#).map { String($0.output.1) }
        XCTAssertEqual(
            keys,
            ["albumId", "attempts", "bytes", "etag", "format", "height", "id", "lastModified", "path", "sha256", "source", "status", "title", "url", "width"])
        XCTAssertEqual(try JSONDecoder().decode(Manifest.self, from: manifest.encoded()), manifest)
        XCTAssertEqual(manifest.items[0].etag, "\"5f-8b\"")
        XCTAssertFalse(String(decoding: try self.manifest().encoded(), as: UTF8.self).contains("etag"), "none when none was sent")
    }
}
