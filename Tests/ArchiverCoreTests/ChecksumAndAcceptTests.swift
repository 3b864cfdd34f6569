import Foundation
import XCTest
@testable import ArchiverCore
@testable import ArchiverServer

/// `--sha256 KEY` and `--accept LIST` through the built binary, with expected digests from
/// coreutils' `sha256sum` (not the archiver's own hashing).
final class ChecksumAndAcceptTests: XCTestCase {
    /// The SHA-256 of `data` as `sha256sum` prints it.
    private func sha256sum(_ data: Data) throws -> String {
        let file = Fixtures.temporaryDirectory(self).appendingPathComponent("body")
        try data.write(to: file)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
        process.arguments = [file.path]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return String(text.prefix(64))
    }

    private func path(of record: CatalogRecord) -> String {
        String(record.url.dropFirst(Fixtures.host.count))
    }

    func testExactlyTheRecordsWhoseCatalogDigestIsWrongFailAsChecksumMismatch() throws {
        let server = try Fixtures.placeholderServer()
        let dir = Fixtures.temporaryDirectory(self)
        let records = Fixtures.records(30)
        var objects: [[String: Any]] = []
        var wrong: Set<Int> = []
        for (index, record) in records.enumerated() {
            var object: [String: Any] = [
                "id": index + 1, "albumId": 1, "title": record.title, "url": record.url, "thumbnailUrl": record.thumbnailUrl,
            ]
            var digest = try sha256sum(Fixtures.served(path(of: record)))
            switch index % 3 {
            case 0 where wrong.count < 10:
                // One hex digit changed: the catalog is wrong about this image.
                let first = digest.removeFirst()
                digest = (first == "0" ? "1" : "0") + digest
                wrong.insert(index + 1)
            case 1: digest = digest.uppercased()
            default: break
            }
            if index != 29 { object["checksum"] = digest }
            objects.append(object)
        }
        XCTAssertEqual(wrong.count, 10)
        let catalog = dir.appendingPathComponent("catalog.json")
        try JSONSerialization.data(withJSONObject: objects).write(to: catalog)
        let out = dir.appendingPathComponent("out")
        let result = try CommandRunner.run([
            "run", "--catalog", catalog.path, "--out", out.path, "--sha256", "checksum",
            "--mirror", "\(Fixtures.host)=\(server.baseURL)",
        ])
        XCTAssertEqual(result.status, 1, result.stderr)
        let items = try Fixtures.manifest(in: out).items
        let failed = Set(items.filter { $0.status == .failed }.compactMap(\.id.integer))
        XCTAssertEqual(failed, wrong)
        for item in items where item.status == .failed {
            XCTAssertEqual(item.error?.kind, "checksum-mismatch")
            XCTAssertTrue(item.error?.message.contains("is not the catalog's") ?? false, item.error?.message ?? "")
        }
        XCTAssertEqual(items.count { $0.status == .done }, 20)
        XCTAssertEqual(Fixtures.imageNames(in: out).count, 20, "a body that does not match is never stored")
        let verify = try CommandRunner.run(["verify", out.path])
        XCTAssertEqual(verify.status, 0, verify.stdout + verify.stderr)
    }

    /// A CSV row cannot leave out a column: its empty cell is how it has no digest, as a JSON
    /// record without the key has none, so the image is not checked (nor is one of blanks).
    func testAnEmptyDigestCellIsNoDigestAndTheImageIsNotChecked() throws {
        let server = try Fixtures.placeholderServer()
        let dir = Fixtures.temporaryDirectory(self)
        let records = Fixtures.records(3)
        let right = try sha256sum(Fixtures.served(path(of: records[0])))
        var csv = "id,url,checksum\n1,\(records[0].url),\(right)\n2,\(records[1].url),\n3,\(records[2].url),\"  \"\n"
        csv += "4,\(records[2].url),\(String(repeating: "0", count: 64))\n"
        let catalog = dir.appendingPathComponent("c.csv")
        try Data(csv.utf8).write(to: catalog)
        let out = dir.appendingPathComponent("out")
        let result = try CommandRunner.run([
            "run", "--catalog", catalog.path, "--out", out.path, "--sha256", "checksum", "--mirror", "\(Fixtures.host)=\(server.baseURL)",
        ])
        XCTAssertEqual(result.status, 1, result.stderr)
        let items = try Fixtures.manifest(in: out).items
        XCTAssertEqual(items.map(\.status), [.done, .done, .done, .failed], result.stderr)
        XCTAssertEqual(items.last?.error?.kind, "checksum-mismatch")
    }

    func testACSVWithoutTheNamedDigestColumnIsRefused() throws {
        let dir = Fixtures.temporaryDirectory(self)
        let catalog = dir.appendingPathComponent("c.csv")
        try Data("id,url\n1,http://127.0.0.1:9/1\n".utf8).write(to: catalog)
        let result = try CommandRunner.run(["run", "--catalog", catalog.path, "--out", dir.appendingPathComponent("o").path, "--sha256", "digest"])
        assertOneLineError(result, mentions: ["digest", "--sha256"])
    }

    func testTheFormatIsTheBodysWhateverTheURLAndContentTypeSay() throws {
        let server = try Fixtures.placeholderServer()
        let png = Fixtures.served("/600/aabbcc")
        // A PNG served as a JPEG at a .jpg URL; a JPEG signature served as a PNG at a .png URL.
        server.route("/lies/1.jpg", HTTPResponse(status: 200, headers: [("Content-Type", "image/jpeg")], body: .data(png)))
        server.route(
            "/lies/2.png",
            HTTPResponse(status: 200, headers: [("Content-Type", "image/png")], body: .data(Data([0xFF, 0xD8, 0xFF, 0xE0]) + Data(count: 60))))
        let dir = Fixtures.temporaryDirectory(self)
        let records = [
            CatalogRecord(albumId: 1, id: 1, title: "a", url: "\(Fixtures.host)/lies/1.jpg", thumbnailUrl: ""),
            CatalogRecord(albumId: 1, id: 2, title: "b", url: "\(Fixtures.host)/lies/2.png", thumbnailUrl: ""),
        ]
        let catalog = try Fixtures.writeCatalog(records, to: dir.appendingPathComponent("c.json"))
        let out = dir.appendingPathComponent("out")
        let result = try CommandRunner.run([
            "run", "--catalog", catalog, "--out", out.path, "--accept", "png", "--mirror", "\(Fixtures.host)=\(server.baseURL)",
        ])
        XCTAssertEqual(result.status, 1, result.stderr)
        let items = try Fixtures.manifest(in: out).items
        XCTAssertEqual(items[0].status, .done)
        XCTAssertEqual(items[0].format, .png)
        XCTAssertEqual(items[0].path, "images/1.png")
        XCTAssertEqual(items[1].error?.kind, "unaccepted-format")
        XCTAssertTrue(items[1].error?.message.contains("JPEG") ?? false, items[1].error?.message ?? "")
        XCTAssertEqual(Fixtures.imageNames(in: out), ["1.png"])
    }

    func testAnUnknownAcceptListIsAUsageError() throws {
        let result = try CommandRunner.run(["run", "--accept", "png,tiff", "--out", Fixtures.temporaryDirectory(self).path])
        assertOneLineError(result, mentions: ["--accept", "png,tiff"])
    }

    func testJournalLinesKeepTheFormatAndFramesAndAPNGLineReadsAsBefore() {
        let gif = ItemRecord(
            id: 7, url: "u", source: "s", status: .done, bytes: 10, sha256: SHA256Digest(hex: String(repeating: "a", count: 64)), width: 4,
            height: 3, attempts: 1, format: .gif, frames: 12)
        XCTAssertEqual(JournalLine.decode(JournalLine.encode(gif).dropLast()), gif)
        var png = gif
        png.format = .png
        png.frames = 1
        let line = JournalLine.encode(png)
        XCTAssertEqual(line.split(separator: "\t").count, 9, "a still PNG's line has no format fields: \(line)")
        XCTAssertEqual(JournalLine.decode(line.dropLast()), png)
        XCTAssertNil(JournalLine.decode(JournalLine.encode(gif).dropLast().replacingOccurrences(of: "\tgif\t", with: "\ttiff\t")))
    }
}
