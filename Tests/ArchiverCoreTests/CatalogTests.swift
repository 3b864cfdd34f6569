import Foundation
import XCTest
@testable import ArchiverCore

final class CatalogTests: XCTestCase {
    private func fast(_ text: String) -> [CatalogRecord]? {
        Data(text.utf8).withUnsafeBytes { CatalogParser.records(in: $0.bindMemory(to: UInt8.self)) }
    }

    func testTheFastParserReadsTheRealCatalogExactlyAsJSONDecoderDoes() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("samples/photos.json")
        let data = try Data(contentsOf: url)
        let parsed = try XCTUnwrap(data.withUnsafeBytes { CatalogParser.records(in: $0.bindMemory(to: UInt8.self)) })
        XCTAssertEqual(parsed.count, 5000)
        XCTAssertEqual(parsed, try JSONDecoder().decode([CatalogRecord].self, from: data))
    }

    func testEscapesUnicodeUnknownFieldsAndSpacingMatchJSONDecoder() throws {
        let text = """
             [ {"extra": {"nested": [1, 2.5e3, "x\\"y", null, true, {}]}, "albumId": -3, "id" : 7,
               "title": "tab\\t quote\\" slash\\/ back\\\\ \\u00e9 \\ud83c\\udf9e \\n end",
               "url": "https://h/7", "thumbnailUrl": "", "more": false},
              {"albumId":1,"id":8,"title":"é 🎞 plain","url":"u","thumbnailUrl":"t"} ]\u{20}
            """
        let parsed = try XCTUnwrap(fast(text))
        XCTAssertEqual(parsed, try JSONDecoder().decode([CatalogRecord].self, from: Data(text.utf8)))
        XCTAssertEqual(parsed[0].title, "tab\t quote\" slash/ back\\ é 🎞 \n end")
        XCTAssertEqual(fast("[]"), [])
    }

    func testAnythingUnexpectedIsLeftToJSONDecoderForItsMessage() throws {
        let record = #"{"albumId": 1, "id": 1, "title": "t", "url": "u", "thumbnailUrl": "v"}"#
        for text in [
            "[" + record, "[" + record + ",]", "[" + record + "] x", "{}", "",
            #"[{"albumId": 1, "id": 1.5, "title": "t", "url": "u", "thumbnailUrl": "v"}]"#,
            #"[{"albumId": 1, "id": "1", "title": "t", "url": "u", "thumbnailUrl": "v"}]"#,
            #"[{"albumId": 1, "title": "t", "url": "u", "thumbnailUrl": "v"}]"#,
            #"[{"albumId": 1, "id": 1, "title": "bad \q escape", "url": "u", "thumbnailUrl": "v"}]"#,
            #"[{"albumId": 1, "id": 1, "title": "lone \ud800 surrogate", "url": "u", "thumbnailUrl": "v"}]"#,
            #"[{"albumId": 1, "id": 99999999999999999999, "title": "t", "url": "u", "thumbnailUrl": "v"}]"#,
        ] {
            XCTAssertNil(fast(text), text)
        }
        XCTAssertThrowsError(try Catalog(source: "c.json", data: Data(("[" + record + ",\n {\"id\": }]").utf8))) { error in
            XCTAssertTrue("\(error)".contains("line 2"), "\(error)")
        }
    }

    /// A file read a window at a time gives the same records, in order, and the same SHA-256
    /// as the whole text in memory, across window edges and for a record longer than a window.
    func testAFileIsScannedInWindowsExactlyAsTheWholeTextIs() throws {
        var records = Fixtures.records(3000)
        records[1234].title = String(repeating: "long \\ title ", count: 12_000)  // ~150 KB, past 64 KiB
        records[2000].title = "é 🎞 \u{1}"
        let dir = Fixtures.temporaryDirectory(self)
        let path = try Fixtures.writeCatalog(records, to: dir.appendingPathComponent("c.json"))
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        XCTAssertGreaterThan(data.count, 600_000, "several 256 KiB windows")

        let fromFile = try Catalog(source: path, path: path)
        let inMemory = try Catalog(source: path, data: data)
        XCTAssertEqual(fromFile.sha256, SHA256.hex(data))
        XCTAssertEqual(inMemory.sha256, fromFile.sha256)
        XCTAssertEqual(Array(fromFile.records), records)
        XCTAssertEqual(Array(inMemory.records), records)
        XCTAssertEqual(fromFile.records[1234], records[1234], "one record read on its own")
        XCTAssertEqual(fromFile.records.position(ofID: 2001), 2000)
        XCTAssertNil(fromFile.records.position(ofID: 0))
        XCTAssertFalse(fromFile.changedSinceLoad)
    }

    /// A record over the fast parser's 1 MiB limit goes through JSONDecoder, still in order.
    func testAHugeRecordFallsBackToJSONDecoder() throws {
        var records = Fixtures.records(3)
        records[1].title = String(repeating: "x", count: 1_100_000)
        let dir = Fixtures.temporaryDirectory(self)
        let path = try Fixtures.writeCatalog(records, to: dir.appendingPathComponent("c.json"))
        let catalog = try Catalog(source: path, path: path)
        XCTAssertEqual(Array(catalog.records), records)
        XCTAssertEqual(catalog.sha256, SHA256.hex(try Data(contentsOf: URL(fileURLWithPath: path))))
    }

    /// Editing the file in place during a run is noticed rather than read as other records.
    func testAFileChangedAfterLoadingIsNoticed() throws {
        let dir = Fixtures.temporaryDirectory(self)
        let url = dir.appendingPathComponent("c.json")
        let path = try Fixtures.writeCatalog(Fixtures.records(5), to: url)
        let catalog = try Catalog(source: path, path: path)
        let handle = try FileHandle(forWritingTo: url)
        try handle.truncate(atOffset: 10)
        try handle.close()
        XCTAssertTrue(catalog.changedSinceLoad)
        XCTAssertEqual(catalog.records[4].id, 5, "a record that no longer reads keeps its id")
        XCTAssertEqual(catalog.records[4].url, "")
    }

    func testDuplicateIDsAreFoundInAFile() throws {
        let dir = Fixtures.temporaryDirectory(self)
        let records = Fixtures.records(4) + [Fixtures.record(2, colour: "000000"), Fixtures.record(4, colour: "000001")]
        let path = try Fixtures.writeCatalog(records, to: dir.appendingPathComponent("c.json"))
        XCTAssertThrowsError(try Catalog(source: path, path: path)) { error in
            XCTAssertEqual(error as? CatalogError, .duplicateIDs(source: path, ids: [2, 4]))
        }
    }

    /// Records are read back from the file during a run; a file cut short mid-run ends the run
    /// with a catalog error (exit 2) instead of a manifest of empty records, and what finished is journaled.
    func testACatalogEditedDuringARunEndsItWithAnError() throws {
        let dir = Fixtures.temporaryDirectory(self)
        let path = try Fixtures.writeCatalog(Fixtures.records(20), to: dir.appendingPathComponent("c.json"))
        let edited = Locked(false)
        let server = try TestServer { request in
            if !edited.withLock({ was in defer { was = true }; return was }) { truncate(path, 10) }
            return Fixtures.images.respond(to: request)
        }
        let out = dir.appendingPathComponent("out")
        let catalog = try Catalog(source: path, path: path)
        XCTAssertThrowsError(try Fixtures.run(Fixtures.configuration(out: out, server: server, concurrency: 1), catalog: catalog)) {
            error in
            XCTAssertEqual((error as? RunError)?.kind, "catalog")
            XCTAssertTrue("\(error)".contains("changed during the run"), "\(error)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: out.appendingPathComponent("manifest.json").path))
        XCTAssertGreaterThan(JournalIndex(path: out.appendingPathComponent(".archiver/journal").path).count(of: .done), 0)
    }
}
