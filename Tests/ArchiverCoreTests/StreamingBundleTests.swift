import Foundation
import XCTest
@testable import ArchiverCore

/// `verify` and `pack` stream (issue #16, finding 6): a file far larger than the memory the
/// process may use is checked or packed, never held. The binary runs under `ulimit -v 400000`
/// (it needs under 200 MB of address space itself), so reading a 600 MB file whole fails.
final class StreamingBundleTests: XCTestCase {
    private static let large: Int64 = 600 << 20
    private var fixture: BundleFixture!

    override func setUpWithError() throws {
        // ThreadSanitizer and AddressSanitizer reserve terabytes of shadow address space at start:
        // under `ulimit -v` the sanitized binary dies before it runs (`make sanitize`).
        if Sanitizers.active { throw XCTSkip("a sanitized binary cannot run under ulimit -v") }
        fixture = try BundleFixture.make(count: 3)
        addTeardownBlock { [fixture] in fixture?.remove() }
    }

    /// Makes `images/<id>.png` a sparse file of `large` zero bytes; with `recorded`, the
    /// manifest's item says that size too (so the file must be read to be judged).
    private func makeLarge(_ id: Int, recorded: Bool, size: Int64 = large) throws {
        let path = fixture.image(id).path
        XCTAssertEqual(truncate(path, off_t(size)), 0)
        guard recorded else { return }
        var manifest = try fixture.manifest()
        let index = try XCTUnwrap(manifest.items.firstIndex { $0.id == RecordID(id) })
        manifest.items[index].bytes = size
        try manifest.write(to: fixture.layout.manifest)
    }

    /// Runs the built binary with at most `kilobytes` of address space.
    private func runLimited(_ arguments: [String], kilobytes: Int = 400_000) throws -> ArchiverRun {
        let binary = Bundle.main.bundleURL.appendingPathComponent("archiver").path
        return try ArchiverRun.run(shell: "ulimit -v \(kilobytes); exec \"$@\"", [binary] + arguments)
    }

    func testVerifyOfADirectoryStreamsALargeFileAndNeverReadsOneLongerThanItsEntry() throws {
        try makeLarge(2, recorded: true)
        try makeLarge(3, recorded: false)
        let run = try runLimited(["verify", fixture.root.path])
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertTrue(run.stdout.contains("2: sha256 mismatch"), run.stdout)
        XCTAssertTrue(run.stdout.contains("3: size mismatch: \(Self.large) bytes"), run.stdout)
    }

    func testVerifyOfATarballStreamsAnEntryLargerThanMemory() throws {
        try makeLarge(2, recorded: true)
        let tarball = fixture.root.appendingPathExtension("tar")
        addTeardownBlock { try? FileManager.default.removeItem(at: tarball) }
        // GNU tar stores the sparse file in a few KB; libarchive reads it back as 600 MB.
        let tar = try ArchiverRun.run(shell: "exec tar --sparse -C \"$1\" -cf \"$2\" manifest.json images", [fixture.root.path, tarball.path])
        XCTAssertEqual(tar.status, 0, tar.stderr)
        XCTAssertLessThan(try FileManager.default.attributesOfItem(atPath: tarball.path)[.size] as? Int ?? .max, 1 << 20)
        let run = try runLimited(["verify", tarball.path])
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertTrue(run.stdout.contains("2: sha256 mismatch"), run.stdout)
        XCTAssertTrue(run.stdout.contains("2 of 3 done items verified"), run.stdout)
    }

    /// Smaller, as gzip takes its time: 200 MB under 250 MB of address space.
    func testPackStreamsALargeFileIntoTheTarball() throws {
        try makeLarge(2, recorded: true, size: 200 << 20)
        let tarball = fixture.root.appendingPathExtension("tar.gz")
        addTeardownBlock { try? FileManager.default.removeItem(at: tarball) }
        let run = try runLimited(["pack", fixture.root.path, "--output", tarball.path], kilobytes: 250_000)
        XCTAssertEqual(run.status, 0, run.stderr)
        let reader = try TarballReader(path: tarball.path)
        var sizes: [String: Int64] = [:]
        while let entry = try reader.next(readingData: false) {
            var size: Int64 = 0
            try reader.readData { size += Int64($0.count) }
            sizes[entry.path] = size
        }
        XCTAssertEqual(sizes["images/2.png"], 200 << 20)
        XCTAssertEqual(sizes.count, 5, "\(sizes.keys.sorted())")
    }

    func testTheManifestIsReadAsAStreamAndItsErrorsSayWhere() throws {
        var seen: [RecordID] = []
        try fixture.layout.readManifest { seen.append($0.id) }
        XCTAssertEqual(seen, [1, 2, 3])
        var text = try String(contentsOf: fixture.layout.manifest, encoding: .utf8)
        text = text.replacingOccurrences(of: "\"attempts\": 1", with: "\"attempts\": 1,,")
        try text.write(to: fixture.layout.manifest, atomically: false, encoding: .utf8)
        XCTAssertThrowsError(try fixture.layout.readManifest()) { error in
            XCTAssertTrue("\(error)".contains("at byte "), "\(error)")
        }
    }
}
