#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Where a catalog's bytes are: an open file (read a window at a time, never held whole), or bytes
/// in memory (a catalog downloaded from a URL).
final class CatalogStorage: Sendable {
    enum Backing {
        case file(descriptor: FileDescriptor, size: Int64, modified: timespec)
        case bytes(Data)
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
        if case .file(let descriptor, _, _) = backing { descriptor.close() }
    }

    /// Whether the file is no longer the one that was loaded (another size or modification time).
    var changed: Bool {
        if damaged.withLock({ $0 }) { return true }
        guard case .file(let descriptor, let size, let modified) = backing else { return false }
        guard let info = try? descriptor.status() else { return true }
        return info.st_size != size || info.st_mtim.tv_sec != modified.tv_sec || info.st_mtim.tv_nsec != modified.tv_nsec
    }
}

/// A catalog's records in file order, decoded when read.
///
/// Memory does not grow with the catalog's text: each record costs 24 bytes here (its id, its
/// album and where its object starts) plus 4 in `byID`, and a record's strings exist only while
/// a reader hands it out. A string id is also kept in `arena` (its bytes and one more, at most
/// 233), so that records can be ordered and found by id. Use a `CatalogReader` for a pass over
/// many records; the subscript reads one.
struct CatalogRecords: RandomAccessCollection, Sendable {
    struct Entry {
        /// An integer id, or where a string id is in the records' `IDArena`.
        var key: Int
        /// Where the record's object starts, times two, plus one for a string id.
        private var packed: Int
        /// Kept so the page can be laid out by album without reading every record back.
        var albumId: Int

        var offset: Int { packed >> 1 }
        var hasStringID: Bool { packed & 1 == 1 }

        /// The entry of a record with `id` whose object starts at `offset`; a string id is kept
        /// in `arena`, made when the first one comes.
        init(id: RecordID, offset: Int, albumId: Int, arena: inout IDArena?) {
            self.albumId = albumId
            switch id.value {
            case .integer(let value):
                key = value
                packed = offset << 1
            case .string(let text):
                if arena == nil { arena = IDArena() }
                key = arena!.append(text)
                packed = offset << 1 | 1
            }
        }
    }

    let storage: CatalogStorage
    let entries: [Entry]
    /// The string ids of `entries`; nil when every id is an integer.
    let arena: IDArena?
    /// Where the last record's object ends.
    let end: Int
    /// Record indices in id order (`RecordID`'s: integers, then strings by their bytes).
    let byID: [Int32]
    /// Where each record's object ends, for a subset of a catalog's records (`subset(_:)`),
    /// whose next entry is not the next object in the file; empty for a whole catalog.
    let ends: [Int]

    init(storage: CatalogStorage, entries: [Entry], arena: IDArena?, end: Int, ends: [Int] = []) {
        self.storage = storage
        self.entries = entries
        self.arena = arena
        self.end = end
        self.ends = ends
        // At most `Int32.max` entries: `CatalogScanner` refuses a catalog of more.
        var byID = Array(0..<Int32(entries.count))
        if let arena {
            byID.sort { Self.precedes(entries[Int($0)], entries[Int($1)], arena) }
        } else if !entries.indices.dropFirst().allSatisfy({ entries[$0 - 1].key < entries[$0].key }) {
            byID.sort { entries[Int($0)].key < entries[Int($1)].key }
        }
        self.byID = byID
    }

    /// Whether `a`'s id comes before `b`'s.
    private static func precedes(_ a: Entry, _ b: Entry, _ arena: IDArena) -> Bool {
        switch (a.hasStringID, b.hasStringID) {
        case (false, false): a.key < b.key
        case (false, true): true
        case (true, false): false
        case (true, true): IDArena.precedes(arena.form(a.key), arena.form(b.key))
        }
    }

    private static func equal(_ a: Entry, _ b: Entry, _ arena: IDArena?) -> Bool {
        guard a.hasStringID == b.hasStringID else { return false }
        guard a.hasStringID, let arena else { return a.key == b.key }
        return IDArena.equal(arena.form(a.key), arena.form(b.key))
    }

    var startIndex: Int { 0 }
    var endIndex: Int { entries.count }

    subscript(position: Int) -> CatalogRecord {
        var reader = CatalogReader(self)
        return reader.record(position)
    }

    func makeIterator() -> Iterator {
        Iterator(reader: CatalogReader(self))
    }

    struct Iterator: IteratorProtocol {
        var reader: CatalogReader
        var position = 0

        mutating func next() -> CatalogRecord? {
            guard position < reader.records.count else { return nil }
            defer { position += 1 }
            return reader.record(position)
        }
    }

    /// The id of the record at `position`; decoded from the catalog only for a string id too
    /// long to be kept whole (one that fails as `unsafe-key`).
    func id(at position: Int) -> RecordID {
        let entry = entries[position]
        guard entry.hasStringID, let arena else { return RecordID(entry.key) }
        if let text = arena.text(entry.key) { return RecordID(text) }
        var reader = CatalogReader(self)
        return reader.record(position, fields: []).id
    }

    /// The album of the record at `position`, without decoding it.
    func albumId(at position: Int) -> Int {
        entries[position].albumId
    }

    /// The position of the record with `id`.
    func position(ofID id: RecordID) -> Int? {
        switch id.value {
        case .integer(let value):
            return search { $0.hasStringID ? .after : $0.key < value ? .before : $0.key == value ? .equal : .after }
        case .string(let text):
            guard let arena else { return nil }
            let form = IDArena.form(of: text)
            return form.withUnsafeBytes { wanted in
                search { entry in
                    guard entry.hasStringID else { return .before }
                    let kept = arena.form(entry.key)
                    return IDArena.precedes(kept, wanted) ? .before : IDArena.equal(kept, wanted) ? .equal : .after
                }
            }
        }
    }

    private enum Place { case before, equal, after }

    /// Binary search of `byID` for the entry `place` calls equal.
    private func search(_ place: (Entry) -> Place) -> Int? {
        var low = 0, high = byID.count
        while low < high {
            let middle = (low + high) / 2
            if place(entries[Int(byID[middle])]) == .before { low = middle + 1 } else { high = middle }
        }
        return low < byID.count && place(entries[Int(byID[low])]) == .equal ? Int(byID[low]) : nil
    }

    /// Where the object of the record at `position` ends (or a later record starts).
    func endOffset(at position: Int) -> Int {
        if !ends.isEmpty { return ends[position] }
        return position + 1 < entries.count ? entries[position + 1].offset : end
    }

    /// The names (`RecordKey` stems) of the string ids long enough to be named with a hash,
    /// which `RecordKey.id(fromStem:)` cannot reverse.
    func hashedStems() -> Set<String> {
        guard let arena else { return [] }
        var stems = Set<String>()
        for entry in entries where entry.hasStringID {
            guard let text = arena.text(entry.key), let stem = RecordKey.stem(for: text), stem.contains("~") else { continue }
            stems.insert(stem)
        }
        return stems
    }

    /// How many ids occur more than once, and the first `limit` of them (in id order, each
    /// once): only those are decoded (a string id may be 4 MiB, and a catalog may repeat a
    /// million).
    func duplicateIDs(keeping limit: Int) -> (ids: [RecordID], count: Int) {
        var first: [RecordID] = []
        var count = 0
        var last: Int32?
        for k in byID.indices.dropFirst() where Self.equal(entries[Int(byID[k])], entries[Int(byID[k - 1])], arena) {
            if let last, Self.equal(entries[Int(last)], entries[Int(byID[k])], arena) { continue }
            last = byID[k]
            count += 1
            if first.count < limit { first.append(id(at: Int(byID[k]))) }
        }
        return (first, count)
    }
}

/// Decodes records from a catalog's storage, keeping two windows of the file so that a pass in
/// or near file order costs one read per window, and so does one that goes back and forth
/// between two places (a job in catalog order and the later records sharing its URL, in a
/// catalog that lists its images twice). Not shared between threads: one per pass.
struct CatalogReader {
    let records: CatalogRecords
    /// A stretch of the file read in one `pread`.
    private struct Window {
        var bytes: [UInt8] = []
        var start = 0
        var count = 0
        /// When it was last read from (the reader's `clock`): the other window is refilled first.
        var used = 0

        func holds(_ start: Int, _ end: Int) -> Bool {
            start >= self.start && end <= self.start + count
        }
    }
    private var windows = [Window(), Window()]
    private var clock = 0
    /// Windows read from the file so far.
    private(set) var fills = 0
    private static let windowSize = 64 * 1024

    init(_ records: CatalogRecords) {
        self.records = records
    }

    /// The record at `position`, with only `fields`' strings made (the others empty). A record
    /// that no longer parses (the file changed during the run) comes back with its id and empty
    /// fields, and the storage is marked damaged.
    mutating func record(_ position: Int) -> CatalogRecord {
        record(position, fields: .all)
    }

    mutating func record(_ position: Int, fields: CatalogParser.Fields) -> CatalogRecord {
        if let record = decode(position, fields: fields) { return record }
        records.storage.damaged.withLock { $0 = true }
        let entry = records.entries[position]
        let id = entry.hasStringID ? RecordID(records.arena?.text(entry.key) ?? "") : RecordID(entry.key)
        return CatalogRecord(albumId: 0, id: id, title: "", url: "", thumbnailUrl: "")
    }

    private mutating func decode(_ position: Int, fields: CatalogParser.Fields) -> CatalogRecord? {
        let start = records.entries[position].offset
        let end = records.endOffset(at: position)
        switch records.storage.backing {
        case .bytes(let data):
            return data.withUnsafeBytes { raw in
                Self.parse(raw.bindMemory(to: UInt8.self).prefix(upTo: end), at: start, fields: fields, layout: records.storage.layout)
            }
        case .file(let descriptor, _, _):
            var w = windows[0].holds(start, end) ? 0 : 1
            if !windows[w].holds(start, end) {
                w = windows[0].used <= windows[1].used ? 0 : 1
                fills += 1
                guard fill(&windows[w], descriptor, from: start, atLeast: end - start) else { return nil }
            }
            clock += 1
            windows[w].used = clock
            let (from, to) = (start - windows[w].start, end - windows[w].start)
            let layout = records.storage.layout
            return windows[w].bytes.withUnsafeBufferPointer {
                Self.parse(UnsafeBufferPointer(rebasing: $0[..<to]), at: from, fields: fields, layout: layout)
            }
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

    private func fill(_ window: inout Window, _ descriptor: FileDescriptor, from offset: Int, atLeast length: Int) -> Bool {
        let size = max(Self.windowSize, length)
        if window.bytes.count < size { window.bytes = [UInt8](repeating: 0, count: size) }
        var got = 0
        while got < size {
            let n = window.bytes.withUnsafeMutableBytes { raw in
                try? descriptor.read(into: UnsafeMutableRawBufferPointer(rebasing: raw[got..<size]), at: Int64(offset + got))
            }
            guard let n, n > 0 else { break }
            got += n
        }
        window.start = offset
        window.count = got
        return got >= length
    }
}

extension UnsafeBufferPointer {
    fileprivate func prefix(upTo end: Int) -> UnsafeBufferPointer {
        UnsafeBufferPointer(rebasing: self[..<Swift.min(end, count)])
    }
}
