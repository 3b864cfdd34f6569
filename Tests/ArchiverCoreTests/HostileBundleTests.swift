#if canImport(Glibc)
import Glibc
#endif
import Foundation
import XCTest
@testable import ArchiverCore

/// Hostile bundles, shards and output directories (issue 25, second round): each is refused in
/// one line with a documented exit status, never followed into a hang, a loss or someone's files.
final class HostileBundleTests: XCTestCase {
    private var root: URL!
    private var server: TestServer!

    override func setUpWithError() throws {
        root = Fixtures.temporaryDirectory(self)
        server = try Fixtures.placeholderServer()
    }

    /// Runs shard `index` of `count` of a small catalog into `root/name`.
    private func shard(_ name: String, _ index: Int, of count: Int, records: Int = 12) throws -> URL {
        var config = Fixtures.configuration(out: root.appendingPathComponent(name), server: server)
        config.shard = Shard(index: index, count: count)
        _ = try Fixtures.run(config, catalog: try Fixtures.catalog(Fixtures.records(records)))
        return config.outputDirectory
    }

    /// Runs the binary with standard input from /dev/null; a run still going after `limit`
    /// seconds (a hang: every case here ends in milliseconds) is killed and fails the test.
    private func runBounded(_ arguments: [String], limit: Double = 60, file: StaticString = #filePath, line: UInt = #line) throws -> CommandResult {
        let out = Pipe(), err = Pipe()
        let ended = DispatchSemaphore(value: 0)
        let process = Process()
        process.executableURL = CommandRunner.executable
        process.arguments = arguments
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        process.terminationHandler = { _ in ended.signal() }
        try process.run()
        let collected = Locked((Data(), Data()))
        let readers = DispatchGroup()
        for (pipe, isOut) in [(out, true), (err, false)] {
            readers.enter()
            Thread {
                let data = pipe.fileHandleForReading.readDataToEndOfFile()
                collected.withLock { if isOut { $0.0 = data } else { $0.1 = data } }
                readers.leave()
            }.start()
        }
        if ended.wait(timeout: .now() + limit) == .timedOut {
            kill(process.processIdentifier, SIGKILL)
            ended.wait()
            XCTFail("archiver \(arguments.joined(separator: " ")) hung", file: file, line: line)
        }
        readers.wait()
        let (stdout, stderr) = collected.withLock { $0 }
        return CommandResult(
            status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
            stderr: String(decoding: stderr, as: UTF8.self))
    }

    func testMergeAndVerifyRefuseAManifestPathThatIsNotTheIDsOwnFileName() throws {
        let one = try shard("s1", 1, of: 2)
        let two = try shard("s2", 2, of: 2)
        let layout = BundleLayout(root: one)
        var manifest = try Manifest.read(from: layout.manifest)
        let index = try XCTUnwrap(manifest.items.firstIndex { $0.status == .done })
        let id = manifest.items[index].id
        try FileManager.default.moveItem(
            at: layout.images.appendingPathComponent("\(id).png"), to: layout.images.appendingPathComponent("zzz.png"))
        manifest.items[index].path = "images/zzz.png"
        try manifest.write(to: layout.manifest)

        let merged = root.appendingPathComponent("merged")
        let merge = try runBounded(["merge", "--out", merged.path, one.path, two.path])
        XCTAssertEqual(merge.status, 2, merge.stderr)
        XCTAssertEqual(
            merge.stderr,
            "archiver: shard 1/2 (\(one.path)) has 1 item whose path is not the id's own file name (\(id): images/zzz.png)\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: merged.path))

        let verify = try runBounded(["verify", one.path])
        XCTAssertEqual(verify.status, 1, verify.stderr + verify.stdout)
        XCTAssert(
            (verify.stdout + verify.stderr).contains("\(id): the manifest's path is not the id's own file name (images/zzz.png)"),
            verify.stdout + verify.stderr)
    }

    func testOwnPathIsTheIDsStemWithTheExtensionOfAnyImageFormat() {
        XCTAssertTrue(Manifest.isOwnPath("images/7.png", for: RecordID(7)))
        XCTAssertTrue(Manifest.isOwnPath("images/7.jpg", for: RecordID(7)))
        XCTAssertTrue(Manifest.isOwnPath("images/%41.webp", for: RecordID("A")))
        XCTAssertFalse(Manifest.isOwnPath("images/7.png.png", for: RecordID(7)))
        XCTAssertFalse(Manifest.isOwnPath("images/8.png", for: RecordID(7)))
        XCTAssertFalse(Manifest.isOwnPath("images/7.txt", for: RecordID(7)))
    }

    func testStatusRunMergeAndVerifyRefuseAFIFOInTheBundleAtOnce() throws {
        let bundle = try BundleFixture.make(count: 4)
        defer { bundle.remove() }
        let layout = bundle.layout
        unlink(layout.journal.path)
        XCTAssertEqual(mkfifo(layout.journal.path, 0o644), 0)
        let status = try runBounded(["status", bundle.root.path])
        assertOneLineError(status, mentions: [layout.journal.path, "a special file"])

        // The kept copy of `--catalog -` read back on an empty standard input.
        let kept = root.appendingPathComponent("kept")
        try FileManager.default.createDirectory(at: BundleLayout(root: kept).state, withIntermediateDirectories: true)
        XCTAssertEqual(mkfifo(BundleLayout(root: kept).standardInputCatalog.path, 0o644), 0)
        let run = try runBounded(["run", "--catalog", "-", "--out", kept.path])
        assertOneLineError(run, mentions: [BundleLayout(root: kept).standardInputCatalog.path, "not a regular file"])

        // An image that is a FIFO: verify and merge name it instead of blocking on it.
        let one = try shard("s1", 1, of: 2)
        let two = try shard("s2", 2, of: 2)
        let manifest = try Manifest.read(from: BundleLayout(root: one).manifest)
        let id = try XCTUnwrap(manifest.items.first { $0.status == .done }?.id)
        let image = BundleLayout(root: one).images.appendingPathComponent("\(id).png").path
        unlink(image)
        XCTAssertEqual(mkfifo(image, 0o644), 0)
        let verify = try runBounded(["verify", one.path])
        XCTAssertEqual(verify.status, 1, verify.stderr)
        let merge = try runBounded(["merge", "--out", root.appendingPathComponent("merged").path, one.path, two.path])
        XCTAssertEqual(merge.status, 1, merge.stderr)
        XCTAssert(merge.stderr.contains("\(id): write failed: not a regular file (images/\(id).png)"), merge.stderr)
    }

    func testRunRefusesANonEmptyDirectoryOfSomeonesOwnFilesAndTouchesNothing() throws {
        let catalog = try Fixtures.writeCatalog(Fixtures.records(3), to: root.appendingPathComponent("c.json"))
        let mine = root.appendingPathComponent("mine")
        try FileManager.default.createDirectory(at: mine, withIntermediateDirectories: true)
        let files = [
            "index.html": "<h1>my home page</h1>", "manifest.json": "{\"name\": \"my-app\", \"icons\": []}",
            "notes.txt": "do not lose",
        ]
        for (name, text) in files { try Data(text.utf8).write(to: mine.appendingPathComponent(name)) }
        func unchanged(_ names: [String]) throws {
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mine.path).sorted(), names.sorted())
            for name in names { XCTAssertEqual(try String(contentsOf: mine.appendingPathComponent(name), encoding: .utf8), files[name]) }
        }
        var run = try runBounded(["run", "--catalog", catalog, "--out", mine.path, "--mirror", "\(Fixtures.host)=\(server.baseURL)"])
        assertOneLineError(run, mentions: ["--out \(mine.path) is not a bundle", "notes.txt"])
        try unchanged(Array(files.keys))
        // Only the names a bundle has, but another tool's manifest: refused too, standard input not kept.
        try FileManager.default.removeItem(at: mine.appendingPathComponent("notes.txt"))
        run = try runBounded(["run", "--catalog", "-", "--out", mine.path])
        assertOneLineError(run, mentions: ["its manifest.json is not one the archiver wrote"])
        try unchanged(["index.html", "manifest.json"])
        XCTAssertEqual(server.total, 0)
    }

    func testStandardInputGarbageIsRefusedInItsFirstBytesNotCopiedWhole() throws {
        signal(SIGPIPE, SIG_IGN)
        let input = Pipe(), err = Pipe()
        let process = Process()
        process.executableURL = CommandRunner.executable
        process.arguments = ["run", "--catalog", "-", "--out", root.appendingPathComponent("out").path]
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        process.standardError = err
        try process.run()
        let total = 64 << 20
        let written = Self.write(input.fileHandleForWriting.fileDescriptor, Data(String(repeating: "garbage\n", count: 8192).utf8), upTo: total)
        try input.fileHandleForWriting.close()
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 2, stderr)
        XCTAssertEqual(stderr, "archiver: catalog -: row 1: the header has no \"id\" column (it has \"garbage\")\n")
        XCTAssertLessThan(written, total, "standard input was read to its end before it was refused")
        XCTAssertFalse(FileManager.default.fileExists(atPath: root.appendingPathComponent("out").path), "a refused catalog writes nothing")
    }

    func testStandardInputOverTheLimitIsRefusedWhereItPassesIt() throws {
        signal(SIGPIPE, SIG_IGN)
        let kept = root.appendingPathComponent("out/.archiver/catalog")
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&fds), 0)
        let total = 16 << 20
        let writeEnd = fds[1]
        let writer = Thread {
            var rows = "id,url\n"
            var id = 0
            var written = 0
            while written < total {
                rows += (0..<1000).map { _ in id += 1; return "\(id),https://example.com/\(id).png\n" }.joined()
                let count = Self.write(writeEnd, Data(rows.utf8), upTo: rows.utf8.count)
                written += count
                rows = ""
                if count == 0 { break }
            }
            close(writeEnd)
        }
        writer.start()
        XCTAssertThrowsError(try CatalogLoader.standardInput(kept: kept, options: CatalogOptions(), input: FileDescriptor(rawValue: fds[0]), limit: 1 << 20)) { error in
            XCTAssertEqual("\(error)", "cannot read catalog -: over 1 MiB, the most a stream (standard input, a pipe, a device) may hold")
        }
        close(fds[0])
        XCTAssertFalse(FileManager.default.fileExists(atPath: root.appendingPathComponent("out").path), "no copy, nor the directories made for it")
    }

    /// The copy of standard input is made under a name no one can guess and created, never
    /// opened: a FIFO planted at the name it had (`catalog.tmp-PID`) used to take the copy, and
    /// the run failed reading it back ("Illegal seek"; had 64 KiB gone in first, it would have
    /// blocked). A copy a dead run left is removed; the FIFO is not touched.
    func testTheCopyOfStandardInputIsNeverWrittenIntoSomethingPlantedForIt() throws {
        signal(SIGPIPE, SIG_IGN)
        let kept = root.appendingPathComponent("out/.archiver/catalog")
        let state = kept.deletingLastPathComponent().path
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        let planted = state + "/catalog.tmp-\(getpid())"
        XCTAssertEqual(mkfifo(planted, 0o600), 0)
        let leftover = state + "/catalog.tmp-\(try deadPID())-77"
        try Data("half a catalog".utf8).write(to: URL(fileURLWithPath: leftover))
        var rows = "id,url\n"
        for id in 1...5000 { rows += "\(id),https://example.com/\(id).png\n" }
        XCTAssertGreaterThan(rows.utf8.count, 1 << 17, "more than a pipe holds")
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&fds), 0)
        let writeEnd = fds[1]
        let text = Data(rows.utf8)
        let writer = Thread {
            _ = Self.write(writeEnd, text, upTo: text.count)
            close(writeEnd)
        }
        writer.start()
        // Waited for with a deadline, so that the old behaviour fails the test rather than hanging it.
        let loaded = DispatchSemaphore(value: 0)
        let result = Locked<Result<Int, CatalogError>?>(nil)
        let readEnd = fds[0]
        Thread {
            let outcome = Result { () throws(CatalogError) in
                try CatalogLoader.standardInput(kept: kept, options: CatalogOptions(), input: FileDescriptor(rawValue: readEnd)).records.count
            }
            result.withLock { $0 = outcome }
            loaded.signal()
        }.start()
        XCTAssertEqual(loaded.wait(timeout: .now() + 60), .success, "the copy blocked")
        close(fds[0])
        XCTAssertEqual(try result.withLock { $0 }?.get(), 5000)
        XCTAssertEqual(try Data(contentsOf: kept), text, "the copy kept for a later run")
        var info = stat()
        XCTAssertEqual(lstat(planted, &info), 0)
        XCTAssertEqual(info.st_mode & S_IFMT, S_IFIFO, "the planted FIFO is left as it was")
        XCTAssertEqual(info.st_size, 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: leftover), "a dead run's copy is removed")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: state).sorted(), ["catalog", "catalog.tmp-\(getpid())"])
    }

    /// Writes `chunk` to `fd` over and over until `total` bytes are in or a write fails (the
    /// reader is gone); returns how many bytes went in.
    /// A pipe or device named as the catalog's path is parsed as it is copied: an endless one
    /// stops at the limit (it used to be copied to the temporary directory until the disk was
    /// full), bad text fails at once, and a good one loads.
    /// The temporary copy of a stream is closed once whichever way the catalog fails: by the
    /// catalog that owns it (it was closed again by the caller after duplicate ids, a second
    /// close that could hit a descriptor another thread had just opened).
    func testAStreamCatalogThatFailsLeavesNoDescriptorOpen() throws {
        func openDescriptors() throws -> Int { try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count }
        let before = try openDescriptors()
        for text in [#"[{"id": 1, "url": "https://h/1"}, {"id": 1, "url": "https://h/2"}]"#, #"[{"id": 1, "url": "#] {
            var fds: [Int32] = [0, 0]
            XCTAssertEqual(pipe(&fds), 0)
            _ = Self.write(fds[1], Data(text.utf8), upTo: text.utf8.count)
            close(fds[1])
            XCTAssertThrowsError(try Catalog(source: "p", path: "/dev/fd/\(fds[0])"), text)
            close(fds[0])
        }
        XCTAssertEqual(try openDescriptors(), before)
    }

    func testAPipeOrDeviceGivenAsThePathIsParsedAsItIsCopiedUpToTheLimit() throws {
        signal(SIGPIPE, SIG_IGN)
        XCTAssertThrowsError(try Catalog(source: "/dev/zero", path: "/dev/zero")) { error in
            guard case .malformed = error as? CatalogError else { return XCTFail("\(error)") }
        }
        func pipeCatalog(limit: Int64, writing text: @escaping @Sendable (Int32) -> Void) throws -> Catalog {
            var fds: [Int32] = [0, 0]
            XCTAssertEqual(pipe(&fds), 0)
            let writeEnd = fds[1]
            let writer = Thread {
                text(writeEnd)
                close(writeEnd)
            }
            writer.start()
            defer { close(fds[0]) }
            return try Catalog(source: "p", path: "/dev/fd/\(fds[0])", streamLimit: limit)
        }
        XCTAssertThrowsError(
            try pipeCatalog(limit: 1 << 20) { fd in
                let rows = (1...1000).map { "\($0),https://example.com/\($0).png\n" }.joined()
                _ = Self.write(fd, Data(("id,url\n" + rows).utf8), upTo: rows.utf8.count + 7)
                _ = Self.write(fd, Data(String(repeating: "9,https://example.com/9.png\n", count: 4096).utf8), upTo: 64 << 20)
            }
        ) { error in
            XCTAssertEqual("\(error)", "cannot read catalog p: over 1 MiB, the most a stream (standard input, a pipe, a device) may hold")
        }
        let catalog = try pipeCatalog(limit: 1 << 20) { fd in
            let text = #"[{"id": 1, "url": "https://h/1"}, {"id": 2, "url": "https://h/2"}, {"id": 3, "url": "https://h/3"}]"#
            _ = Self.write(fd, Data(text.utf8), upTo: text.utf8.count)
        }
        XCTAssertEqual(catalog.records.map(\.url), ["https://h/1", "https://h/2", "https://h/3"])
    }

    static func write(_ fd: Int32, _ chunk: Data, upTo total: Int) -> Int {
        var written = 0
        while written < total {
            let n = chunk.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, min($0.count, total - written)) }
            if n < 0, errno == EINTR { continue }
            if n <= 0 { break }
            written += n
        }
        return written
    }

    /// The PID of a process that has ended (and been reaped).
    private func deadPID() throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/true")
        try process.run()
        process.waitUntilExit()
        return process.processIdentifier
    }

    func testMergeAndPackRemoveWhatAKilledMergeOrPackLeftButNothingElse() throws {
        let one = try shard("s1", 1, of: 2)
        let two = try shard("s2", 2, of: 2)
        let dead = try deadPID()
        let fm = FileManager.default
        // A staging directory of a killed merge, holding links out of it, and one of a live merge.
        let killed = root.appendingPathComponent(".merged.merging-\(dead)-42")
        try fm.createDirectory(at: killed.appendingPathComponent("images"), withIntermediateDirectories: true)
        let precious = root.appendingPathComponent("precious")
        try fm.createDirectory(at: precious, withIntermediateDirectories: true)
        try Data("keep".utf8).write(to: precious.appendingPathComponent("file"))
        try fm.createSymbolicLink(at: killed.appendingPathComponent("images/1.png"), withDestinationURL: precious.appendingPathComponent("file"))
        try fm.createSymbolicLink(at: killed.appendingPathComponent("dir"), withDestinationURL: precious)
        let live = root.appendingPathComponent(".merged.merging-\(getpid())-7")
        try fm.createDirectory(at: live, withIntermediateDirectories: true)
        let other = root.appendingPathComponent(".other.merging-\(dead)-42")
        try fm.createDirectory(at: other, withIntermediateDirectories: true)
        let merge = try runBounded(["merge", "--out", root.appendingPathComponent("merged").path, one.path, two.path])
        XCTAssertEqual(merge.status, 0, merge.stderr)
        XCTAssertFalse(fm.fileExists(atPath: killed.path))
        XCTAssertTrue(fm.fileExists(atPath: live.path))
        XCTAssertTrue(fm.fileExists(atPath: other.path), "another output's staging is not this merge's")
        XCTAssertEqual(try String(contentsOf: precious.appendingPathComponent("file"), encoding: .utf8), "keep")

        let tarball = root.appendingPathComponent("s1.tar.gz")
        let partials = [".s1.tar.gz.partial-\(dead)-9", ".s1.tar.gz.partial-12345"].map { root.appendingPathComponent($0) }
        for partial in partials { try Data("half".utf8).write(to: partial) }
        let livePartial = root.appendingPathComponent(".s1.tar.gz.partial-\(getpid())-3")
        try Data("half".utf8).write(to: livePartial)
        let pack = try runBounded(["pack", one.path, "--output", tarball.path])
        XCTAssertEqual(pack.status, 0, pack.stderr)
        for partial in partials { XCTAssertFalse(fm.fileExists(atPath: partial.path), partial.lastPathComponent) }
        XCTAssertTrue(fm.fileExists(atPath: livePartial.path))
    }

    func testMergeOntoAFullDiskSaysOnceThatTheDestinationIsFull() throws {
        let one = try shard("s1", 1, of: 2, records: 60)
        let two = try shard("s2", 2, of: 2, records: 60)
        let mount = root.appendingPathComponent("small")
        try FileManager.default.createDirectory(at: mount, withIntermediateDirectories: true)
        // A 64 KiB tmpfs in a mount namespace of its own (gone with the process): 60 images need
        // a page each. Needs root (or CAP_SYS_ADMIN); skipped elsewhere.
        let script = """
            unshare -m sh -c 'mount -t tmpfs -o size=64k tmpfs "$1" || exit 97; exec "$2" merge --out "$1/merged" "$3" "$4"' sh "$@"
            """
        let merge = try ArchiverRun.run(shell: script, [mount.path, CommandRunner.executable.path, one.path, two.path])
        if merge.status == 97 || merge.stderr.contains("unshare:") { throw XCTSkip("cannot mount a small tmpfs here: \(merge.stderr)") }
        XCTAssertEqual(merge.status, 2, merge.stderr)
        XCTAssertEqual(
            merge.stderr,
            "archiver: cannot write the merged bundle \(mount.path)/merged: No space left on device; nothing written: free some space there and merge again\n")
    }

    func testAManifestItemOverTheCapIsRefusedByMergeVerifyAndPack() throws {
        let one = try shard("s1", 1, of: 2)
        let two = try shard("s2", 2, of: 2)
        let layout = BundleLayout(root: one)
        var manifest = try Manifest.read(from: layout.manifest)
        // 8 MiB and one byte: the cap (64 MiB before, which let four 60 MiB titles cost 535 MiB).
        manifest.items[0].title = String(repeating: "x", count: (8 << 20) + 1)
        try manifest.write(to: layout.manifest)
        let tarball = root.appendingPathComponent("s1.tar.gz")
        let writer = try TarballWriter(path: tarball.path, modificationTime: 0)
        try writer.addFile("manifest.json", data: Data(contentsOf: layout.manifest))
        try writer.close()
        for arguments in [
            ["merge", "--out", root.appendingPathComponent("merged").path, one.path, two.path],
            ["merge", "--out", root.appendingPathComponent("merged").path, tarball.path, two.path],
            ["verify", one.path], ["verify", tarball.path], ["pack", one.path, "--output", root.appendingPathComponent("p.tar.gz").path],
        ] {
            let result = try runBounded(arguments)
            assertOneLineError(result, mentions: ["not a valid manifest.json: a value over 8388608 bytes"])
        }
    }

    /// A bundle of 1200 done items, made a shard 1/1, packed by hand into `name` with none of
    /// its images but with 1500 entries under `images/` that are no file merge or verify takes:
    /// 1490 in a subdirectory (20 of them with 64 KiB names, as libarchive reads names of 512 KiB
    /// and more) and 10 with names no file system holds (4 KiB).
    private func tarballOfStrays(_ name: String) throws -> URL {
        let fixture = try BundleFixture.make(count: 1200)
        defer { fixture.remove() }
        var manifest = try fixture.manifest()
        manifest.catalog.shard = Manifest.ShardInfo(shard: try XCTUnwrap(Shard(index: 1, count: 1)), records: 1200)
        let manifestFile = root.appendingPathComponent(name + ".manifest.json")
        try manifest.write(to: manifestFile)
        let tarball = root.appendingPathComponent(name)
        let writer = try TarballWriter(path: tarball.path, modificationTime: 0)
        for index in 0..<1500 {
            let entry = switch index {
            case ..<10: "images/\(index)" + String(repeating: "b", count: 4 << 10)
            case ..<30: "images/d/\(index)" + String(repeating: "a", count: 64 << 10)
            default: "images/d/\(index)"
            }
            try writer.addFile(entry, data: Data())
        }
        try writer.addFile("manifest.json", data: Data(contentsOf: manifestFile))
        try writer.close()
        return tarball
    }

    func testMergeOfATarballOfStraysAndBadItemsNamesAFewOfEachClippedAndCountsThemAll() throws {
        let tarball = try tarballOfStrays("s.tar.gz")
        let result = try runBounded(["merge", "--quiet", "--out", root.appendingPathComponent("merged").path, tarball.path])
        XCTAssertEqual(result.status, 1, String(result.stderr.prefix(2000)))
        let lines = result.stderr.split(separator: "\n").map(String.init)
        // Five of each kind, one line counting the rest, and the verdict (there were 2700 lines).
        XCTAssertEqual(lines.count, 12, String(result.stderr.prefix(2000)))
        for line in lines {
            // About 1 KiB of path, and the shard's name and the words around it.
            XCTAssertLessThanOrEqual(line.utf8.count, 1024 + 200, String(line.prefix(200)))
        }
        XCTAssertEqual(lines.filter { $0.contains(": unexpected file images/") }.count, 5)
        XCTAssertEqual(lines.filter { $0.contains(": missing (images/") }.count, 5)
        XCTAssertEqual(lines.filter { $0.hasSuffix("…") }.count, 5, "the 4 KiB names, clipped")
        XCTAssert(lines.contains(
            "archiver: shard 1/1 (\(tarball.path)): and 1195 more bad items and 1495 more unexpected files, not named here; "
                + "'archiver verify' of this shard names up to 1000 of each"), String(result.stderr.prefix(2000)))
        XCTAssertEqual(
            lines.last,
            "archiver: merge refused: 1200 bad items and 1500 unexpected files in the shards above; nothing written. Rerun or repack the damaged shard")
        XCTAssertFalse(FileManager.default.fileExists(atPath: root.appendingPathComponent("merged").path))
    }

    func testVerifyOfATarballOfStraysAndBadItemsNamesAThousandOfEachClippedAndCountsThemAll() throws {
        let tarball = try tarballOfStrays("s.tar.gz")
        let report = try BundleVerifier().verify(tarball)
        XCTAssertEqual(report.done, 1200)
        XCTAssertEqual(report.badItems, 1200)
        XCTAssertEqual(report.unexpectedFiles, 1500)
        XCTAssertEqual(report.problems.filter { $0.kind == .missing }.count, VerificationReport.maxNamed)
        XCTAssertEqual(report.problems.filter { $0.kind == .unexpected }.count, VerificationReport.maxNamed)
        XCTAssertEqual(report.problems.count, 2 * VerificationReport.maxNamed)
        for problem in report.problems {
            XCTAssertLessThanOrEqual(problem.path.utf8.count, 1024, String(problem.path.prefix(100)))
            XCTAssertLessThanOrEqual(problem.message.utf8.count, 1024 + 100, String(problem.message.prefix(100)))
        }
        XCTAssertEqual(report.problems.filter { $0.path.hasSuffix("…") }.count, 30, "the 4 KiB and 64 KiB names, clipped")
        XCTAssert(report.summary.hasPrefix("BAD: 0 of 1200 done items verified in \(tarball.path); 1200 bad, 1500 unexpected files"), report.summary)
    }

    func testVerifyOfADirectoryOfUnlistedFilesAndBadItemsNamesAThousandOfEachAndCountsThemAll() throws {
        let fixture = try BundleFixture.make(count: 1200)
        defer { fixture.remove() }
        let images = fixture.layout.images
        for id in 1...1200 { try FileManager.default.removeItem(at: fixture.image(id)) }
        for index in 0..<1500 {
            XCTAssert(FileManager.default.createFile(atPath: images.appendingPathComponent("x\(index).png").path, contents: nil))
        }
        let report = try BundleVerifier().verify(fixture.root)
        XCTAssertEqual(report.badItems, 1200)
        XCTAssertEqual(report.unexpectedFiles, 1500)
        let unexpected = report.problems.filter { $0.kind == .unexpected }.map(\.path)
        XCTAssertEqual(report.problems.filter { $0.kind == .missing }.count, VerificationReport.maxNamed)
        XCTAssertEqual(unexpected.count, VerificationReport.maxNamed)
        let all = (0..<1500).map { "images/x\($0).png" }.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        XCTAssertEqual(unexpected, Array(all.prefix(VerificationReport.maxNamed)), "the first by bytes")

        let text = try runBounded(["verify", fixture.root.path])
        XCTAssertEqual(text.status, 1, text.stderr)
        let lines = text.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 2 * VerificationReport.maxNamed + 3)
        XCTAssertEqual(Array(lines.suffix(3)), [
            "and 200 more bad items, not named: verify names the first 1000 of each kind",
            "and 500 more unexpected files, not named: verify names the first 1000 of each kind",
            "BAD: 0 of 1200 done items verified in \(fixture.root.path); 1200 bad, 1500 unexpected files (0 failed, 0 pending in the manifest)",
        ])
        let json = try runBounded(["verify", fixture.root.path, "--json"])
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        XCTAssertEqual((object["problems"] as? [Any])?.count, 2 * VerificationReport.maxNamed)
        XCTAssertEqual(object["badItems"] as? Int, 1200)
        XCTAssertEqual(object["unexpectedFiles"] as? Int, 1500)
        XCTAssertEqual(object["ok"] as? Bool, false)
    }
}

/// Catalog text that would lose or merge records silently.
final class HostileCatalogTests: XCTestCase {
    private func scan(_ text: [UInt8], _ options: CatalogOptions = CatalogOptions()) -> String? {
        do {
            _ = try Catalog(source: "c", data: Data(text), options: options)
            return nil
        } catch {
            return "\(error)"
        }
    }

    func testIDsThatAreNotUTF8AreRefusedNamingLineAndColumn() {
        // "a\xFF" and "a\xFE" both decode to "a\u{FFFD}": two records, not one duplicate.
        let csv = Array("id,url\nok,https://x/1\n".utf8) + [0x61, 0xFF] + Array(",https://x/2\n".utf8) + [0x61, 0xFE] + Array(",https://x/3\n".utf8)
        XCTAssertEqual(scan(csv), "catalog c: row 3, line 3, column 2: \"id\" is not valid UTF-8 (ids are compared as bytes; fix the catalog's encoding)")
        let jsonl = Array("{\"id\": \"ok\", \"url\": \"https://x/1\"}\n{\"url\": \"https://x/2\", \"id\": \"".utf8) + [0x61, 0xC3] + Array("\"}\n".utf8)
        XCTAssertEqual(scan(jsonl), "catalog c: line 2, column 32: record 2: \"id\" is not valid UTF-8 (ids are compared as bytes; fix the catalog's encoding)")
        let json = Array("[{\"id\": \"".utf8) + [0xE2, 0x82] + Array("x\", \"url\": \"https://x/1\"}]".utf8)
        XCTAssertNotNil(scan(json)?.range(of: "line 1, column 10: record 1: \"id\" is not valid UTF-8"), scan(json) ?? "accepted")
        // Valid UTF-8 beyond ASCII, and U+FFFD itself, are ids like any other.
        XCTAssertNil(scan(Array("id,url\n\u{E9}\u{FFFD},https://x/1\n".utf8)))
    }

    func testCSVAndTSVWithCROnlyLineEndsAreRefusedNotReadAsNoRecords() {
        XCTAssertEqual(
            scan(Array("id,url\r1,https://x/1\r2,https://x/2\r".utf8)),
            "catalog c: line 1, column 7: the header ends in a lone CR: rows must end in LF or CRLF (convert CR-only line ends, e.g. tr '\\r' '\\n')")
        XCTAssertNotNil(scan(Array("id\turl\r1\thttps://x/1\r".utf8))?.range(of: "lone CR"))
        XCTAssertNil(scan(Array("id,url\r\n1,https://x/1\r\n".utf8)))
    }

    func testADuplicateKeyOrColumnTheRunReadsIsRefusedInEveryFormatNamingIt() {
        XCTAssertEqual(
            scan(Array("id,url,title,id\n1,https://x/1,a,2\n".utf8)), "catalog c: row 1: the header has the column \"id\" twice")
        XCTAssertEqual(
            scan(Array("id\turl\turl\n1\thttps://x/1\thttps://x/2\n".utf8)), "catalog c: row 1: the header has the column \"url\" twice")
        XCTAssertEqual(
            scan(Array("[{\"id\": 1, \"url\": \"https://x/1\", \"id\": 2}]".utf8)),
            "catalog c: line 1, column 34: record 1: the record has the key \"id\" twice")
        XCTAssertNotNil(
            scan(Array("{\"id\": 1, \"title\": \"a\", \"url\": \"https://x/1\", \"title\": \"b\"}\n".utf8))?
                .range(of: "record 1: the record has the key \"title\" twice"))
        // Keys the run does not read may repeat, in a header as in a record.
        XCTAssertNil(scan(Array("id,url,note,note\n1,https://x/1,a,b\n".utf8)))
        XCTAssertNil(scan(Array("[{\"id\": 1, \"url\": \"https://x/1\", \"note\": 1, \"note\": 2}]".utf8)))
    }
}
