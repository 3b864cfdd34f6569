import Foundation
import XCTest
@testable import ArchiverCore

final class BundleOutputTests: XCTestCase {
    /// Items are written in id order as soon as they and every item before them have an
    /// outcome; neither file is in place before `commit`, and the committed files are exactly
    /// what the whole manifest gives.
    func testItemsAreWrittenInOrderAsTheyFinishAndTheFilesOnlyAtCommit() throws {
        let out = Fixtures.temporaryDirectory(self)
        let layout = BundleLayout(root: out)
        try FileManager.default.createDirectory(at: layout.state, withIntermediateDirectories: true)
        var records = Fixtures.records(6)
        records.swapAt(0, 5)  // catalog order is not id order
        records[2].albumId = 2
        let catalog = try Fixtures.catalog(records)
        var config = RunConfiguration()
        config.outputDirectory = out
        let ledger = Ledger(
            records: catalog.records, mirrors: config.mirrors, previous: JournalIndex(path: layout.journal.path),
            kept: [], total: records.count)
        let output = try BundleOutput(catalog: catalog, ledger: ledger, configuration: config, layout: layout)
        func done(_ id: Int) -> ItemRecord {
            let url = records.first { $0.id == id }!.url
            return ItemRecord(
                id: id, url: url, source: url, status: .done, bytes: 139, sha256: String(repeating: "a", count: 64),
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

        // The writing thread writes what is ready at once, then every interval, until stopped.
        ledger.record([done(5)], bytes: 139)
        output.startWriting(every: .seconds(3600))
        output.stopWriting()
        XCTAssertEqual(output.manifestItemsWritten, 5)
        XCTAssertFalse(FileManager.default.fileExists(atPath: layout.manifest.path))

        // 6 never finishes (an interrupted run): it is written as pending at the end.
        try output.commit(counts: [.done: 5, .pending: 1], beforeCommit: {})
        let manifest = try Manifest.read(from: layout.manifest)
        XCTAssertEqual(try Data(contentsOf: layout.manifest), manifest.encoded())
        XCTAssertEqual(manifest.items.map(\.status), [.done, .done, .done, .done, .done, .pending])
        XCTAssertEqual(try String(contentsOf: layout.gallery, encoding: .utf8), Gallery.html(for: manifest))
        let left = try FileManager.default.contentsOfDirectory(atPath: out.path).filter { $0.hasPrefix(".") && $0 != ".archiver" }
        XCTAssertEqual(left, [], "no temporary file is left")
    }

    /// A check that fails before commit leaves both files as they were.
    func testAFailedCheckBeforeCommitKeepsTheOldFiles() throws {
        let out = Fixtures.temporaryDirectory(self)
        let layout = BundleLayout(root: out)
        try FileManager.default.createDirectory(at: layout.state, withIntermediateDirectories: true)
        try Data("old manifest".utf8).write(to: layout.manifest)
        try Data("old page".utf8).write(to: layout.gallery)
        let catalog = try Fixtures.catalog(Fixtures.records(3))
        var config = RunConfiguration()
        config.outputDirectory = out
        let ledger = Ledger(
            records: catalog.records, mirrors: config.mirrors, previous: JournalIndex(path: layout.journal.path),
            kept: [], total: 3)
        let output = try BundleOutput(catalog: catalog, ledger: ledger, configuration: config, layout: layout)
        XCTAssertThrowsError(try output.commit(counts: [.pending: 3], beforeCommit: { () throws(ItemError) in throw .io("changed") }))
        XCTAssertEqual(try String(contentsOf: layout.manifest, encoding: .utf8), "old manifest")
        XCTAssertEqual(try String(contentsOf: layout.gallery, encoding: .utf8), "old page")
        let left = try FileManager.default.contentsOfDirectory(atPath: out.path).filter { $0.hasPrefix(".") && $0 != ".archiver" }
        XCTAssertEqual(left, [])
    }
}
