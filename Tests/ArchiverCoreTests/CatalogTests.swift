import Foundation
import XCTest
@testable import ArchiverCore
@testable import ArchiverServer

final class CatalogTests: XCTestCase {
    /// The records the scanner and parser read, or nil where they refuse the text.
    private func fast(_ data: Data) -> [CatalogRecord]? {
        guard let scanned = try? CatalogScanner.scan(data) else { return nil }
        return Array(CatalogRecords(storage: CatalogStorage(.bytes(data), layout: scanned.layout), entries: scanned.entries, arena: scanned.arena, end: scanned.end))
    }

    private func fast(_ text: String) -> [CatalogRecord]? {
        fast(Data(text.utf8))
    }

    func testTheFastParserReadsTheRealCatalogExactlyAsJSONDecoderDoes() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("samples/photos.json")
        let data = try Data(contentsOf: url)
        let parsed = try XCTUnwrap(fast(data))
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

    /// The word-at-a-time scan of a string's plain run stops exactly where a byte-by-byte scan
    /// for a quote, a backslash or a control character does: every byte value at every place
    /// in a word, after any other byte, and random text heavy in bytes next to the stops
    /// (0x1F, 0x20, 0x21, 0x23, 0x5B, 0x5D, 0x7F, 0x80, 0xFF), from every start.
    func testThePlainRunStopsWhereTheBytewiseScanDoes() {
        func bytewise(_ bytes: [UInt8], from: Int) -> Int {
            bytes[from...].firstIndex { $0 == 0x22 || $0 == 0x5C || $0 < 0x20 } ?? bytes.count
        }
        func check(_ bytes: [UInt8], from: Int, _ note: @autoclosure () -> String) {
            let expected = bytewise(bytes, from: from)
            let run = bytes.withUnsafeBufferPointer { CatalogParser.plainRun($0, from: from) }
            // The word scan may stop short only within the last 7 bytes, never past a stop.
            if run != expected {
                XCTAssert(run < expected && bytes.count - run < 8 && bytewise(bytes, from: run) == expected, "\(note()): \(run) for \(expected)")
            }
        }
        for value in 0...255 {
            for place in 0..<16 {
                for before: UInt8 in [0x41, 0x00, 0x1F, 0x80, 0xFF] {
                    var bytes = [UInt8](repeating: before == 0x00 ? 0x41 : before, count: 24)
                    if before == 0x00 { bytes[0] = 0x00 }  // a stop at the start, then this one
                    bytes[place + 1] = UInt8(value)
                    check(bytes, from: 1, "byte \(value) at \(place) after \(before)")
                }
            }
        }
        var generator = SeededGenerator()
        let near: [UInt8] = [0x1F, 0x20, 0x21, 0x22, 0x23, 0x5B, 0x5C, 0x5D, 0x7F, 0x80, 0xFF, 0x00, 0x41]
        for trial in 0..<2000 {
            let count = Int.random(in: 0...40, using: &generator)
            let bytes = (0..<count).map { _ in
                Int.random(in: 0..<4, using: &generator) == 0 ? near.randomElement(using: &generator)! : UInt8.random(in: 0x20...0xFF, using: &generator)
            }
            for from in 0...count { check(bytes, from: from, "trial \(trial) from \(from): \(bytes)") }
        }
    }

    func testARecordReadForSomeFieldsHasOnlyThoseStrings() throws {
        let text = #"[{"albumId": 2, "id": 8, "title": "t\u00e9", "url": "https://h/8", "thumbnailUrl": "https://h/t8"}]"#
        let data = Data(text.utf8)
        let scanned = try CatalogScanner.scan(data)
        var reader = CatalogReader(CatalogRecords(storage: CatalogStorage(.bytes(data)), entries: scanned.entries, arena: scanned.arena, end: scanned.end))
        XCTAssertEqual(reader.record(0, fields: .image(.thumbnailUrl)), CatalogRecord(albumId: 2, id: 8, title: "", url: "", thumbnailUrl: "https://h/t8"))
        XCTAssertEqual(reader.record(0, fields: [.title, .image(.url)]), CatalogRecord(albumId: 2, id: 8, title: "té", url: "https://h/8", thumbnailUrl: ""))
        XCTAssertEqual(reader.record(0), CatalogRecord(albumId: 2, id: 8, title: "té", url: "https://h/8", thumbnailUrl: "https://h/t8"))
    }

    /// A null title, digest, group or URL is none, as a database export writes an empty value:
    /// the record keeps going (no title, no digest to check, album 0, failing alone for its URL).
    func testNullOptionalValuesAreNoneAndTheRecordStays() throws {
        let text = #"[{"id": 1, "title": null, "sum": null, "albumId": null, "url": "https://h/1"}, {"id": 2, "title": "t", "url": null}]"#
        var options = CatalogOptions()
        options.sha256Key = "sum"
        let catalog = try Catalog(source: "c.json", data: Data(text.utf8), options: options)
        var reader = CatalogReader(catalog.records)
        let first = reader.record(0, fields: [.title, .image(.url), .sha256])
        XCTAssertEqual(first.title, "")
        XCTAssertNil(first.sha256)
        XCTAssertEqual(first.albumId, 0)
        XCTAssertEqual(first.url, "https://h/1")
        XCTAssertEqual(reader.record(1, fields: [.title, .image(.url)]).url, "")
    }

    /// Issue #16: what JSON rejects (trailing commas, `007`, `NaN`) used to be accepted through
    /// JSONDecoder; now every refusal names line and column from the scan itself.
    func testWhatJSONRejectsIsRefusedNamingLineAndColumn() throws {
        let record = #"{"albumId": 1, "id": 1, "title": "t", "url": "u", "thumbnailUrl": "v"}"#
        for (text, expected) in [
            ("[" + record, "line 1, column 72"), ("[" + record + ",]", "line 1, column 73"), ("[" + record + "] x", "line 1, column 74"),
            ("", "the top level is not an array"),
            (#"[{"albumId": 1, "id": 1, "title": "t", "url": "u", "x": 1,}]"#, "line 1, column 59"),
            (#"[{"albumId": 007, "id": 1}]"#, "leading zero"),
            (#"[{"id": 1, "x": NaN}]"#, "line 1, column 17"),
            (#"[{"id": 1, "x": [1, 2,]}]"#, "line 1, column 23"),
            (#"[{"albumId": 1, "id": 1.5, "title": "t", "url": "u"}]"#, "line 1, column 23: record 1: \"id\" is not an integer or a string"),
            (#"[{"albumId": 1, "id": 7e0, "title": "t", "url": "u"}]"#, "\"id\" is not an integer"),
            (#"[{"albumId": 1, "id": null, "title": "t", "url": "u"}]"#, "line 1, column 23: record 1: \"id\" is not an integer or a string"),
            (#"[{"albumId": 1, "id": ["a"], "title": "t", "url": "u"}]"#, "\"id\" is not an integer or a string"),
            (#"[{"albumId": 1, "title": "t", "url": "u"}]"#, "record 1: the record has no \"id\""),
            (#"[{"albumId": 1, "id": 1, "title": "bad \q escape", "url": "u"}]"#, "invalid escape"),
            (#"[{"albumId": 1, "id": 1, "title": "lone \ud800 surrogate", "url": "u"}]"#, "lone surrogate"),
            (#"[{"albumId": 1, "id": 99999999999999999999, "title": "t", "url": "u"}]"#, "line 1, column 23: record 1: \"id\" is out of range"),
        ] {
            XCTAssertNil(fast(text), text)
            XCTAssertThrowsError(try Catalog(source: "c.json", data: Data(text.utf8)), text) { error in
                XCTAssertTrue("\(error)".contains(expected), "\(text): \(error)")
            }
        }
        XCTAssertThrowsError(try Catalog(source: "c.json", data: Data(("[" + record + ",\n {\"id\": }]").utf8))) { error in
            XCTAssertTrue("\(error)".contains("line 2, column 9"), "\(error)")
        }
    }

    /// A file read a window at a time gives the same records, in order, and the same SHA-256
    /// as the whole text in memory, across window edges and for a record longer than a window.
    /// Issue #16: 150,000 nested `[` in an unused field overflowed the stack of the recursive skip.
    func testDeepNestingInAnUnusedFieldIsACatalogErrorNamingWhereNotACrash() throws {
        let dir = Fixtures.temporaryDirectory(self)
        let head = #"[{"albumId": 1, "id": 1, "title": "t", "url": "u", "thumbnailUrl": "t", "extra": "#
        let deep = String(repeating: "[", count: 150_000)
        for (name, text) in [("open", head + deep + "}]"), ("closed", head + deep + String(repeating: "]", count: 150_000) + "}]")] {
            let file = dir.appendingPathComponent("\(name).json")
            try Data(text.utf8).write(to: file)
            for load in [{ try Catalog(source: name, data: Data(text.utf8)) }, { try Catalog(source: name, path: file.path) }] {
                XCTAssertThrowsError(try load(), name) { error in
                    let message = "\(error)"
                    XCTAssertTrue(message.contains("line 1, column "), message)
                    XCTAssertTrue(message.contains("nested"), message)
                    XCTAssertFalse(message.contains("\n"), message)
                }
            }
        }
    }

    func testNestingWithinTheLimitIsSkippedByTheFastParser() throws {
        let depth = CatalogParser.maxSkipDepth
        let nested = String(repeating: #"{"a": ["#, count: depth / 2) + "1, {}, [], \"x\"" + String(repeating: "]}", count: depth / 2)
        let text = #"[{"extra": "# + nested + #", "albumId": 1, "id": 1, "title": "t", "url": "u", "thumbnailUrl": "t"}]"#
        XCTAssertEqual(fast(text), [CatalogRecord(albumId: 1, id: 1, title: "t", url: "u", thumbnailUrl: "t")])
        let deeper = "[" + nested + "]"
        XCTAssertNil(fast(#"[{"extra": "# + deeper + #", "albumId": 1, "id": 1, "title": "t", "url": "u", "thumbnailUrl": "t"}]"#))
        XCTAssertNotNil(fast(#"[{"extra": [1, [2]], "albumId": 1, "id": 1, "title": "t", "url": "u", "thumbnailUrl": "t"}]"#))
        XCTAssertNil(fast(#"[{"extra": [1, [2}, "albumId": 1, "id": 1, "title": "t", "url": "u", "thumbnailUrl": "t"}]"#))
    }

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

    /// The feed reads a job, then the later records sharing its URL, then the next job: in a
    /// catalog that lists its images twice, each read jumps half the file. The reader's two
    /// windows make that a read of the file per window's worth of records, not one per record
    /// (with one window, each of these 3000 reads refilled 64 KiB).
    func testReadingBackAndForthBetweenTwoPlacesReadsTheFileOncePerWindow() throws {
        let records = Fixtures.records(3000)
        let dir = Fixtures.temporaryDirectory(self)
        let path = try Fixtures.writeCatalog(records, to: dir.appendingPathComponent("c.json"))
        let size = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        XCTAssertGreaterThan(size, 4 * 64 * 1024, "the file spans several windows")
        let catalog = try Catalog(source: path, path: path)
        var reader = CatalogReader(catalog.records)
        for position in 0..<1500 {
            XCTAssertEqual(reader.record(position), records[position])
            XCTAssertEqual(reader.record(position + 1500), records[position + 1500])
        }
        let windows = (size + 64 * 1024 - 1) / (64 * 1024)
        XCTAssertLessThanOrEqual(reader.fills, windows + 2, "a read per window's worth of records, at most one more per half")
        // A third place still reads right, refilling the window used longer ago.
        XCTAssertEqual(reader.record(700), records[700])
        XCTAssertEqual(reader.record(2999), records[2999])
        XCTAssertEqual(reader.record(1499), records[1499])
    }

    /// A record over 1 MiB (and under the 4 MiB limit) is read in order like any other.
    func testAHugeRecordIsReadInOrder() throws {
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
            XCTAssertEqual(error as? CatalogError, .duplicateIDs(source: path, ids: [2, 4], count: 2))
        }
    }

    /// A catalog may repeat a million ids, and a string id may be 4 MiB: the error decodes and
    /// names the first five (a string id by its first 60 bytes) and counts the rest.
    func testDuplicateIDsAreCountedAndOnlyTheFirstFewNamed() throws {
        let long = String(repeating: "x", count: 100_000)
        var records = (1...40).map { Fixtures.record($0, colour: "0000aa") }
        for id in 1...8 { records.append(Fixtures.record(id * 3, colour: "0000bb")) }
        records.append(CatalogRecord(albumId: 1, id: RecordID(long), title: "", url: "https://h/a", thumbnailUrl: ""))
        records.append(CatalogRecord(albumId: 1, id: RecordID(long), title: "", url: "https://h/b", thumbnailUrl: ""))
        let text = try String(decoding: JSONEncoder().encode(records), as: UTF8.self)
        XCTAssertThrowsError(try Catalog(source: "d.json", data: Data(text.utf8))) { error in
            guard case .duplicateIDs(_, let ids, let count)? = error as? CatalogError else { return XCTFail("\(error)") }
            XCTAssertEqual(count, 9)
            XCTAssertEqual(ids, [3, 6, 9, 12, 15])
            XCTAssertTrue("\(error)".hasSuffix("duplicate ids: 3, 6, 9, 12, 15 and 4 more"), "\(error)")
        }
        let few = records.filter { $0.id.integer == nil || $0.id.integer! > 40 || $0.id.integer! <= 2 } + [records[0]]
        XCTAssertThrowsError(try Catalog(source: "d.json", data: JSONEncoder().encode(few))) { error in
            XCTAssertLessThan("\(error)".utf8.count, 200, "the long id shown by its first 60 bytes")
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

extension CatalogTests {
    /// The run reads records back while it finishes manifest.json and index.html and compacts
    /// the journal, after its "changed during the run" check. An in-place edit then (here two URLs
    /// swapped, same length) must still end the run with the catalog error, not compact the
    /// journal into lines that vouch for the old bytes under the new URLs.
    func testACatalogEditedWhileTheBundleFilesAreFinishedEndsTheRunWithAnError() throws {
        let server = try Fixtures.placeholderServer()
        let dir = Fixtures.temporaryDirectory(self)
        var records = Fixtures.records(400)
        records[0] = Fixtures.record(1, colour: "aaaaaa")
        records[1] = Fixtures.record(2, colour: "bbbbbb")
        let catalogURL = dir.appendingPathComponent("c.json")
        let path = try Fixtures.writeCatalog(records, to: catalogURL)
        let out = dir.appendingPathComponent("out")
        var config = Fixtures.configuration(out: out, server: server)
        config.catalogSource = path
        _ = try Fixtures.run(config, catalog: Catalog(source: path, path: path))
        // Fetched again, so the next run records them itself and compacts the journal.
        for id in [1, 2, 400] { try FileManager.default.removeItem(at: out.appendingPathComponent("images/\(id).png")) }

        // The page's temporary file is created only once every item has its outcome: there, the
        // run is past its check and finishing the page, swap the two URLs in place.
        let edits = Locked(0)
        let swapping = EditingFileSystem(beforeCreating: "index.html") {
            edits.withLock { $0 += 1 }
            var text = try! Data(contentsOf: catalogURL)
            let a = text.range(of: Data("600/aaaaaa".utf8))!, b = text.range(of: Data("600/bbbbbb".utf8))!
            text.replaceSubrange(a, with: Data("600/bbbbbb".utf8))
            text.replaceSubrange(b, with: Data("600/aaaaaa".utf8))
            let handle = try! FileHandle(forWritingTo: catalogURL)
            try! handle.write(contentsOf: text)
            try! handle.close()
        }
        let archiver = Archiver(
            configuration: config, fetcher: Fixtures.fetcher(for: config), fileSystem: swapping,
            backoff: Backoff(base: 0.01, cap: 0.05, jitter: { 1 }))
        XCTAssertThrowsError(try archiver.run(catalog: Catalog(source: path, path: path))) { error in
            XCTAssertEqual((error as? RunError)?.kind, "catalog", "\(error)")
        }
        XCTAssertEqual(edits.withLock { $0 }, 1)

        // Whatever the journal says now, a run over the edited catalog gives each record its URL's bytes.
        _ = try Fixtures.run(config, catalog: Catalog(source: path, path: path))
        XCTAssertEqual(try Data(contentsOf: out.appendingPathComponent("images/1.png")), Fixtures.served("/600/bbbbbb"))
        XCTAssertEqual(try Data(contentsOf: out.appendingPathComponent("images/2.png")), Fixtures.served("/600/aaaaaa"))
    }

    /// Catalog bytes handed over as a slice of a larger buffer read the same as a whole Data.
    func testASliceOfDataIsReadFromItsOwnStart() throws {
        let records = Fixtures.records(50)
        let text = try JSONEncoder().encode(records)
        let padded = Data("garbage before the catalog".utf8) + text
        let slice = padded[padded.index(padded.startIndex, offsetBy: 26)...]
        XCTAssertNotEqual(slice.startIndex, 0)
        let catalog = try Catalog(source: "slice.json", data: slice)
        XCTAssertEqual(Array(catalog.records), records)
        XCTAssertEqual(catalog.records[49], records[49])
        XCTAssertEqual(catalog.sha256, SHA256.hex(text))
    }

    /// The plan, the ledger and the jobs keep a record's position in 32 bits: a catalog of more
    /// records than `Int32.max` is refused as it is scanned, in every format and from a file or
    /// bytes, instead of trapping later. Shown with a limit of 3 on the same scan.
    func testACatalogOfMoreRecordsThanTheLimitIsRefusedAsItIsScanned() throws {
        XCTAssertEqual(CatalogOptions().maxRecords, Int(Int32.max))
        var options = CatalogOptions()
        options.maxRecords = 3
        func texts(_ count: Int) -> [String] {
            let objects = (1...count).map { #"{"id": \#($0), "url": "https://h/\#($0).png"}"# }
            let rows = (1...count).map { "\($0),https://h/\($0).png" }
            return ["[" + objects.joined(separator: ",\n") + "]", objects.joined(separator: "\n"), "id,url\n" + rows.joined(separator: "\n")]
        }
        for text in texts(3) {
            XCTAssertEqual(try Catalog(source: "c", data: Data(text.utf8), options: options).records.count, 3, text)
        }
        for text in texts(4) {
            XCTAssertThrowsError(try Catalog(source: "c", data: Data(text.utf8), options: options), text) { error in
                XCTAssertEqual(error as? CatalogError, .tooManyRecords(source: "c", limit: 3))
                XCTAssertEqual(
                    "\(error)",
                    "catalog c has more than 3 records, the most one run can hold; split it into catalogs of fewer records, each archived into its own bundle")
            }
        }
        let url = Fixtures.temporaryDirectory(self).appendingPathComponent("c.json")
        let path = try Fixtures.writeCatalog(Fixtures.records(4), to: url)
        XCTAssertThrowsError(try Catalog(source: path, path: path, options: options)) { error in
            XCTAssertEqual(error as? CatalogError, .tooManyRecords(source: path, limit: 3))
        }
    }
}
