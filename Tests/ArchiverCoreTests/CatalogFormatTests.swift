import Foundation
import XCTest
@testable import ArchiverCore

/// Issue #15: catalogs as users have them (JSON Lines, CSV, TSV, a wrapped array, other keys).
final class CatalogFormatTests: XCTestCase {
    /// Records whose titles need quoting in every format.
    private func tricky(_ count: Int = 5) -> [CatalogRecord] {
        var records = Fixtures.records(count)
        records[0].title = #"commas, "quotes" and a"#
        records[1].title = "two\nlines and a\ttab"
        records[2].title = "é 🎞 \\ back"
        return records
    }

    private func jsonObject(_ record: CatalogRecord) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try! encoder.encode(record), as: UTF8.self)
    }

    private func quoted(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    private func rows(_ records: [CatalogRecord], _ separator: String, crlf: Bool = false) -> String {
        let end = crlf ? "\r\n" : "\n"
        return ["albumId", "id", "title", "url", "thumbnailUrl"].joined(separator: separator) + end
            + records.map { r in
                ["\(r.albumId)", "\(r.id)", quoted(r.title), r.url, quoted(r.thumbnailUrl)].joined(separator: separator) + end
            }.joined()
    }

    private func load(_ text: String, _ options: CatalogOptions = CatalogOptions(), file: Bool = true) throws -> Catalog {
        guard file else { return try Catalog(source: "c", data: Data(text.utf8), options: options) }
        let url = Fixtures.temporaryDirectory(self).appendingPathComponent("catalog")
        try Data(text.utf8).write(to: url)
        return try Catalog(source: url.path, path: url.path, options: options)
    }

    func testEveryFormatGivesTheSameRecordsAsTheJSONArray() throws {
        let records = tricky()
        let lines = records.map(jsonObject).joined(separator: "\n") + "\n"
        var pointer = CatalogOptions()
        pointer.records = "/photos"
        var csv = CatalogOptions(), tsv = CatalogOptions(), jsonl = CatalogOptions()
        csv.format = .csv
        tsv.format = .tsv
        jsonl.format = .jsonl
        let cases: [(String, String, CatalogOptions)] = [
            ("jsonl", lines, CatalogOptions()), ("jsonl forced", lines, jsonl),
            ("jsonl crlf, blank lines", records.map(jsonObject).joined(separator: "\r\n\r\n"), CatalogOptions()),
            ("csv", rows(records, ","), CatalogOptions()), ("csv crlf, forced", rows(records, ",", crlf: true), csv),
            ("csv with BOM", "\u{FEFF}" + rows(records, ","), CatalogOptions()),
            ("tsv", rows(records, "\t"), CatalogOptions()), ("tsv forced", rows(records, "\t"), tsv),
            ("wrapped", #"{"meta": {"n": [1, {"a": null}]}, "photos": ["# + records.map(jsonObject).joined(separator: ",")
                + #"], "after": "x"}"#, pointer),
        ]
        for (name, text, options) in cases {
            for file in [true, false] {
                let catalog = try load(text, options, file: file)
                XCTAssertEqual(Array(catalog.records), records, "\(name), file \(file)")
                XCTAssertEqual(catalog.records.position(ofID: 3), 2, name)
                XCTAssertEqual(catalog.sha256, SHA256.hex(Data(text.utf8)), name)
            }
        }
    }

    func testPointerTokensReachIntoArraysAndEscapedKeys() throws {
        var options = CatalogOptions()
        options.records = "/a~1b/1/x~0y"
        let text = #"{"a/b": [{"x~y": []}, {"x~y": [{"id": 4, "url": "u"}]}]}"#
        XCTAssertEqual(try load(text, options).records.map(\.id), [4])
        for (pointer, expected) in [("/nope", "no /nope"), ("/a~1b/2", "no /a~1b/2"), ("/a~1b/0/x~0y/0", "no /a~1b/0/x~0y/0"), ("x", "JSON Pointer")] {
            options.records = pointer
            XCTAssertThrowsError(try load(text, options), pointer) { XCTAssertTrue("\($0)".contains(expected), "\(pointer): \($0)") }
        }
    }

    func testKeysNameTheIdURLTitleAndGroup() throws {
        var options = CatalogOptions()
        options.idKey = "sku"
        options.field = ImageField(rawValue: "image_url")
        options.titleKey = "name"
        options.groupKey = "category"
        let json = #"[{"sku": 9, "image_url": "http://h/9", "name": "nine", "category": "3", "url": "other"}, {"sku": 10, "image_url": "http://h/10"}]"#
        let csv = "name,sku,category,image_url\nnine,9,3,http://h/9\n,10,,http://h/10\n"
        for text in [json, csv] {
            let records = Array(try load(text, options).records)
            XCTAssertEqual(records.map(\.id), [9, 10])
            XCTAssertEqual(records.map { $0.url(for: options.field) }, ["http://h/9", "http://h/10"])
            XCTAssertEqual(records.map(\.title), ["nine", ""])
            XCTAssertEqual(records.map(\.albumId), [3, 0])
        }
        options.groupKey = "url"
        XCTAssertThrowsError(try load(json, options)) { XCTAssertTrue("\($0)".contains("\"url\" is not an integer"), "\($0)") }
    }

    func testMalformedInputOfEachFormatNamesWhere() throws {
        let cases: [(String, String)] = [
            (#"{"id": 1, "url": "u"} {"id": 2}"#, "line 1, column 23: expected a line break after record 1"),
            ("{\"id\": 1, \"url\": \"u\"}\n{\"id\": 2,\n", "line 3, column 1: record 2"),
            ("{\"id\": 1}\n{\"url\": \"u\"}\n", "line 2, column 1: record 2: the record has no \"id\""),
            ("id,url\n1,\"open\n", "row 2, line 2, column 3: a quoted field is never closed"),
            ("id,url\n1,a\"b\n", "row 2, line 2, column 4: a quote inside an unquoted field"),
            ("id,url\n1,a\n2\n", "row 3, line 3: 1 fields where the header has 2"),
            ("id\turl\talbumId\n1\ta\t2\nx\tb\tq\n", "row 3, line 3: \"albumId\" is not an integer"),
            ("url,title\nu,t\n", "row 1: the header has no \"id\" column"),
            ("id,url\n\"1\"x,u\n", "row 2, line 2, column 4: text after a quoted field's closing quote"),
        ]
        for (text, expected) in cases {
            XCTAssertThrowsError(try load(text), text) { XCTAssertTrue("\($0)".contains(expected), "\(text): \($0)") }
        }
    }

    /// Issue #16: a URL over 8 KiB, or not UTF-8, fails its record alone as invalid-url with a
    /// short message (a 1 MB URL used to fail as "Out of memory" and fill journal and manifest),
    /// and invalid UTF-8 is not repaired into another URL to fetch.
    func testAnOverlongOrNonUTF8URLFailsItsRecordAloneAsInvalidURL() throws {
        let server = try Fixtures.placeholderServer()
        let dir = Fixtures.temporaryDirectory(self)
        let good = Fixtures.record(1, colour: "00ff00")
        var bytes = Data("[".utf8) + Data(jsonObject(good).utf8)
        bytes += Data(#",{"id": 2, "url": "\#(Fixtures.host)/600/"#.utf8) + Data(repeating: 0x61, count: 1_000_000) + Data(#""}"#.utf8)
        bytes += Data(#",{"id": 3, "url": "\#(Fixtures.host)/600/00ff"#.utf8) + Data([0xC3, 0x28]) + Data(#""}]"#.utf8)
        let file = dir.appendingPathComponent("c.json")
        try bytes.write(to: file)
        let out = dir.appendingPathComponent("out")
        let summary = try Fixtures.run(Fixtures.configuration(out: out, server: server), catalog: Catalog(source: file.path, path: file.path))
        XCTAssertEqual(summary.done, 1)
        XCTAssertEqual(summary.failed, 2)
        let items = try Fixtures.manifest(in: out).items
        XCTAssertEqual(items.map(\.error?.kind), [nil, "invalid-url", "invalid-url"])
        XCTAssertTrue(items[1].error?.message.contains("1000") == true, "\(items[1])")
        XCTAssertTrue(items[2].error?.message.contains("UTF-8") == true, "\(items[2])")
        for name in ["manifest.json", "index.html", ".archiver/journal"] {
            let size = try Data(contentsOf: out.appendingPathComponent(name)).count
            XCTAssertLessThan(size, 20_000, name)
        }
        XCTAssertEqual(server.requests.count, 1, "only the good record's URL is requested")
    }

    /// Issue #16: `--catalog /dev/stdin` from a pipe said "You don't have permission"; `-` reads
    /// standard input and keeps it in the bundle, so a rerun with nothing piped resumes.
    func testStandardInputFromAPipeAndResume() throws {
        let server = try Fixtures.placeholderServer()
        let dir = Fixtures.temporaryDirectory(self)
        let records = Fixtures.records(4)
        let file = dir.appendingPathComponent("c.jsonl")
        try Data((records.map(jsonObject).joined(separator: "\n") + "\n").utf8).write(to: file)
        let mirror = "\(Fixtures.host)=\(server.baseURL)"
        let binary = CommandRunner.executable.path
        let out = dir.appendingPathComponent("out").path
        let devStdin = try ArchiverRun.run(
            shell: #"cat "$1" | "$2" run --catalog /dev/stdin --out "$3" --mirror "$4" --quiet"#,
            [file.path, binary, dir.appendingPathComponent("dev").path, mirror])
        XCTAssertEqual(devStdin.status, 0, devStdin.stderr)
        let first = try ArchiverRun.run(shell: #"cat "$1" | "$2" run --catalog - --out "$3" --mirror "$4""#, [file.path, binary, out, mirror])
        XCTAssertEqual(first.status, 0, first.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: out + "/.archiver/catalog"))
        let requests = server.requests.count
        let again = try ArchiverRun.run(shell: #""$1" run --catalog - --out "$2" --mirror "$3" < /dev/null"#, [binary, out, mirror])
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertTrue(again.stderr.contains("4 done, 0 failed"), again.stderr)
        XCTAssertEqual(server.requests.count, requests, "the rerun fetched nothing")
        XCTAssertEqual(try Fixtures.manifest(in: URL(fileURLWithPath: out)).items.map(\.id), [1, 2, 3, 4])
    }

    /// `--id` and `--records` change which records a catalog holds: a rerun with others is refused.
    func testARerunWithAnotherIDKeyOrPointerIsRefused() throws {
        let server = try Fixtures.placeholderServer()
        let dir = Fixtures.temporaryDirectory(self)
        let records = Fixtures.records(2)
        let array = "[" + records.map { record -> String in
            let sku = record.id.integer! + 100
            return jsonObject(record).dropLast() + #", "sku": \#(sku)}"#
        }.joined(separator: ",") + "]"
        let text = #"{"photos": "# + array + #", "old": "# + array + "}"
        let file = dir.appendingPathComponent("c.json")
        try Data(text.utf8).write(to: file)
        var config = Fixtures.configuration(out: dir.appendingPathComponent("out"), server: server)
        config.catalogSource = file.path
        config.catalog.records = "/photos"
        XCTAssertEqual(try Fixtures.run(config, catalog: Catalog(source: file.path, path: file.path, options: config.catalog)).done, 2)
        var other = config
        other.catalog.idKey = "sku"
        XCTAssertThrowsError(try Fixtures.run(other, catalog: Catalog(source: file.path, path: file.path, options: other.catalog))) {
            XCTAssertTrue("\($0)".contains("--id"), "\($0)")
        }
        other = config
        other.catalog.records = "/old"
        XCTAssertThrowsError(try Fixtures.run(other, catalog: Catalog(source: file.path, path: file.path, options: other.catalog))) {
            XCTAssertTrue("\($0)".contains("--records"), "\($0)")
        }
        XCTAssertEqual(try Fixtures.run(config, catalog: Catalog(source: file.path, path: file.path, options: config.catalog)).done, 2)
    }
}

/// Issue #16, through the binary (so each case also fails against main's): what JSON rejects
/// used to be archived, `"id": 7.5` said "not valid JSON" with no position, and a 1 MB or
/// non-UTF-8 URL failed as "Out of memory" or was repaired into another URL.
final class HostileCatalogCommandTests: XCTestCase {
    func testWhatJSONRejectsExitsTwoNamingLineAndColumn() throws {
        let dir = Fixtures.temporaryDirectory(self)
        let head = #"[{"albumId": 1, "id": 1, "title": "t", "url": "http://127.0.0.1:1/1", "thumbnailUrl": "u""#
        for (name, text, expected) in [
            ("comma", head + "},]", "line 1, column 92"), ("member", head + ",}]", "line 1, column 91"),
            ("zero", head + #", "x": 007}]"#, "leading zero"), ("nan", head + #", "x": NaN}]"#, "line 1, column 97"),
            ("fraction", #"[{"id": 7.5, "url": "u"}]"#, "line 1, column 9: record 1: \"id\" is not an integer"),
            ("range", #"[{"id": 18446744073709551616, "url": "u"}]"#, "line 1, column 9: record 1: \"id\" is out of range"),
        ] {
            let file = dir.appendingPathComponent(name)
            try Data(text.utf8).write(to: file)
            let run = try CommandRunner.run(["run", "--catalog", file.path, "--out", dir.appendingPathComponent("out-" + name).path, "--retries", "0"])
            XCTAssertEqual(run.status, 2, "\(name): \(run.stderr)")
            XCTAssertTrue(run.stderr.contains(expected), "\(name): \(run.stderr)")
            XCTAssertFalse(FileManager.default.fileExists(atPath: dir.appendingPathComponent("out-" + name).path), name)
        }
    }

    func testAHugeOrNonUTF8URLFailsAloneWithAShortMessage() throws {
        let dir = Fixtures.temporaryDirectory(self)
        var bytes = Data(#"[{"id": 1, "url": "http://127.0.0.1:1/"#.utf8) + Data(repeating: 0x61, count: 1_000_000) + Data(#""},"#.utf8)
        bytes += Data(#"{"id": 2, "url": "http://127.0.0.1:1/x"#.utf8) + Data([0xFF]) + Data(#""}]"#.utf8)
        let file = dir.appendingPathComponent("c.json")
        try bytes.write(to: file)
        let out = dir.appendingPathComponent("out")
        let run = try CommandRunner.run(["run", "--catalog", file.path, "--out", out.path, "--retries", "0", "--quiet"])
        XCTAssertEqual(run.status, 1, run.stderr)
        let items = try Fixtures.manifest(in: out).items
        XCTAssertEqual(items.map(\.error?.kind), ["invalid-url", "invalid-url"])
        XCTAssertEqual(items.map(\.url), ["", ""])
        let size = try Data(contentsOf: out.appendingPathComponent("manifest.json")).count
        XCTAssertLessThan(size, 2000)
    }
}

/// Issue #16: a catalog that failed the scan was read whole and parsed twice (1 GiB of junk
/// peaked at 2.1 GB); now the scan itself refuses it, in memory that does not grow with it.
final class BadCatalogMemoryTests: XCTestCase {
    func testTwoHundredMegabytesOfJunkFailInUnder128MiB() throws {
        let dir = Fixtures.temporaryDirectory(self)
        let junk = dir.appendingPathComponent("junk")
        // A sparse file: 200 MB of zero bytes that take no disk.
        XCTAssertTrue(FileManager.default.createFile(atPath: junk.path, contents: nil))
        let handle = try FileHandle(forWritingTo: junk)
        try handle.truncate(atOffset: 200_000_000)
        try handle.close()
        let (run, kilobytes) = try CommandRunner.runMeasuringPeakMemory(
            ["run", "--catalog", junk.path, "--out", dir.appendingPathComponent("out").path])
        XCTAssertEqual(run.status, 2, run.stderr)
        XCTAssertTrue(run.stderr.contains("catalog \(junk.path): "), run.stderr)
        XCTAssertEqual(run.stderr.filter { $0 == "\n" }.count, 1, run.stderr)
        XCTAssertGreaterThan(kilobytes, 1024, "time reported a peak RSS at all")
        if !Sanitizers.active { XCTAssertLessThan(kilobytes, 128 * 1024, "peak RSS \(kilobytes) KiB") }
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.appendingPathComponent("out/manifest.json").path))
    }
}
