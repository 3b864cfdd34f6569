import Foundation
import XCTest
@testable import ArchiverCore

/// `--shard I/N`: which records a shard holds, and runs of one shard.
final class ShardTests: XCTestCase {
    func testParsesOneBasedIOverN() {
        XCTAssertEqual(Shard("2/4"), Shard(index: 2, count: 4))
        XCTAssertEqual(Shard("1/1")?.description, "1/1")
        for bad in ["0/4", "5/4", "2/0", "2", "2/4/1", "a/4", "-1/4", " 2/4", "2/", "/4", "２/4"] {
            XCTAssertNil(Shard(bad), bad)
        }
    }

    func testAShardIsTheSHA256OfTheCatalogURLModuloN() {
        // Pinned with Python: int.from_bytes(sha256(url).digest()[:8], "big") % n + 1.
        XCTAssertEqual(Shard.index(ofURL: "https://via.placeholder.com/600/92c952", count: 4), 2)
        XCTAssertEqual(Shard.index(ofURL: "https://via.placeholder.com/600/92c952", count: 7), 1)
        XCTAssertEqual(Shard.index(ofURL: "a", count: 4), 3)
        XCTAssertEqual(Shard.index(ofURL: "a", count: 7), 5)
    }

    func testAddingRecordsMovesNoRecordToAnotherShard() throws {
        let before = try Fixtures.catalog(Fixtures.records(200))
        let after = try Fixtures.catalog(Fixtures.records(150, firstID: 1000) + Fixtures.records(200))
        for index in 1...3 {
            let shard = Shard(index: index, count: 3)!
            let old = Set(before.shard(shard, field: .url).records.map(\.id))
            let new = Set(after.shard(shard, field: .url).records.map(\.id))
            XCTAssertFalse(old.isEmpty)
            XCTAssertEqual(new.filter { $0 < 1000 }, old, "shard \(shard)")
        }
    }

    func testTheRealCatalogSplitsIntoBalancedShardsWithSharedURLsTogether() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("samples/photos.json").path
        let catalog = try Catalog(source: path, path: path)
        XCTAssertEqual(catalog.records.count, 5000)
        var shardOfURL: [String: Int] = [:]
        var total = 0
        for index in 1...4 {
            let shard = catalog.shard(Shard(index: index, count: 4)!, field: .url)
            XCTAssertEqual(shard.sharding?.catalogRecords, 5000)
            XCTAssert((1000...1500).contains(shard.records.count), "shard \(index)/4 holds \(shard.records.count)")
            total += shard.records.count
            for record in shard.records {
                XCTAssertEqual(shardOfURL[record.url, default: index], index, "\(record.url) is in two shards")
                shardOfURL[record.url] = index
            }
        }
        XCTAssertEqual(total, 5000)
        XCTAssertEqual(shardOfURL.count, 4996)
    }

    func testAShardViewReadsBackEveryFieldOfItsRecords() throws {
        let records = Fixtures.records(60)
        let directory = Fixtures.temporaryDirectory(self)
        let path = try Fixtures.writeCatalog(records, to: directory.appendingPathComponent("c.json"))
        let catalog = try Catalog(source: path, path: path)
        let shard = catalog.shard(Shard(index: 2, count: 3)!, field: .thumbnailUrl)
        XCTAssertEqual(Array(shard.records), records.filter { Shard(index: 2, count: 3)!.contains(url: $0.thumbnailUrl) })
        XCTAssertEqual(Manifest.CatalogInfo(shard).records, 60)
        XCTAssertEqual(Manifest.CatalogInfo(shard).shard, .init(shard: Shard(index: 2, count: 3)!, records: shard.records.count))
    }

    func testShardsFetchEachDistinctURLOnceAndHoldOnlyTheirRecords() throws {
        let server = try Fixtures.placeholderServer()
        var records = Fixtures.records(40)
        records.append(Fixtures.record(41, colour: "00ff00"))
        records.append(Fixtures.record(42, colour: "00ff00"))
        let catalog = try Fixtures.catalog(records)
        let root = Fixtures.temporaryDirectory(self)
        var ids: [RecordID] = []
        for index in 1...3 {
            var config = Fixtures.configuration(out: root.appendingPathComponent("s\(index)"), server: server)
            config.shard = Shard(index: index, count: 3)
            let summary = try Fixtures.run(config, catalog: catalog)
            let manifest = try Fixtures.manifest(in: config.outputDirectory)
            XCTAssertEqual(summary.done, manifest.items.count)
            XCTAssertEqual(manifest.catalog.records, 42)
            XCTAssertEqual(manifest.catalog.shard?.index, index)
            XCTAssertEqual(manifest.catalog.shard?.records, manifest.items.count)
            XCTAssertEqual(Fixtures.imageNames(in: config.outputDirectory).count, manifest.items.count)
            ids += manifest.items.map(\.id)
        }
        XCTAssertEqual(ids.sorted(), Fixtures.ids(1...42))
        XCTAssertEqual(server.total, 41)
        XCTAssertEqual(server.count("/600/00ff00"), 1)
    }

    func testAShardDirectoryResumesAsItselfAndRefusesAnotherShard() throws {
        let server = try Fixtures.placeholderServer()
        let catalog = try Fixtures.catalog(Fixtures.records(30))
        var config = Fixtures.configuration(out: Fixtures.temporaryDirectory(self), server: server)
        config.shard = Shard(index: 1, count: 2)
        let first = try Fixtures.run(config, catalog: catalog)
        let requests = server.total
        let again = try Fixtures.run(config, catalog: catalog)
        XCTAssertEqual(server.total, requests, "a rerun of a complete shard makes no request")
        XCTAssertEqual(again.done, first.done)
        XCTAssertEqual(again.pending, 0)
        for other in [Shard(index: 2, count: 2), Shard(index: 1, count: 3), nil] {
            config.shard = other
            XCTAssertThrowsError(try Fixtures.run(config, catalog: catalog)) { error in
                guard case .optionsChanged(_, let option, let recorded, _) = error as? RunError else {
                    return XCTFail("\(error)")
                }
                XCTAssertEqual(option, "--shard")
                XCTAssertEqual(recorded, "1/2")
            }
        }
        let status = BundleStatus.read(directory: config.outputDirectory)
        XCTAssertEqual(status?.done, first.done)
    }

    func testTheCommandRefusesAShardThatCannotBeWithExitTwo() throws {
        let bad = try ArchiverRun.run(["run", "--catalog", "x.json", "--shard", "5/4"])
        XCTAssertEqual(bad.status, 2)
        XCTAssertEqual(bad.stderr, "archiver: --shard takes I/N, one-based with 1 <= I <= N <= 100000, e.g. 2/4, not '5/4'\n")
    }
}
