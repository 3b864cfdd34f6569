#if canImport(Glibc)
import Glibc
#endif
import Foundation
import XCTest
@testable import ArchiverCore

/// Whatever already sits in a bundle directory (or beside `--out`) is walked one name at a time,
/// never listed whole: 200,000 files of 200-byte names made each `contentsOfDirectory` array of
/// them cost 51 to 64 MiB of peak memory, so a directory someone filled with millions took `run`, `pack` and `merge`
/// to gigabytes.
///
/// Each command runs twice from `/usr/bin/time`, once with 3 stray files in the place and once
/// with 200,000, and its peak resident memory must not grow by more than 16 MiB between the two.
final class DirectoryListingMemoryTests: XCTestCase {
    /// Files in the big directory of strays, and the bytes of each one's name.
    private static let strayCount = 200_000
    private static let nameBytes = 200
    /// What the peak may grow by between the few strays and the many.
    private static let allowedGrowthKiB = 16 << 10

    /// Where the strays are made, and the bundles they are moved into (by rename, so on the same
    /// file system): tmpfs when there is one (200,000 files in about 2 s).
    private static let base: URL = {
        let shm = URL(fileURLWithPath: "/dev/shm")
        let parent = BundleLayout.fileKind(atPath: shm.path) == .directory ? shm : FileManager.default.temporaryDirectory
        return parent.appendingPathComponent("archiver-listing-\(UUID().uuidString)")
    }()

    /// The directory of 200,000 strays, made once for the class (nil until then).
    private nonisolated(unsafe) static var many: URL?

    override class func tearDown() {
        try? FileManager.default.removeItem(at: base)
        super.tearDown()
    }

    /// The name of stray `index`: 200 bytes that no pattern of the archiver's matches (no dot,
    /// no image extension, not a page), sorted by index.
    private static func strayName(_ index: Int) -> String {
        let number = String(index)
        return String(repeating: "0", count: 6 - number.count) + number + String(repeating: "s", count: nameBytes - 6)
    }

    /// A new directory of `count` strays named `label`.
    private static func makeStrays(_ label: String, count: Int) throws -> URL {
        let directory = base.appendingPathComponent(label)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for index in 0..<count {
            let fd = open(directory.path + "/" + strayName(index), O_WRONLY | O_CREAT | O_EXCL, 0o644)
            guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            close(fd)
        }
        return directory
    }

    /// The directory of 200,000 strays, made on first use.
    private func manyStrays() throws -> URL {
        if let many = Self.many { return many }
        let many = try Self.makeStrays("many", count: Self.strayCount)
        Self.many = many
        return many
    }

    private var dir: URL!
    private var out: URL!
    private var layout: BundleLayout { BundleLayout(root: out) }
    private var server: TestServer!
    private var catalog: String!

    override func setUpWithError() throws {
        if Sanitizers.active { throw XCTSkip("a sanitized binary's peak memory says nothing about the code") }
        dir = Self.base.appendingPathComponent("test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        addTeardownBlock { [dir] in try? FileManager.default.removeItem(at: dir!) }
        out = dir.appendingPathComponent("out")
        server = try Fixtures.placeholderServer()
        catalog = try Fixtures.writeCatalog(Fixtures.records(2), to: dir.appendingPathComponent("c.json"))
    }

    private func runArguments(_ extra: [String] = []) -> [String] {
        ["run", "--catalog", catalog, "--out", out.path, "--quiet", "--mirror", "\(Fixtures.host)=\(server.baseURL)"] + extra
    }

    /// Puts the strays of `strays` into `place` beside what is there (made if missing), runs
    /// `body`, and moves the place's own entries back: the strays are moved, not made again.
    private func withStrays<R>(_ strays: URL, in place: URL, _ body: () throws -> R) throws -> R {
        let fileManager = FileManager.default
        let aside = place.deletingLastPathComponent().appendingPathComponent("aside-" + place.lastPathComponent)
        let own = fileManager.fileExists(atPath: place.path) ? try fileManager.contentsOfDirectory(atPath: place.path) : nil
        if own != nil { try fileManager.moveItem(at: place, to: aside) }
        try fileManager.moveItem(at: strays, to: place)
        for name in own ?? [] { try fileManager.moveItem(at: aside.appendingPathComponent(name), to: place.appendingPathComponent(name)) }
        defer {
            for name in own ?? [] {
                try? fileManager.moveItem(at: place.appendingPathComponent(name), to: aside.appendingPathComponent(name))
            }
            try? fileManager.moveItem(at: place, to: strays)
            if own != nil { try? fileManager.moveItem(at: aside, to: place) }
        }
        return try body()
    }

    /// Runs `arguments` with 3 strays in `place`, then with 200,000, and holds the growth of the
    /// peak to the bound. Returns both runs, the few strays' first.
    @discardableResult
    private func assertFlat(
        _ arguments: [String], strays place: URL, file: StaticString = #filePath, line: UInt = #line
    ) throws -> (few: CommandResult, many: CommandResult) {
        let few = try Self.makeStrays("few-\(UUID().uuidString)", count: 3)
        let (fewRun, fewPeak) = try withStrays(few, in: place) { try CommandRunner.runMeasuringPeakMemory(arguments) }
        let (manyRun, manyPeak) = try withStrays(try manyStrays(), in: place) { try CommandRunner.runMeasuringPeakMemory(arguments) }
        XCTAssertEqual(manyRun.status, fewRun.status, manyRun.stderr, file: file, line: line)
        XCTAssertLessThan(
            manyPeak - fewPeak, Self.allowedGrowthKiB,
            "\(arguments[0]) with \(Self.strayCount) files in \(place.lastPathComponent): peak \(manyPeak >> 10) MiB, \(fewPeak >> 10) MiB with 3",
            file: file, line: line)
        return (fewRun, manyRun)
    }

    func testStrayFilesInEveryBundleDirectoryLeaveARerunsPeakMemoryFlat() throws {
        XCTAssertEqual(try CommandRunner.run(runArguments()).status, 0)
        for (place, extra) in [(layout.images, ["--prune"]), (layout.pages, []), (layout.state, []), (layout.root, [])] {
            let (few, many) = try assertFlat(runArguments(extra), strays: place)
            XCTAssertEqual([few.status, many.status], [0, 0], "\(place.lastPathComponent): \(many.stderr)")
        }
        XCTAssertEqual(Fixtures.imageNames(in: out), ["1.png", "2.png"], "the bundle is whole again")
    }

    func testADirectoryOfManyFilesIsRefusedAsNotABundleInFlatMemory() throws {
        let (few, many) = try assertFlat(runArguments(), strays: out)
        let shown = (0..<3).map(Self.strayName).joined(separator: ", ")
        XCTAssertTrue(few.stderr.contains("it holds files of its own (\(shown))"), few.stderr)
        XCTAssertTrue(many.stderr.contains("it holds files of its own (\(shown), ...)"), many.stderr)
    }

    func testMergeRefusingAndPackBesideADirectoryOfManyFilesStayInFlatMemory() throws {
        XCTAssertEqual(try CommandRunner.run(runArguments()).status, 0)
        let taken = dir.appendingPathComponent("taken")
        let (_, merge) = try assertFlat(["merge", "--out", taken.path, out.path], strays: taken)
        XCTAssertTrue(merge.stderr.contains("--out \(taken.path) already exists"), merge.stderr)

        let beside = dir.appendingPathComponent("tarballs")
        let tarball = beside.appendingPathComponent("b.tar.gz")
        let (few, many) = try assertFlat(["pack", out.path, "--output", tarball.path], strays: beside)
        XCTAssertEqual([few.status, many.status], [0, 0], many.stderr)
        try FileManager.default.removeItem(at: try manyStrays().appendingPathComponent(tarball.lastPathComponent))
    }
}
