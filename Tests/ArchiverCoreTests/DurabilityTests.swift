import Foundation
import XCTest
@testable import ArchiverCore

/// The durability seam: what `--durable` syncs, and what a failing disk does to an item.
final class DurabilityTests: XCTestCase {
    /// The real file system, recording syncs and failing the write of the file named `failing`.
    final class RecordingFileSystem: FileSystem {
        let real = POSIXFileSystem()
        let failing: String?
        let failDirectorySync: Bool
        let log = Locked<(syncedFiles: Int, unsyncedFiles: Int, directorySyncs: Int)>((0, 0, 0))

        init(failing: String? = nil, failDirectorySync: Bool = false) {
            self.failing = failing
            self.failDirectorySync = failDirectorySync
        }

        func writeAtomically(_ data: Data, directory: String, name: String, sync: Bool) throws(FileSystemError) -> FileStamp? {
            if let failing, name == failing { throw FileSystemError(.write, path: "\(directory)/\(name)", errno: ENOSPC) }
            log.withLock { sync ? ($0.syncedFiles += 1) : ($0.unsyncedFiles += 1) }
            return try real.writeAtomically(data, directory: directory, name: name, sync: sync)
        }

        func syncDirectory(_ path: String) throws(FileSystemError) {
            log.withLock { $0.directorySyncs += 1 }
            if failDirectorySync { throw FileSystemError(.fsync, .directory, path: path, errno: EIO) }
            try real.syncDirectory(path)
        }

        func remove(_ path: String) { real.remove(path) }
    }

    private static func run(_ config: RunConfiguration, _ fileSystem: RecordingFileSystem, _ records: [CatalogRecord]) throws -> RunSummary {
        let archiver = Archiver(configuration: config, fetcher: Fixtures.fetcher(for: config), fileSystem: fileSystem)
        return try archiver.run(catalog: Fixtures.catalog(records))
    }

    func testDurableRunsFsyncEveryFileAndBatchDirectorySyncs() throws {
        let server = try Fixtures.placeholderServer()
        let out = Fixtures.temporaryDirectory(self)
        var config = Fixtures.configuration(out: out, server: server, concurrency: 8)
        config.durable = true
        let fileSystem = RecordingFileSystem()
        // Eight bodies arrive together, so the writer has a backlog to batch.
        server.holdRequests()
        let finished = expectation(description: "run finished")
        let result = Locked<RunSummary?>(nil)
        let configuration = config
        DispatchQueue.global().async {
            result.withLock { $0 = try? Self.run(configuration, fileSystem, Fixtures.records(60)) }
            finished.fulfill()
        }
        XCTAssertTrue(server.waitUntilInFlight(8, timeout: 10))
        server.release()
        wait(for: [finished], timeout: 30)
        XCTAssertEqual(result.withLock { $0 }?.done, 60)
        let log = fileSystem.log.withLock { $0 }
        XCTAssertEqual(log.syncedFiles, 60)
        XCTAssertEqual(log.unsyncedFiles, 0)
        XCTAssertGreaterThanOrEqual(log.directorySyncs, 1, "the directory is synced before its files are journaled")
        XCTAssertLessThan(log.directorySyncs, 60, "one directory sync per batch of journal lines, not per image")
        XCTAssertEqual(JournalIndex(path: BundleLayout(root: out).journal.path).count, 60)
    }

    func testPlainRunsNeverFsync() throws {
        let server = try Fixtures.placeholderServer()
        let fileSystem = RecordingFileSystem()
        _ = try Self.run(Fixtures.configuration(out: Fixtures.temporaryDirectory(self), server: server), fileSystem, Fixtures.records(5))
        XCTAssertEqual(fileSystem.log.withLock { $0.syncedFiles + $0.directorySyncs }, 0)
    }

    func testAFullDiskFailsTheItemAsIOAndLeavesNoFile() throws {
        let server = try Fixtures.placeholderServer()
        let out = Fixtures.temporaryDirectory(self)
        let fileSystem = RecordingFileSystem(failing: "2.png")
        let summary = try Self.run(Fixtures.configuration(out: out, server: server), fileSystem, Fixtures.records(3))
        XCTAssertEqual(summary.done, 2)
        XCTAssertEqual(summary.failuresByKind, ["io": 1])
        let item = try XCTUnwrap(Fixtures.manifest(in: out).items.first { $0.id == 2 })
        let images = BundleLayout(root: out).images.path
        XCTAssertEqual(item.error?.message, "write failed: cannot write \(images)/2.png: No space left on device")
        XCTAssertEqual(Fixtures.imageNames(in: out), ["1.png", "3.png"])
    }

    /// A real failure, not an injected one: `images/` is gone when the bodies arrive, so each item
    /// is failed as `io` with a message naming the file that could not be created and the reason.
    func testARealWriteFailureRecordsIOWithThePathAndTheSystemsReason() throws {
        let server = try Fixtures.placeholderServer()
        let out = Fixtures.temporaryDirectory(self)
        let images = BundleLayout(root: out).images
        let config = Fixtures.configuration(out: out, server: server, concurrency: 2)
        server.holdRequests()
        let finished = expectation(description: "run finished")
        let result = Locked<RunSummary?>(nil)
        DispatchQueue.global().async {
            result.withLock { $0 = try? Self.run(config, RecordingFileSystem(), Fixtures.records(2)) }
            finished.fulfill()
        }
        XCTAssertTrue(server.waitUntilInFlight(2, timeout: 10))
        try FileManager.default.removeItem(at: images)
        server.release()
        wait(for: [finished], timeout: 30)
        XCTAssertEqual(try XCTUnwrap(result.withLock { $0 }).failuresByKind, ["io": 2])
        let items = try Fixtures.manifest(in: out).items
        XCTAssertEqual(items.count, 2)
        for item in items {
            XCTAssertEqual(item.error?.kind, "io")
            let message = try XCTUnwrap(item.error?.message)
            let name = try XCTUnwrap(KeyedStore.fileName(for: item.id, format: .png))
            XCTAssertTrue(message.hasPrefix("write failed: cannot create \(images.path)/.partial-\(name)-"), message)
            XCTAssertTrue(message.hasSuffix(": No such file or directory"), message)
        }
    }

    func testAJournalThatCannotBeWrittenLeavesNoFileAndFailsTheItemsAsIO() throws {
        let server = try Fixtures.placeholderServer()
        let out = Fixtures.temporaryDirectory(self)
        var config = Fixtures.configuration(out: out, server: server)
        config.durable = true
        let summary = try Self.run(config, RecordingFileSystem(failDirectorySync: true), Fixtures.records(3))
        XCTAssertEqual(summary.failuresByKind, ["io": 3])
        XCTAssertEqual(Fixtures.imageNames(in: out), [], "not journaled means not done: no file stays")
        let images = BundleLayout(root: out).images.path
        XCTAssertEqual(
            Set(try Fixtures.manifest(in: out).items.map { $0.error?.message }),
            ["write failed: cannot fsync directory \(images): Input/output error"])
    }
}
