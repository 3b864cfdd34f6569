import Foundation
import XCTest
@testable import ArchiverCore

final class BundleOutputTests: XCTestCase {
    /// A bundle directory, and a ledger and output for `records`, as a run sets them up.
    private func makeOutput(_ records: [CatalogRecord], before: (BundleLayout) throws -> Void = { _ in }) throws
        -> (layout: BundleLayout, ledger: Ledger, output: BundleOutput)
    {
        let out = Fixtures.temporaryDirectory(self)
        let layout = BundleLayout(root: out)
        try FileManager.default.createDirectory(at: layout.state, withIntermediateDirectories: true)
        try before(layout)
        let catalog = try Fixtures.catalog(records)
        var config = RunConfiguration()
        config.outputDirectory = out
        let ledger = Ledger(
            records: catalog.records, mirrors: MirrorChoices(config.mirrors, count: records.count), previous: JournalIndex(path: layout.journal.path),
            kept: [], total: records.count)
        let output = try BundleOutput(catalog: catalog, ledger: ledger, configuration: config, layout: layout)
        return (layout, ledger, output)
    }

    private func pages(_ layout: BundleLayout) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: layout.pages.path).sorted()
    }

    /// Items are written in id order as soon as they and every item before them have an
    /// outcome; neither file is in place before `commit`, and the committed files are exactly
    /// what the whole manifest gives.
    func testItemsAreWrittenInOrderAsTheyFinishAndTheFilesOnlyAtCommit() throws {
        var records = Fixtures.records(6)
        records.swapAt(0, 5)  // catalog order is not id order
        records[2].albumId = 2
        let (layout, ledger, output) = try makeOutput(records)
        func done(_ id: RecordID) -> ItemRecord {
            let url = records.first { $0.id == id }!.url
            return ItemRecord(
                id: id, url: url, source: url, status: .done, bytes: 139, sha256: SHA256Digest(hex: String(repeating: "a", count: 64)),
                width: 600, height: 600, attempts: 1)
        }

        ledger.record([done(1), done(2), done(4)], bytes: 3 * 139)
        output.advance()
        XCTAssertEqual(output.manifestItemsWritten, 2, "item 4 waits for item 3")
        ledger.record([done(3)], bytes: 139)
        output.advance()
        XCTAssertEqual(output.manifestItemsWritten, 4)
        XCTAssertFalse(FileManager.default.fileExists(atPath: layout.manifest.path))
        XCTAssertFalse(FileManager.default.fileExists(atPath: layout.gallery.path))
        XCTAssertEqual(try pages(layout).filter { !$0.hasPrefix(".") }, [], "no page is in place before commit")

        // The writing thread writes what is ready at once, then every interval, until stopped.
        ledger.record([done(5)], bytes: 139)
        output.startWriting(every: .seconds(3600))
        output.stopWriting()
        XCTAssertEqual(output.manifestItemsWritten, 5)
        XCTAssertFalse(FileManager.default.fileExists(atPath: layout.manifest.path))

        // 6 never finishes (an interrupted run): it is written as pending at the end.
        XCTAssertTrue(try output.commit(counts: [.done: 5, .pending: 1]))
        let manifest = try Manifest.read(from: layout.manifest)
        XCTAssertEqual(try Data(contentsOf: layout.manifest), manifest.encoded())
        XCTAssertEqual(manifest.items.map(\.status), [.done, .done, .done, .done, .done, .pending])
        XCTAssertEqual(try GalleryFiles.read(layout.root), try GalleryFiles.expected(for: manifest))
        let left = try FileManager.default.contentsOfDirectory(atPath: layout.root.path).filter { $0.hasPrefix(".") && $0 != ".archiver" }
        XCTAssertEqual(left + (try pages(layout)).filter { $0.hasPrefix(".") }, [], "no temporary file is left")
    }

    /// Outcomes are read from the ledger a chunk at a time: a gap, a run of outcomes longer than
    /// a chunk, and the pending rest at commit all come out as the whole manifest gives them.
    func testLongRunsOfOutcomesAcrossChunksAreWrittenInOrder() throws {
        let records = Fixtures.records(2600)
        let (layout, ledger, output) = try makeOutput(records)
        func outcome(_ record: CatalogRecord) -> ItemRecord {
            guard record.id.integer! % 7 == 0 else {
                return ItemRecord(
                    id: record.id, url: record.url, source: record.url, status: .done, bytes: 139,
                    sha256: SHA256Digest(hex: String(repeating: "b", count: 64)), width: 600, height: 600, attempts: 1)
            }
            return ItemRecord(
                id: record.id, url: record.url, source: record.url, status: .failed, attempts: 2,
                error: RecordedError(kind: "http-status", message: "HTTP 404 for item \(record.id)"))
        }

        ledger.record(records[0..<2300].filter { $0.id != 1500 }.map(outcome), bytes: 0)
        output.advance()
        XCTAssertEqual(output.manifestItemsWritten, 1499, "1500 has no outcome yet")
        ledger.record([outcome(records[1499])], bytes: 0)
        output.advance()
        XCTAssertEqual(output.manifestItemsWritten, 2300)

        let failed = (1...2300).count { $0 % 7 == 0 }
        try output.commit(counts: [.done: 2300 - failed, .failed: failed, .pending: 300])
        let manifest = try Manifest.read(from: layout.manifest)
        XCTAssertEqual(try Data(contentsOf: layout.manifest), manifest.encoded())
        XCTAssertTrue(manifest.items.map(\.id) == Fixtures.ids(1...2600))
        XCTAssertEqual(manifest.items[1499].status, .done)
        XCTAssertEqual(manifest.items[1399].status, .failed, "id 1400 is a multiple of 7")
        XCTAssertEqual(manifest.items[1399].error?.message, "HTTP 404 for item 1400")
        XCTAssertEqual(manifest.items.lastIndex { $0.status != .pending }, 2299, "ids 2301 on are pending")
        XCTAssertEqual(try GalleryFiles.read(layout.root), try GalleryFiles.expected(for: manifest))
        XCTAssertEqual(try pages(layout), ["0001.html", "0002.html", "0003.html", "failures-0001.html"])
    }

    /// A check that refuses the commit leaves every file as it was, and no temporary file.
    func testAFailedCheckBeforeCommitKeepsTheOldFiles() throws {
        let (layout, _, output) = try makeOutput(Fixtures.records(3)) { layout in
            try Data("old manifest".utf8).write(to: layout.manifest)
            try Data("old page".utf8).write(to: layout.gallery)
            try FileManager.default.createDirectory(at: layout.pages, withIntermediateDirectories: true)
            try Data("old page 1".utf8).write(to: layout.pages.appendingPathComponent("0001.html"))
        }
        XCTAssertFalse(try output.commit(counts: [.pending: 3], if: { false }))
        XCTAssertEqual(try String(contentsOf: layout.manifest, encoding: .utf8), "old manifest")
        XCTAssertEqual(try String(contentsOf: layout.gallery, encoding: .utf8), "old page")
        XCTAssertEqual(try String(contentsOf: layout.pages.appendingPathComponent("0001.html"), encoding: .utf8), "old page 1")
        let left = try FileManager.default.contentsOfDirectory(atPath: layout.root.path).filter { $0.hasPrefix(".") && $0 != ".archiver" }
        XCTAssertEqual(left + (try pages(layout)).filter { $0.hasPrefix(".") }, [])
    }
}
