import Foundation
import XCTest
@testable import ArchiverCore
@testable import ArchiverServer

/// A small bundle on disk, made the way `archiver run` makes one: PNGs under `images/`, a
/// manifest built from a catalog and outcomes, and bookkeeping under `.archiver/`.
struct BundleFixture {
    let root: URL
    var layout: BundleLayout { BundleLayout(root: root) }

    /// Creates a bundle in a fresh temporary directory: ids `1...count` in albums of 5,
    /// `failed` and `pending` ids without files, the rest done.
    static func make(
        count: Int = 20, failed: Set<Int> = [], pending: Set<Int> = [], title: (Int) -> String = { "photo \($0)" }
    ) throws -> BundleFixture {
        try make(
            ids: (1...count).map { RecordID($0) }, failed: Set(failed.map { RecordID($0) }), pending: Set(pending.map { RecordID($0) }),
            title: title)
    }

    /// Creates a bundle of the records `ids` (integers or strings) in albums of 5, each done
    /// item's PNG named as `KeyedStore` names it; `title` gets the record's position from 1.
    static func make(
        ids: [RecordID], failed: Set<RecordID> = [], pending: Set<RecordID> = [], title: (Int) -> String = { "photo \($0)" }
    ) throws -> BundleFixture {
        let root = try temporaryDirectory()
        let layout = BundleLayout(root: root)
        try FileManager.default.createDirectory(at: layout.images, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: layout.state, withIntermediateDirectories: true)
        let records = ids.enumerated().map { index, id in
            CatalogRecord(
                albumId: index / 5 + 1, id: id, title: title(index + 1),
                url: "https://via.placeholder.com/600/\(index + 1)", thumbnailUrl: "https://via.placeholder.com/150/\(index + 1)")
        }
        let catalog = try Catalog(source: "fixture.json", data: JSONEncoder().encode(records))
        var outcomes: [RecordID: ItemRecord] = [:]
        for (index, record) in records.enumerated() where !pending.contains(record.id) {
            let shade = record.id.integer ?? index + 1
            if failed.contains(record.id) {
                let error = ItemError.httpStatus(404, url: record.url)
                outcomes[record.id] = ItemRecord(
                    id: record.id, url: record.url, source: record.url, status: .failed, attempts: 1,
                    error: RecordedError(error))
                continue
            }
            let png = PNGEncoder.solid(
                width: 4 + shade % 3, height: 4, red: UInt8(shade & 0xff), green: UInt8((shade >> 8) & 0xff), blue: 7)
            try png.write(to: layout.images.appendingPathComponent(KeyedStore.fileName(for: record.id, format: .png)!))
            outcomes[record.id] = ItemRecord(
                id: record.id, url: record.url, source: record.url, status: .done, bytes: Int64(png.count),
                sha256: SHA256Digest.of(png), width: 4 + shade % 3, height: 4, attempts: 1)
        }
        let manifest = Manifest(catalog: catalog, field: .url, mirrors: MirrorMap(), outcomes: outcomes)
        try manifest.write(to: layout.manifest)
        try Data("{\"id\":1}\n".utf8).write(to: layout.journal)
        try Data("{}".utf8).write(to: layout.options)
        try Data("debris".utf8).write(to: layout.images.appendingPathComponent(".partial-3-123"))
        return BundleFixture(root: root)
    }

    func manifest() throws -> Manifest {
        try Manifest.read(from: layout.manifest)
    }

    func image(_ id: Int) -> URL {
        layout.images.appendingPathComponent("\(id).png")
    }

    /// Flips every bit of one byte in the middle of a file.
    func flipByte(of id: Int) throws {
        var data = try Data(contentsOf: image(id))
        data[data.count / 2] ^= 0xff
        try data.write(to: image(id))
    }

    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("archiver-bundle-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    func remove() {
        try? FileManager.default.removeItem(at: root)
    }
}

/// The output of one run of the built `archiver` binary.
struct ArchiverRun {
    var status: Int32
    var stdout: String
    var stderr: String

    /// Runs `archiver` (built next to the test bundle) with `arguments` and `environment` added.
    static func run(_ arguments: [String], environment: [String: String] = [:]) throws -> ArchiverRun {
        let binary = Bundle.main.bundleURL.appendingPathComponent("archiver")
        guard FileManager.default.isExecutableFile(atPath: binary.path) else {
            // A failure, not a skip: the build that runs the tests makes the binary.
            throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: binary.path])
        }
        return try run(binary, arguments, environment: environment)
    }

    /// Runs `/bin/sh -c script` with `arguments` as `$1...` (`$0` is `sh`).
    static func run(shell script: String, _ arguments: [String]) throws -> ArchiverRun {
        try run(URL(fileURLWithPath: "/bin/sh"), ["-c", script, "sh"] + arguments)
    }

    private static func run(_ binary: URL, _ arguments: [String], environment: [String: String] = [:]) throws -> ArchiverRun {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return ArchiverRun(
            status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
            stderr: String(decoding: errData, as: UTF8.self))
    }
}
