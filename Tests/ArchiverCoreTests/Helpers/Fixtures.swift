#if canImport(Glibc)
import Glibc
#endif
import Foundation
import XCTest
@testable import ArchiverCore
@testable import ArchiverServer

/// Shared building blocks for pipeline tests: temp directories, catalogs, the placeholder image
/// server, one long-lived fetcher per set of limits.
enum Fixtures {
    /// The catalog's dead image host; tests mirror it to a loopback server.
    static let host = "https://via.placeholder.com"

    /// A fresh directory, removed when the test ends.
    static func temporaryDirectory(_ test: XCTestCase) -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("archiver-tests-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        test.addTeardownBlock { try? FileManager.default.removeItem(at: url) }
        return url
    }

    /// A fresh directory on tmpfs (`/dev/shm`), removed when the test ends: only there can a
    /// sparse file claim up to 2^63 - 1 bytes (ext4, under `/tmp`, stops at 16 TiB). Skips the
    /// test where there is no such directory.
    static func memoryDirectory(_ test: XCTestCase) throws -> URL {
        let url = URL(fileURLWithPath: "/dev/shm/archiver-tests-\(UUID().uuidString)")
        do {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
        } catch {
            throw XCTSkip("no tmpfs at /dev/shm for a sparse file: \(error)")
        }
        test.addTeardownBlock { try? FileManager.default.removeItem(at: url) }
        return url
    }

    /// Makes `url` a sparse file that claims `size` bytes (none are written); skips the test
    /// when the file system refuses the size.
    static func sparseFile(_ url: URL, size: Int64) throws {
        let fd = open(url.path, O_WRONLY | O_CREAT | O_EXCL, 0o644)
        guard fd >= 0 else { throw XCTSkip("cannot create \(url.path): errno \(errno)") }
        defer { close(fd) }
        guard ftruncate(fd, off_t(size)) == 0 else { throw XCTSkip("cannot make \(url.path) \(size) bytes: errno \(errno)") }
    }

    /// The placeholder images the built-in server answers with.
    static let images = PlaceholderImages { size, red, green, blue in
        PNGEncoder.solid(width: size, height: size, red: red, green: green, blue: blue)
    }

    /// A loopback server answering `/<size>/<colour>` like via.placeholder.com.
    static func placeholderServer() throws -> TestServer {
        try TestServer(defaultHandler: images.respond(to:))
    }

    /// The exact bytes served for a path.
    static func served(_ path: String) -> Data {
        guard case .data(let data) = images.respond(to: HTTPRequest(method: "GET", path: path)).body else {
            fatalError("no image for \(path)")
        }
        return data
    }

    /// A catalog record whose image lives at `/600/<colour>` (thumbnail at `/150/<colour>`).
    static func record(_ id: Int, colour: String, album: Int = 1) -> CatalogRecord {
        CatalogRecord(
            albumId: album, id: RecordID(id), title: "photo \(id) <&>", url: "\(host)/600/\(colour)",
            thumbnailUrl: "\(host)/150/\(colour)")
    }

    /// Integer ids, as a manifest or journal lists them.
    static func ids(_ range: ClosedRange<Int>) -> [RecordID] {
        range.map { RecordID($0) }
    }

    /// `count` records with distinct colours, starting at id 1.
    static func records(_ count: Int, firstID: Int = 1) -> [CatalogRecord] {
        (0..<count).map { index in
            let id = firstID + index
            return record(id, colour: String(format: "%06x", id * 2_654_435 % 0xFFFFFF), album: 1 + index / 50)
        }
    }

    /// Writes records as a catalog file and returns its path.
    @discardableResult
    static func writeCatalog(_ records: [CatalogRecord], to url: URL) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        try encoder.encode(records).write(to: url)
        return url.path
    }

    /// The records as a parsed catalog; the same records always give the same bytes (and sha256).
    static func catalog(_ records: [CatalogRecord], source: String = "test.json") throws -> Catalog {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try Catalog(source: source, data: encoder.encode(records))
    }

    /// A run configuration writing into `out` and mirroring the catalog host to `server`.
    static func configuration(out: URL, server: TestServer, concurrency: Int = 4) -> RunConfiguration {
        var config = RunConfiguration()
        config.outputDirectory = out
        config.concurrency = concurrency
        config.catalogSource = "test.json"
        config.mirrors = MirrorMap([(from: host, to: server.baseURL)])
        config.retries = 1
        config.timeout = 5
        return config
    }

    private static let fetchers = Locked<[String: CurlFetcher]>([:])

    /// One fetcher per set of limits for the whole test process, as the command has one.
    static func fetcher(for config: RunConfiguration) -> any Fetching {
        let limits = FetchLimits(config)
        let key = "\(limits.concurrency)-\(limits.timeout)-\(limits.maxBytes)-\(limits.maxRedirects)-\(limits.perHost ?? 0)"
        return fetchers.withLock { cache in
            if let fetcher = cache[key] { return fetcher }
            let fetcher = CurlFetcher(limits: limits)
            cache[key] = fetcher
            return fetcher
        }
    }

    /// Runs the archiver in-process with a pinned backoff (no jitter, short waits).
    static func run(_ config: RunConfiguration, catalog: Catalog) throws -> RunSummary {
        let archiver = Archiver(
            configuration: config, fetcher: fetcher(for: config), backoff: Backoff(base: 0.01, cap: 0.05, jitter: { 1 }))
        return try archiver.run(catalog: catalog)
    }

    static func manifest(in out: URL) throws -> Manifest {
        try Manifest.read(from: BundleLayout(root: out).manifest)
    }

    /// Names in a directory, sorted; none if it is missing.
    static func fileNames(in directory: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()
    }

    /// Names in `images/`, sorted.
    static func imageNames(in out: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: BundleLayout(root: out).images.path)) ?? []).sorted()
    }
}

extension JournalIndex {
    /// Every id with a journal line, in `forEachLatest`'s order (integers in increasing order).
    var ids: [RecordID] {
        var ids: [RecordID] = []
        forEachLatest { id, _, _ in ids.append(id) }
        return ids
    }
}
