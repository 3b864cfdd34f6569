#if canImport(Glibc)
import Glibc
#endif
import Foundation
import XCTest
@testable import ArchiverCore

/// `KeyedStore`'s clean-ups walk `images/` name by name: what they remove and count, and what
/// they leave, including everything behind a link at `images/`.
final class KeyedStoreTests: XCTestCase {
    private func touch(_ directory: URL, _ names: [String]) {
        for name in names { XCTAssertTrue(FileManager.default.createFile(atPath: directory.appendingPathComponent(name).path, contents: nil)) }
    }

    func testPrepareRemovesAndCountsTheTemporaryFilesOnly() throws {
        let images = Fixtures.temporaryDirectory(self).appendingPathComponent("images")
        let store = KeyedStore(directory: images)
        XCTAssertEqual(try store.prepare(), 0, "made, with nothing in it")
        touch(images, [".partial-3-123", ".partial-7.png-1-2", "1.png", ".hidden", "partial-4"])
        XCTAssertEqual(try store.prepare(), 2)
        XCTAssertEqual(Fixtures.fileNames(in: images), [".hidden", "1.png", "partial-4"])
    }

    func testPruneRemovesAndCountsTheRecordFilesRefusedOnly() throws {
        let images = Fixtures.temporaryDirectory(self).appendingPathComponent("images")
        let store = KeyedStore(directory: images)
        try store.prepare()
        touch(images, ["1.png", "2.jpg", "3.gif", "3.png", "notes.txt", ".4.png", "x.png", "5.tiff"])
        var asked: [String] = []
        let removed = store.prune { stem, format in
            asked.append("\(stem) \(format.fileExtension)")
            return stem == "1" || (stem == "3" && format == .gif)
        }
        XCTAssertEqual(removed, 3)
        XCTAssertEqual(asked.sorted(), ["1 png", "2 jpg", "3 gif", "3 png", "x png"], "only names some id would have (x: a string id)")
        XCTAssertEqual(Fixtures.fileNames(in: images), [".4.png", "1.png", "3.gif", "5.tiff", "notes.txt"])
    }

    func testNeitherCleanUpGoesThroughALinkedImagesDirectory() throws {
        let dir = Fixtures.temporaryDirectory(self)
        let outside = dir.appendingPathComponent("outside")
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: false)
        touch(outside, [".partial-1-2", "9.png"])
        let images = dir.appendingPathComponent("images")
        XCTAssertEqual(symlink(outside.path, images.path), 0)
        let store = KeyedStore(directory: images)
        XCTAssertEqual(try store.prepare(), 0)
        XCTAssertEqual(store.prune { _, _ in false }, 0)
        XCTAssertEqual(Fixtures.fileNames(in: outside), [".partial-1-2", "9.png"])
    }
}
