#if canImport(Glibc)
import Glibc
#endif
import CSystem
import Foundation

/// A parsed catalog: its records in file order, plus where it came from.
public struct Catalog: Sendable {
    /// The source as the user gave it (path or URL).
    var source: String
    /// SHA-256 of the catalog bytes.
    var sha256: String
    let records: CatalogRecords
    /// Set on a shard's view of a catalog (`shard(_:field:)`): which shard, of how many records.
    var sharding: Sharding?

    /// Parses catalog bytes, refusing malformed text, bad records and duplicate ids.
    init(source: String, data: Data, options: CatalogOptions = CatalogOptions()) throws(CatalogError) {
        let scanned: CatalogScanner.Result
        do {
            scanned = try CatalogScanner.scan(data, options: options)
        } catch {
            throw error.catalogError(source: source)
        }
        try self.init(source: source, storage: CatalogStorage(.bytes(data), layout: scanned.layout), scanned: scanned)
    }

    /// Reads the catalog file at `path` a window at a time; it stays open, and records are read
    /// back from it when needed, so the file must not be edited in place during a run. What is
    /// not a regular file (a pipe, `/dev/stdin`, a device) is parsed as it is copied to an
    /// unnamed temporary file, under `streamLimit` bytes: bad text fails at once, and an endless
    /// stream (`/dev/zero`) stops there instead of filling the disk.
    init(
        source: String, path: String, options: CatalogOptions = CatalogOptions(),
        streamLimit: Int64 = CatalogLoader.maxStandardInputBytes
    ) throws(CatalogError) {
        let descriptor: FileDescriptor
        let info: stat
        do throws(Errno) {
            descriptor = try FileDescriptor.open(path, O_RDONLY)
            do { info = try descriptor.status() } catch { descriptor.close(); throw error }
        } catch {
            throw .unreadable(source: source, reason: error.rawValue == ENOENT ? "no such file" : error.description)
        }
        if (info.st_mode & S_IFMT) == S_IFDIR {
            descriptor.close()
            throw .unreadable(source: source, reason: "it is a directory")
        }
        if (info.st_mode & S_IFMT) != S_IFREG {
            defer { descriptor.close() }
            let spool: FileDescriptor
            do {
                spool = try Self.temporaryFile()
            } catch {
                throw .unreadable(source: source, reason: "cannot copy it to a temporary file: \(error)")
            }
            try self.init(source: source, streaming: descriptor, spool: spool, copied: 0, limit: streamLimit, options: options)
            return
        }
        var scanner = CatalogScanner(options: options) { [descriptor] (into, offset) throws(Errno) in
            try descriptor.read(into: into, at: Int64(offset))
        }
        let scanned: CatalogScanner.Result
        do {
            scanned = try scanner.scan()
        } catch {
            descriptor.close()
            throw error.catalogError(source: source)
        }
        let storage = CatalogStorage(
            .file(descriptor: descriptor, size: Int64(info.st_size), modified: info.st_mtim), layout: scanned.layout)
        try self.init(source: source, storage: storage, scanned: scanned)
    }

    /// Parses the stream `input` (standard input) in the same pass that copies it to `spool`, a
    /// regular file open for reading and writing, from which records are read back. Bad text is
    /// refused as soon as the scan meets it (a CSV header without the id column within the first
    /// 256 KiB), and a stream over `limit` bytes is refused there, so neither fills the disk.
    /// The first `copied` bytes are already in `spool`, which the catalog owns from here on:
    /// closed when the catalog goes, or here if it cannot be made.
    init(
        source: String, streaming input: FileDescriptor, spool: FileDescriptor, copied: Int64, limit: Int64,
        options: CatalogOptions = CatalogOptions()
    ) throws(CatalogError) {
        var overLimit = false
        var spooled = copied
        var scanner = CatalogScanner(options: options) { (into, offset) throws(Errno) in
            // The scan reads forward, so `offset` is where the copy ends: read on from the stream.
            if Int64(offset) < spooled { return try spool.read(into: into, at: Int64(offset)) }
            guard spooled <= limit else {
                overLimit = true
                throw Errno(rawValue: EFBIG)
            }
            let n = try input.read(into: UnsafeMutableRawBufferPointer(rebasing: into[..<min(into.count, Int(limit + 1 - spooled))]))
            guard n > 0 else { return n }
            try spool.write(all: UnsafeRawBufferPointer(rebasing: into[..<n]))
            spooled += Int64(n)
            return n
        }
        let scanned: CatalogScanner.Result
        do {
            scanned = try scanner.scan()
        } catch {
            spool.close()
            if overLimit { throw .unreadable(source: source, reason: "over \(limit >> 20) MiB, the most a stream (standard input, a pipe, a device) may hold") }
            throw error.catalogError(source: source)
        }
        let info = (try? spool.status()) ?? stat()
        let storage = CatalogStorage(
            .file(descriptor: spool, size: Int64(info.st_size), modified: info.st_mtim), layout: scanned.layout)
        try self.init(source: source, storage: storage, scanned: scanned)
    }

    private init(source: String, storage: CatalogStorage, scanned: CatalogScanner.Result) throws(CatalogError) {
        self.source = source
        sha256 = scanned.sha256
        records = CatalogRecords(storage: storage, entries: scanned.entries, arena: scanned.arena, end: scanned.end)
        let duplicates = records.duplicateIDs(keeping: 5)
        if duplicates.count > 0 {
            throw .duplicateIDs(source: source, ids: duplicates.ids, count: duplicates.count)
        }
    }

    /// An unnamed temporary file open for reading and writing, in `$TMPDIR` (or /tmp).
    static func temporaryFile() throws(Errno) -> FileDescriptor {
        let directory = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        return try FileDescriptor.open(directory, csystem_o_tmpfile | O_RDWR, mode: 0o600)
    }

    /// Whether the catalog file changed since it was loaded (its records may no longer read back).
    var changedSinceLoad: Bool {
        records.storage.changed
    }
}

/// Why a catalog could not be used; every case ends the run with exit status 2.
public enum CatalogError: Error, Sendable, Equatable, CustomStringConvertible {
    case unreadable(source: String, reason: String)
    case malformed(source: String, detail: String)
    /// `count` ids occur more than once; `ids` are the first few.
    case duplicateIDs(source: String, ids: [RecordID], count: Int)
    /// The file was edited in place while a run was reading records back from it.
    case changedDuringRun(source: String)
    /// The catalog has more records than `limit`, the most a run can number.
    case tooManyRecords(source: String, limit: Int)

    public var description: String {
        switch self {
        case .unreadable(let source, let reason):
            "cannot read catalog \(source): \(reason)"
        case .malformed(let source, let detail):
            "catalog \(source): \(detail)"
        case .duplicateIDs(let source, let ids, let count):
            "catalog \(source) has duplicate ids: "
                + ids.map(\.description).joined(separator: ", ")
                + (count > ids.count ? " and \(count - ids.count) more" : "")
        case .changedDuringRun(let source):
            "catalog \(source) changed during the run, which reads records back from it; "
                + "no manifest was written. Replace the file only between runs, then run again to resume"
        case .tooManyRecords(let source, let limit):
            "catalog \(source) has more than \(limit) records, the most one run can hold; "
                + "split it into catalogs of fewer records, each archived into its own bundle"
        }
    }
}
