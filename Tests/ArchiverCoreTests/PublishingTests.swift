#if canImport(Glibc)
import Glibc
#endif
import Foundation
import XCTest
@testable import ArchiverCore

/// The last phase on its own: the manifest, the gallery and the compacted journal made from a
/// given ledger, and the summary.
final class PublishingTests: XCTestCase {
    private var out: URL!
    private var layout: BundleLayout { BundleLayout(root: out) }
    private let records = Fixtures.records(4)

    override func setUpWithError() throws {
        out = Fixtures.temporaryDirectory(self)
    }

    private var configuration: RunConfiguration { PhaseFixtures.configuration(out) }

    /// A run's phases up to the fetch: record 1 done in an earlier run (journaled twice, so the
    /// journal has something to compact), the others to fetch.
    private func publishing() throws -> (Publishing, PlannedRun) {
        let first = try PhaseFixtures.done(records[0], in: layout)
        try PhaseFixtures.journal([first, first], in: layout)
        let catalog = try Fixtures.catalog(records)
        let (bundle, planned) = try PhaseFixtures.plan(catalog, configuration)
        XCTAssertEqual(planned.plan.jobCount, 3)
        let publishing = Publishing(
            catalog: catalog, configuration: configuration, bundle: bundle, planned: planned, fileSystem: POSIXFileSystem(),
            log: { _ in })
        return (publishing, planned)
    }

    /// Names starting with a dot in the bundle's top and `pages/`, but `.archiver`: temporary files.
    private func temporaryFiles() -> [String] {
        (Fixtures.fileNames(in: out) + Fixtures.fileNames(in: layout.pages)).filter { $0.hasPrefix(".") && $0 != ".archiver" }
    }

    func testTheManifestPagesAndCompactedJournalAreWrittenFromTheLedgerAndPutInPlaceOnlyAtTheEnd() throws {
        let (publishing, planned) = try publishing()
        publishing.startWriting()
        planned.ledger.record([try PhaseFixtures.done(records[1], in: layout), PhaseFixtures.failed(records[3])], bytes: 10)
        planned.ledger.record([try PhaseFixtures.done(records[2], in: layout)], bytes: 10)
        publishing.stopWriting()
        XCTAssertFalse(FileManager.default.fileExists(atPath: layout.manifest.path), "nothing is in place before publish")
        XCTAssertFalse(FileManager.default.fileExists(atPath: layout.gallery.path))

        let summary = try publishing.publish(cancelled: false, started: .now())
        XCTAssertEqual([summary.done, summary.failed, summary.pending], [3, 1, 0])
        XCTAssertEqual(summary.failuresByKind, ["http-status": 1])
        XCTAssertFalse(summary.interrupted)
        let manifest = try Manifest.read(from: layout.manifest)
        XCTAssertEqual(manifest.items.map(\.status), [.done, .done, .done, .failed])
        XCTAssertEqual(try GalleryFiles.read(layout.root), try GalleryFiles.expected(for: manifest))
        let journal = JournalIndex(path: layout.journal.path)
        XCTAssertEqual(journal.lineCount, 4, "compacted to one line per record")
        XCTAssertEqual(journal.ids, Fixtures.ids(1...4))
        XCTAssertNotNil(BundleStamp.read(layout), "a completed run stamps the bundle")
        XCTAssertEqual(temporaryFiles(), [], "no temporary file is left")
    }

    func testAnInterruptedRunPublishesWhatFinishedAndTheRestPendingWithoutCompacting() throws {
        let (publishing, planned) = try publishing()
        planned.ledger.record([try PhaseFixtures.done(records[1], in: layout)], bytes: 10)

        let summary = try publishing.publish(cancelled: true, started: .now())
        XCTAssertTrue(summary.interrupted)
        XCTAssertEqual([summary.done, summary.failed, summary.pending], [2, 0, 2])
        XCTAssertEqual(try Manifest.read(from: layout.manifest).items.map(\.status), [.done, .done, .pending, .pending])
        XCTAssertEqual(JournalIndex(path: layout.journal.path).lineCount, 2, "an interrupted run's journal is left as it was")
        XCTAssertNil(BundleStamp.read(layout), "nor is the bundle stamped")
    }

    func testARerunWithNothingNewLeavesTheStampedFilesAsTheyAre() throws {
        let catalog = try Fixtures.catalog(records)
        try PhaseFixtures.journal(try records.map { try PhaseFixtures.done($0, in: layout) }, in: layout)
        func publishAgain() throws -> RunSummary {
            let (bundle, planned) = try PhaseFixtures.plan(catalog, configuration)
            XCTAssertEqual(planned.plan.jobCount, 0)
            let publishing = Publishing(
                catalog: catalog, configuration: configuration, bundle: bundle, planned: planned, fileSystem: POSIXFileSystem(),
                log: { _ in })
            publishing.startWriting()
            publishing.stopWriting()
            return try publishing.publish(cancelled: false, started: .now())
        }
        func inode(_ url: URL) -> ino_t {
            var info = stat()
            return stat(url.path, &info) == 0 ? info.st_ino : 0
        }

        XCTAssertEqual(try publishAgain().done, 4)
        let written = (inode(layout.manifest), inode(layout.gallery))
        XCTAssertNotEqual(written.0, 0)
        XCTAssertEqual(try publishAgain().done, 4)
        XCTAssertTrue((inode(layout.manifest), inode(layout.gallery)) == written, "neither file is written again")
        try FileManager.default.removeItem(at: layout.gallery)
        XCTAssertEqual(try publishAgain().done, 4)
        XCTAssertTrue(FileManager.default.fileExists(atPath: layout.gallery.path), "a missing file is written again")
    }

    /// Two sparse files in `pages/` claiming 2^63 - 1 bytes each (not named like pages, so no
    /// gallery removes them) used to overflow the stamp's page bytes as the run published, and
    /// kill it (SIGILL); the stamp now holds the clamped sum and the run completes.
    func testHugeSparseFilesInPagesAreStampedClampedInsteadOfTrapping() throws {
        out = try Fixtures.memoryDirectory(self)
        try FileManager.default.createDirectory(at: layout.pages, withIntermediateDirectories: true)
        for name in ["notes-1.bin", "notes-2.bin"] {
            try Fixtures.sparseFile(layout.pages.appendingPathComponent(name), size: .max)
        }
        let (publishing, planned) = try publishing()
        planned.ledger.record(try records.dropFirst().map { try PhaseFixtures.done($0, in: layout) }, bytes: 30)

        let summary = try publishing.publish(cancelled: false, started: .now())
        XCTAssertEqual(summary.done, 4)
        let stamp = try XCTUnwrap(BundleStamp.read(layout), "a completed run stamps the bundle")
        XCTAssertEqual(stamp.pageBytes, .max)
        XCTAssertEqual(stamp.pageFiles, Fixtures.fileNames(in: layout.pages).filter { !$0.hasPrefix(".") }.count)
    }

    /// Done lines claiming 2^63 - 1 bytes, whose files (sparse) have that size, are kept by the
    /// resume check; adding their bytes in the ledger's tally used to trap (SIGILL) as the run
    /// published. The tally is now clamped and the run completes.
    func testDoneLinesOfHugeSparseFilesAreTalliedClampedInsteadOfTrapping() throws {
        out = try Fixtures.memoryDirectory(self)
        let catalog = try Fixtures.catalog(records)
        try FileManager.default.createDirectory(at: layout.images, withIntermediateDirectories: true)
        var lines: [ItemRecord] = []
        for record in records.prefix(2) {
            let file = layout.images.appendingPathComponent(try XCTUnwrap(KeyedStore.fileName(for: record.id, format: .png)))
            try Fixtures.sparseFile(file, size: .max)
            lines.append(
                ItemRecord(
                    id: record.id, url: record.url, source: record.url, status: .done, bytes: .max, sha256: SHA256Digest.of(Data()),
                    width: 1, height: 1, attempts: 1))
        }
        try PhaseFixtures.journal(lines, in: layout)
        let (bundle, planned) = try PhaseFixtures.plan(catalog, configuration)
        XCTAssertEqual(planned.plan.jobCount, 2, "both lines are kept: their files have the sizes they claim")
        XCTAssertEqual(planned.ledger.tally().bytes, .max)

        let publishing = Publishing(
            catalog: catalog, configuration: configuration, bundle: bundle, planned: planned, fileSystem: POSIXFileSystem(),
            log: { _ in })
        planned.ledger.record(try records.suffix(2).map { try PhaseFixtures.done($0, in: layout) }, bytes: 20)
        let summary = try publishing.publish(cancelled: false, started: .now())
        XCTAssertEqual(summary.done, 4)
        XCTAssertEqual(summary.bundleBytes, .max)
    }
}
