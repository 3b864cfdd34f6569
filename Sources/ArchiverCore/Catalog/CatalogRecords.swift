#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Where a catalog's bytes are: an open file (read a window at a time, never held whole), bytes
/// in memory (a catalog downloaded from a URL), or records already decoded (what `merge`
/// rebuilds from the shards' manifests).
final class CatalogStorage: Sendable {
    enum Backing {
        case file(descriptor: Int32, size: Int64, modified: timespec)
        case bytes(Data)
        case decoded([CatalogRecord])
    }

    let backing: Backing
    /// The format, keys and columns records are read back with.
    let layout: CatalogLayout
    /// Set when a record that parsed at load time no longer does: the file changed under the run.
    let damaged = Locked(false)

    init(_ backing: Backing, layout: CatalogLayout = .standard) {
        self.backing = backing
        self.layout = layout
    }

    deinit {
        if case .file(let descriptor, _, _) = backing { close(descriptor) }
    }

    /// Whether the file is no longer the one that was loaded (another size or modification time).
    var changed: Bool {
        if damaged.withLock({ $0 }) { return true }
        guard case .file(let descriptor, let size, let modified) = backing else { return false }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return true }
        return info.st_size != size || info.st_mtim.tv_sec != modified.tv_sec || info.st_mtim.tv_nsec != modified.tv_nsec
    }
}

/// A catalog's records in file order, decoded when read.
///
/// Memory does not grow with the catalog's text: each record costs 24 bytes here (its id, its
/// album and where its object starts) plus 4 in `byID`, and a record's strings exist only while
/// a reader hands it out. Use a `CatalogReader` for a pass over many records; the subscript
/// reads one.
public struct CatalogRecords: RandomAccessCollection, Sendable {
    struct Entry {
        var id: Int
        var offset: Int
        /// Kept so the page can be laid out by album without reading every record back.
        var albumId: Int
    }

    let storage: CatalogStorage
    let entries: [Entry]
    /// Where the last record's object ends.
    let end: Int
    /// Record indices in id order (ids are unique).
    let byID: [Int32]
    /// Where each record's object ends, for a subset of a catalog's records (`subset(_:)`),
    /// whose next entry is not the next object in the file; empty for a whole catalog.
    let ends: [Int]

    init(storage: CatalogStorage, entries: [Entry], end: Int, ends: [Int] = []) {
        self.storage = storage
        self.entries = entries
        self.end = end
        self.ends = ends
        var byID = Array(0..<Int32(entries.count))
        if !entries.indices.dropFirst().allSatisfy({ entries[$0 - 1].id < entries[$0].id }) {
            byID.sort { entries[Int($0)].id < entries[Int($1)].id }
        }
        self.byID = byID
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { entries.count }

    public subscript(position: Int) -> CatalogRecord {
        var reader = CatalogReader(self)
        return reader.record(position)
    }

    public func makeIterator() -> Iterator {
        Iterator(reader: CatalogReader(self))
    }

    public struct Iterator: IteratorProtocol {
        var reader: CatalogReader
        var position = 0

        public mutating func next() -> CatalogRecord? {
            guard position < reader.records.count else { return nil }
            defer { position += 1 }
            return reader.record(position)
        }
    }

    /// The id of the record at `position`, without decoding it.
    public func id(at position: Int) -> Int {
        entries[position].id
    }

    /// The album of the record at `position`, without decoding it.
    public func albumId(at position: Int) -> Int {
        entries[position].albumId
    }

    /// The position of the record with `id`.
    public func position(ofID id: Int) -> Int? {
        var low = 0, high = byID.count
        while low < high {
            let middle = (low + high) / 2
            if entries[Int(byID[middle])].id < id { low = middle + 1 } else { high = middle }
        }
        return low < byID.count && entries[Int(byID[low])].id == id ? Int(byID[low]) : nil
    }

    /// Where the object of the record at `position` ends (or a later record starts).
    func endOffset(at position: Int) -> Int {
        if !ends.isEmpty { return ends[position] }
        return position + 1 < entries.count ? entries[position + 1].offset : end
    }

    /// Ids that occur more than once (in id order, each once).
    var duplicateIDs: [Int] {
        var duplicates: [Int] = []
        for k in byID.indices.dropFirst() where entries[Int(byID[k])].id == entries[Int(byID[k - 1])].id {
            let id = entries[Int(byID[k])].id
            if duplicates.last != id { duplicates.append(id) }
        }
        return duplicates
    }
}

/// Decodes records from a catalog's storage, keeping a window of the file so that a pass in or
/// near file order costs one read per window. Not shared between threads: one per pass.
public struct CatalogReader {
    let records: CatalogRecords
    private var window: [UInt8] = []
    private var windowStart = 0
    private var windowCount = 0
    private static let windowSize = 64 * 1024

    public init(_ records: CatalogRecords) {
        self.records = records
    }

    /// The record at `position`, with only `fields`' strings made (the others empty). A record
    /// that no longer parses (the file changed during the run) comes back with its id and empty
    /// fields, and the storage is marked damaged.
    public mutating func record(_ position: Int) -> CatalogRecord {
        record(position, fields: .all)
    }

    mutating func record(_ position: Int, fields: CatalogParser.Fields) -> CatalogRecord {
        if let record = decode(position, fields: fields) { return record }
        records.storage.damaged.withLock { $0 = true }
        return CatalogRecord(albumId: 0, id: records.entries[position].id, title: "", url: "", thumbnailUrl: "")
    }

    private mutating func decode(_ position: Int, fields: CatalogParser.Fields) -> CatalogRecord? {
        let start = records.entries[position].offset
        let end = records.endOffset(at: position)
        switch records.storage.backing {
        case .decoded(let all):
            return all[start]
        case .bytes(let data):
            return data.withUnsafeBytes { raw in
                Self.parse(raw.bindMemory(to: UInt8.self).prefix(upTo: end), at: start, fields: fields, layout: records.storage.layout)
            }
        case .file(let descriptor, _, _):
            if start < windowStart || end > windowStart + windowCount {
                guard fill(descriptor, from: start, atLeast: end - start) else { return nil }
            }
            let (from, to) = (start - windowStart, end - windowStart)
            let layout = records.storage.layout
            return window.withUnsafeBufferPointer { Self.parse(UnsafeBufferPointer(rebasing: $0[..<to]), at: from, fields: fields, layout: layout) }
        }
    }

    /// The record (a JSON object or a CSV row) at `start`; nil if it does not parse.
    private static func parse(
        _ bytes: UnsafeBufferPointer<UInt8>, at start: Int, fields: CatalogParser.Fields, layout: CatalogLayout
    ) -> CatalogRecord? {
        guard let columns = layout.columns else {
            return CatalogParser.recordIfValid(in: bytes, at: start, fields: fields, schema: layout.schema)
        }
        guard let row = try? CSVRow.parse(bytes, at: start, delimiter: columns.delimiter, atEnd: true),
            row.fields.count == columns.count
        else { return nil }
        return try? columns.record(bytes, row, fields: fields, schema: layout.schema)
    }

    private mutating func fill(_ descriptor: Int32, from offset: Int, atLeast length: Int) -> Bool {
        let size = max(Self.windowSize, length)
        if window.count < size { window = [UInt8](repeating: 0, count: size) }
        var got = 0
        while got < size {
            let n = window.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress! + got, size - got, off_t(offset + got)) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { break }
            got += n
        }
        windowStart = offset
        windowCount = got
        return got >= length
    }
}

extension UnsafeBufferPointer {
    fileprivate func prefix(upTo end: Int) -> UnsafeBufferPointer {
        UnsafeBufferPointer(rebasing: self[..<Swift.min(end, count)])
    }
}
