import Foundation
import XCTest
@testable import ArchiverCore

/// The second phase on its own: a plan made from an opened bundle's journal and files, and what
/// it journals before any request.
final class PlanningTests: XCTestCase {
    private var out: URL!
    private var layout: BundleLayout { BundleLayout(root: out) }
    private let said = Locked<[String]>([])

    override func setUpWithError() throws {
        out = Fixtures.temporaryDirectory(self)
    }

    private var configuration: RunConfiguration { PhaseFixtures.configuration(out) }

    private func plan(_ catalog: Catalog, _ config: RunConfiguration? = nil) throws -> (OpenedBundle, PlannedRun) {
        try PhaseFixtures.plan(catalog, config ?? configuration, log: { [said] line in said.withLock { $0.append(line) } })
    }

    private func done(_ record: CatalogRecord, bytes: Int = 10) throws -> ItemRecord {
        try PhaseFixtures.done(record, in: layout, bytes: bytes)
    }

    private func journal(_ lines: [ItemRecord]) throws {
        try PhaseFixtures.journal(lines, in: layout)
    }

    func testDoneRecordsWithWholeFilesAreSkippedAndFailuresTriedAgain() throws {
        let records = Fixtures.records(5)
        let failure = PhaseFixtures.failed(records[2])
        // Record 2's file is shorter than its line says: not taken for done.
        let damaged = try done(records[1], bytes: 5)
        var claimed = damaged
        claimed.bytes = 10
        try journal([try done(records[0]), claimed, failure])

        let (_, planned) = try plan(try Fixtures.catalog(records))
        XCTAssertEqual(planned.plan.kept, [0])
        XCTAssertEqual(planned.plan.jobCount, 4)
        XCTAssertEqual(planned.plan.retryingFailures, 1)
        XCTAssertEqual(planned.ledger.progress.total, 4)
        XCTAssertEqual(said.withLock { $0 }, ["resuming: 1 done, 1 failed (trying again), 4 to go"])
    }

    func testRejectedRecordsAreJournaledFailedBeforeAnyRequest() throws {
        var records = Fixtures.records(3)
        records[1].url = "ftp://example.com/1.png"
        let (bundle, planned) = try plan(try Fixtures.catalog(records))
        XCTAssertEqual(planned.plan.rejected, [1])
        XCTAssertEqual(planned.plan.jobCount, 2)
        XCTAssertEqual(planned.ledger.progress.failed, 1, "counted before any request")
        let journaled = JournalIndex(path: bundle.layout.journal.path)
        XCTAssertEqual(journaled.ids, [records[1].id])
        XCTAssertEqual(journaled.record(for: records[1].id)?.status, .failed)
        XCTAssertTrue(said.withLock { $0 }.isEmpty, "a first run says nothing")
    }

    func testPruneRemovesFilesOfRecordsTheCatalogNoLongerHas() throws {
        let records = Fixtures.records(3)
        try journal([try done(records[0]), try done(records[1]), try done(records[2])])
        var config = configuration
        config.prune = true
        let (_, planned) = try plan(try Fixtures.catalog(Array(records[0..<2])), config)
        XCTAssertEqual(planned.plan.kept, [0, 1])
        XCTAssertEqual(Fixtures.imageNames(in: out), ["1.png", "2.png"])
    }
}
