#if canImport(Glibc)
import Glibc
#endif
import Foundation
import XCTest
@testable import ArchiverCore

/// `OpenDirectory`: the names and sizes of the files in a directory whatever is in it.
final class OpenDirectoryTests: XCTestCase {
    /// Every name `forEachName` gives, in its order.
    private func walkedNames(_ directory: OpenDirectory) -> [String] {
        var names: [String] = []
        directory.forEachName { names.append($0) }
        return names
    }

    func testAWalkGivesEveryNameButDotAndDotDotAsFileManagerListsThemAndStartsOverEachTime() throws {
        let dir = Fixtures.temporaryDirectory(self)
        for name in ["1.png", ".partial-3-4", "..x", "notes.txt", "sub"] {
            XCTAssertTrue(FileManager.default.createFile(atPath: dir.appendingPathComponent(name).path, contents: nil))
        }
        XCTAssertEqual(symlink("/nowhere", dir.appendingPathComponent("link").path), 0)
        // A name that is not UTF-8 reads as FileManager reads it, with U+FFFD.
        let fd = open(Array(dir.appendingPathComponent("x").path.utf8CString.dropLast()) + [CChar(bitPattern: 0xFF), 0], O_WRONLY | O_CREAT, 0o644)
        XCTAssertGreaterThanOrEqual(fd, 0)
        close(fd)
        let directory = try XCTUnwrap(OpenDirectory(path: dir.path))
        let listed = try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
        XCTAssertEqual(listed.count, 7)
        XCTAssertEqual(walkedNames(directory).sorted(), listed)
        XCTAssertEqual(walkedNames(directory).sorted(), listed, "a second walk starts from the first name")
        XCTAssertFalse(directory.isEmpty)
    }

    func testAnEmptyDirectoryIsEmptyAndAWalkCanStopByThrowing() throws {
        let dir = Fixtures.temporaryDirectory(self)
        XCTAssertEqual(walkedNames(try XCTUnwrap(OpenDirectory(path: dir.path))), [])
        XCTAssertTrue(try XCTUnwrap(OpenDirectory(path: dir.path)).isEmpty)
        for index in 0..<10 { XCTAssertTrue(FileManager.default.createFile(atPath: dir.appendingPathComponent("\(index)").path, contents: nil)) }
        struct Enough: Error {}
        var seen = 0
        XCTAssertThrowsError(try OpenDirectory(path: dir.path)?.forEachName { (_) throws(Enough) in
            seen += 1
            if seen == 3 { throw Enough() }
        })
        XCTAssertEqual(seen, 3)
    }

    func testALinkToADirectoryOpensOnlyWhenFollowed() throws {
        let dir = Fixtures.temporaryDirectory(self)
        let target = dir.appendingPathComponent("target")
        try FileManager.default.createDirectory(at: target, withIntermediateDirectories: false)
        XCTAssertTrue(FileManager.default.createFile(atPath: target.appendingPathComponent("precious").path, contents: nil))
        let link = dir.appendingPathComponent("link")
        XCTAssertEqual(symlink(target.path, link.path), 0)
        XCTAssertNil(OpenDirectory(path: link.path, followingLink: false))
        // With O_DIRECTORY, Linux says ENOTDIR of a link O_NOFOLLOW will not go through.
        XCTAssertThrowsError(try OpenDirectory(opening: link.path, followingLink: false)) { XCTAssertEqual($0 as? Errno, Errno(rawValue: ENOTDIR)) }
        XCTAssertEqual(walkedNames(try XCTUnwrap(OpenDirectory(path: link.path))), ["precious"])
        XCTAssertNil(OpenDirectory(path: target.appendingPathComponent("precious").path), "a file is not a directory")
        XCTAssertNil(OpenDirectory(path: dir.appendingPathComponent("missing").path))
    }

    /// Two sparse files of 2^63 - 1 bytes in `images/` used to overflow the total and kill
    /// `archiver status` (SIGILL); the total is clamped, and small files still add up exactly.
    func testTotalBytesOfHugeSparseFilesIsClampedAndStatusReportsIt() throws {
        let out = try Fixtures.memoryDirectory(self)
        let layout = BundleLayout(root: out)
        try FileManager.default.createDirectory(at: layout.state, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: layout.images, withIntermediateDirectories: true)
        try Data(count: 10).write(to: layout.images.appendingPathComponent("1.png"))
        try Data(count: 5).write(to: layout.images.appendingPathComponent("2.png"))
        XCTAssertEqual(OpenDirectory(path: layout.images.path)?.totalBytes(), 15)

        for name in ["3.png", "4.png"] {
            try Fixtures.sparseFile(layout.images.appendingPathComponent(name), size: .max)
        }
        XCTAssertEqual(OpenDirectory(path: layout.images.path)?.totalBytes(), .max)
        let status = try XCTUnwrap(BundleStatus.read(directory: out))
        XCTAssertEqual(status.bytesOnDisk, .max)
        XCTAssertTrue(status.text.contains("9223372036.9 GB in images/"), status.text)
    }
}
