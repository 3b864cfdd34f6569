import Foundation
import XCTest
@testable import ArchiverCore

/// `OpenDirectory`: sizes of the files in a directory whatever is in it.
final class OpenDirectoryTests: XCTestCase {
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
