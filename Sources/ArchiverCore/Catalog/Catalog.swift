#if canImport(Glibc)
import Glibc
#endif
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
            throw .malformed(source: source, detail: error.detail)
        }
        try self.init(source: source, storage: CatalogStorage(.bytes(data), layout: scanned.layout), scanned: scanned)
    }

    /// Reads the catalog file at `path` a window at a time; it stays open, and records are read
    /// back from it when needed, so the file must not be edited in place during a run. What is
    /// not a regular file (a pipe, `/dev/stdin`) is first copied to an unnamed temporary file.
    init(source: String, path: String, options: CatalogOptions = CatalogOptions()) throws(CatalogError) {
        var descriptor = open(path, O_RDONLY | O_CLOEXEC)
        var info = stat()
        guard descriptor >= 0, fstat(descriptor, &info) == 0 else {
            let reason = errno == ENOENT ? "no such file" : errnoText()
            if descriptor >= 0 { close(descriptor) }
            throw .unreadable(source: source, reason: reason)
        }
        if (info.st_mode & S_IFMT) == S_IFDIR {
            close(descriptor)
            throw .unreadable(source: source, reason: "it is a directory")
        }
        if (info.st_mode & S_IFMT) != S_IFREG {
            let copy = Self.spool(descriptor)
            close(descriptor)
            guard let copy else { throw .unreadable(source: source, reason: "cannot copy it to a temporary file: \(errnoText())") }
            descriptor = copy
            fstat(descriptor, &info)
        }
        var scanner = CatalogScanner(options: options) { into, offset in
            while true {
                let n = pread(descriptor, into.baseAddress, into.count, off_t(offset))
                if n < 0, errno == EINTR { continue }
                return n
            }
        }
        let scanned: CatalogScanner.Result
        do {
            scanned = try scanner.scan()
        } catch {
            close(descriptor)
            throw error.unreadable
                ? .unreadable(source: source, reason: error.detail) : .malformed(source: source, detail: error.detail)
        }
        let storage = CatalogStorage(
            .file(descriptor: descriptor, size: Int64(info.st_size), modified: info.st_mtim), layout: scanned.layout)
        try self.init(source: source, storage: storage, scanned: scanned)
    }

    /// Parses the stream `input` (standard input) in the same pass that copies it to `spool`, a
    /// regular file open for reading and writing, from which records are read back. Bad text is
    /// refused as soon as the scan meets it (a CSV header without the id column within the first
    /// 256 KiB), and a stream over `limit` bytes is refused there, so neither fills the disk.
    /// The first `copied` bytes are already in `spool`.
    init(
        source: String, streaming input: Int32, spool: Int32, copied: Int64, limit: Int64, options: CatalogOptions = CatalogOptions()
    ) throws(CatalogError) {
        var overLimit = false
        var spooled = copied
        var scanner = CatalogScanner(options: options) { into, offset in
            // The scan reads forward, so `offset` is where the copy ends: read on from the stream.
            if Int64(offset) < spooled { return pread(spool, into.baseAddress, into.count, off_t(offset)) }
            guard spooled <= limit else {
                overLimit = true
                return -1
            }
            while true {
                let n = read(input, into.baseAddress, min(into.count, Int(limit + 1 - spooled)))
                if n < 0, errno == EINTR { continue }
                guard n > 0 else { return n }
                guard writeAll(spool, UnsafeRawBufferPointer(rebasing: into[..<n]), path: "the copy of \(source)") == nil else { return -1 }
                spooled += Int64(n)
                return n
            }
        }
        let scanned: CatalogScanner.Result
        do {
            scanned = try scanner.scan()
        } catch {
            if overLimit { throw .unreadable(source: source, reason: "over \(limit >> 20) MiB, the most standard input may hold") }
            throw error.unreadable
                ? .unreadable(source: source, reason: error.detail) : .malformed(source: source, detail: error.detail)
        }
        var info = stat()
        fstat(spool, &info)
        let storage = CatalogStorage(
            .file(descriptor: spool, size: Int64(info.st_size), modified: info.st_mtim), layout: scanned.layout)
        try self.init(source: source, storage: storage, scanned: scanned)
    }

    private init(source: String, storage: CatalogStorage, scanned: CatalogScanner.Result) throws(CatalogError) {
        self.source = source
        sha256 = scanned.sha256
        records = CatalogRecords(storage: storage, entries: scanned.entries, arena: scanned.arena, end: scanned.end)
        let duplicates = records.duplicateIDs
        if !duplicates.isEmpty {
            throw .duplicateIDs(source: source, ids: duplicates)
        }
    }

    /// Copies a pipe or other stream to an unnamed temporary file (records are read back by
    /// offset), returning its descriptor; nil on failure.
    static func spool(_ input: Int32) -> Int32? {
        let directory = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        let file = open(directory, POSIXFileSystem.tmpfile | O_RDWR | O_CLOEXEC, 0o600)
        guard file >= 0 else { return nil }
        var chunk = [UInt8](repeating: 0, count: 256 * 1024)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            if n < 0 {
                close(file)
                return nil
            }
            if n == 0 { return file }
            var written = 0
            while written < n {
                let w = chunk.withUnsafeBytes { write(file, $0.baseAddress! + written, n - written) }
                if w < 0, errno == EINTR { continue }
                guard w > 0 else {
                    close(file)
                    return nil
                }
                written += w
            }
        }
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
    case duplicateIDs(source: String, ids: [RecordID])
    /// The file was edited in place while a run was reading records back from it.
    case changedDuringRun(source: String)

    public var description: String {
        switch self {
        case .unreadable(let source, let reason):
            "cannot read catalog \(source): \(reason)"
        case .malformed(let source, let detail):
            "catalog \(source): \(detail)"
        case .duplicateIDs(let source, let ids):
            "catalog \(source) has duplicate ids: "
                + ids.prefix(5).map(\.description).joined(separator: ", ")
                + (ids.count > 5 ? " and \(ids.count - 5) more" : "")
        case .changedDuringRun(let source):
            "catalog \(source) changed during the run, which reads records back from it; "
                + "no manifest was written. Replace the file only between runs, then run again to resume"
        }
    }
}
