import Foundation
import XCTest
@testable import ArchiverCore

/// A file-system failure keeps the call, the path and `errno`, and says them in one line.
final class FileSystemErrorTests: XCTestCase {
    private var directory: URL!

    override func setUp() {
        directory = Fixtures.temporaryDirectory(self)
    }

    func testAWriteIntoAMissingDirectoryKeepsThePathAndENOENT() {
        let missing = directory.appendingPathComponent("missing").path
        XCTAssertThrowsError(try POSIXFileSystem().writeAtomically(Data([1]), directory: missing, name: "7.png", sync: false)) {
            guard let error = $0 as? FileSystemError else { return XCTFail("\($0)") }
            XCTAssertEqual(error.operation, .create)
            XCTAssertEqual(error.errno, ENOENT)
            XCTAssertTrue(error.path.hasPrefix(missing + "/.partial-7.png-"), error.path)
            XCTAssertEqual(error.kind, "cannot-create")
            XCTAssertEqual(error.description, "cannot create \(error.path): No such file or directory")
        }
    }

    /// A run that cannot make its bundle's directories ends with the `FileSystemError` itself
    /// (kind `io`), not its text.
    func testARunThatCannotMakeItsBundleKeepsTheFileSystemError() throws {
        let server = try Fixtures.placeholderServer()
        let config = Fixtures.configuration(out: URL(fileURLWithPath: "/proc/archiver-test/out"), server: server)
        let archiver = Archiver(configuration: config, fetcher: Fixtures.fetcher(for: config))
        XCTAssertThrowsError(try archiver.run(catalog: try Fixtures.catalog(Fixtures.records(1)))) {
            guard case .fileSystem(let error) = $0 as? RunError else { return XCTFail("\($0)") }
            XCTAssertEqual(error.operation, .create)
            XCTAssertEqual(error.errno, ENOENT)
            XCTAssertEqual(($0 as? RunError)?.kind, "io")
            XCTAssertEqual("\($0)", "cannot create \(error.path): No such file or directory")
        }
    }

    func testTheJournalSaysWhatItCouldNotOpen() {
        let path = directory.appendingPathComponent("missing/journal").path
        XCTAssertThrowsError(try Journal(path: path)) {
            XCTAssertEqual($0 as? FileSystemError, FileSystemError(.open, .journal, path: path, errno: ENOENT))
            XCTAssertEqual("\($0)", "cannot open journal \(path): No such file or directory")
        }
    }

    func testAFailedRenameNamesBothPathsAndRemovesTheTemporaryFile() throws {
        let taken = directory.appendingPathComponent("taken")
        try FileManager.default.createDirectory(at: taken.appendingPathComponent("inside"), withIntermediateDirectories: true)
        XCTAssertThrowsError(try AtomicFileWriter.write(Array("x".utf8), to: taken.path)) {
            guard let error = $0 as? FileSystemError else { return XCTFail("\($0)") }
            XCTAssertEqual(error.operation, .rename)
            XCTAssertEqual(error.destination, taken.path)
            XCTAssertTrue([EISDIR, ENOTEMPTY, EEXIST].contains(error.errno), "\(error)")
            XCTAssertEqual(error.description, "cannot rename \(error.path) to \(taken.path): \(String(cString: strerror(error.errno)))")
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path), ["taken"])
    }

    /// A failure Foundation reports (creating `images/`) keeps the errno under it, not its text.
    func testAStoreUnderAFileKeepsENOTDIR() throws {
        let file = directory.appendingPathComponent("a-file")
        try Data("x".utf8).write(to: file)
        let images = file.appendingPathComponent("images")
        XCTAssertThrowsError(try KeyedStore(directory: images).prepare()) {
            XCTAssertEqual($0 as? FileSystemError, FileSystemError(.create, path: images.path, errno: ENOTDIR))
        }
    }

    func testAnItemsWriteFailureIsRecordedAsIOWithTheSameMessage() {
        let error = FileSystemError(.write, path: "/x/images/7.png", errno: ENOSPC)
        XCTAssertEqual(error.description, "cannot write /x/images/7.png: No space left on device")
        let recorded = RecordedError(ItemError(error))
        XCTAssertEqual(recorded.kind, "io")
        XCTAssertEqual(recorded.message, "write failed: cannot write /x/images/7.png: No space left on device")
    }
}
