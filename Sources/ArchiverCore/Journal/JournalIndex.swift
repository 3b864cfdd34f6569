#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A journal read back: for each record id, where its latest line is and what it says.
///
/// Replay reads only each line's status and id; a record's other fields are decoded when asked
/// for. Counting a million-record journal therefore makes no string (unless its ids are
/// strings), and a resumed run decodes only the records of its catalog.
///
/// Memory does not grow with the journal's text: the file is mapped, and the pages that
/// decoding touches are handed back every few thousand records (they stay in the page cache).
/// What is kept is 24 bytes per record, sorted by key: an integer id itself, or a string id's
/// hash (seeded afresh by each process, so a catalog cannot be made to collide); a string id is
/// confirmed against its line when it is looked up.
struct JournalIndex: Sendable {
    struct Entry {
        /// An integer id, or a string id's hash.
        var key: Int
        var offset: Int
        var length: Int32
        var status: ItemRecord.Status
        var hasStringID: Bool

        func precedes(_ other: Entry) -> Bool {
            (hasStringID ? 1 : 0, key, offset) < (other.hasStringID ? 1 : 0, other.key, other.offset)
        }

        func sameKey(_ other: Entry) -> Bool {
            hasStringID == other.hasStringID && key == other.key
        }
    }

    private let text: MappedFile?
    /// The latest line of each id, by key (then by place in the file).
    private let entries: [Entry]
    /// Lines in the journal, including those a later line for the same id supersedes.
    let lineCount: Int
    /// The most lines held at once while reading (before repeated ids were dropped).
    let peakLines: Int

    var count: Int { entries.count }
    var isEmpty: Bool { entries.isEmpty }

    /// How many records the journal last recorded with `status`.
    func count(of status: ItemRecord.Status) -> Int {
        entries.count { $0.status == status }
    }

    /// Every record id with a journal line, the status of its latest line and a way to decode
    /// that line: integers in increasing order, then string ids in the order of their lines.
    ///
    /// String ids are read from their lines in file order: in the order of their hashes, every
    /// read lands on another page of the mapping, and the kernel maps the pages around each
    /// (measured: `status` over 200,000 lines of 300-byte ids, a 95 MB journal, peaked at
    /// 100 MiB that way and at 33 MiB in file order).
    func forEachLatest(_ body: (RecordID, ItemRecord.Status, _ record: () -> ItemRecord?) -> Void) {
        let strings = entries.firstIndex { $0.hasStringID } ?? entries.count
        for entry in entries[..<strings] {
            body(RecordID(entry.key), entry.status) { decode(entry) }
        }
        for index in entries.indices[strings...].sorted(by: { entries[$0].offset < entries[$1].offset }) {
            let entry = entries[index]
            guard let id = id(of: entry) else { continue }
            body(id, entry.status) { decode(entry) }
        }
    }

    /// The status the journal last recorded for `id`.
    func status(of id: RecordID) -> ItemRecord.Status? {
        entry(for: id)?.status
    }

    /// The record the journal last recorded for `id`, decoded from its line.
    func record(for id: RecordID) -> ItemRecord? {
        guard let entry = entry(for: id) else { return nil }
        return decode(entry)
    }

    /// Every record, decoded (for tests and small journals).
    func allRecords() -> [RecordID: ItemRecord] {
        Dictionary(entries.compactMap { decode($0).map { ($0.id, $0) } }, uniquingKeysWith: { _, last in last })
    }

    private func decode(_ entry: Entry) -> ItemRecord? {
        guard let text else { return nil }
        return text.read { base in
            JournalLine.decode(UnsafeBufferPointer(start: base + entry.offset, count: Int(entry.length)))
        }
    }

    /// The id on an entry's line.
    private func id(of entry: Entry) -> RecordID? {
        guard let text else { return nil }
        return text.read { base in JournalLine.peek(UnsafeBufferPointer(start: base + entry.offset, count: Int(entry.length)))?.id }
    }

    /// The key an id is indexed by: an integer itself, a string's hash.
    private static func key(_ id: RecordID) -> (key: Int, hasStringID: Bool) {
        switch id.value {
        case .integer(let value): (value, false)
        case .string: (id.hashValue, true)
        }
    }

    private func entry(for id: RecordID) -> Entry? {
        let (key, hasStringID) = Self.key(id)
        let wanted = Entry(key: key, offset: Int.min, length: 0, status: .pending, hasStringID: hasStringID)
        var low = 0, high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if entries[middle].precedes(wanted) { low = middle + 1 } else { high = middle }
        }
        while low < entries.count, entries[low].sameKey(wanted) {
            if !hasStringID || self.id(of: entries[low]) == id { return entries[low] }
            low += 1
        }
        return nil
    }

    /// Reads the journal at `path` (an empty index when there is none). A line without its
    /// newline is the torn end of an interrupted write and is left out. A line whose status and
    /// id parse is trusted; if the rest of it is damaged, `record(for:)` returns nil and the
    /// record is fetched again. Past `floor` lines it drops repeated ids as it reads (tests
    /// lower it).
    init(path: String, compactingFrom floor: Int = compactionFloor) {
        let file = MappedFile(path: path)
        var lines: [Entry] = []
        var count = 0
        var compactAt = floor
        var peak = 0
        file?.read { base in
            let length = file?.length ?? 0
            var start = 0
            var dropped = 0
            while start < length {
                if start - dropped >= 1 << 20 {
                    // The lines behind are indexed: their pages need not stay resident.
                    file?.relinquish(upTo: start)
                    dropped = start
                }
                guard let found = memchr(base + start, 0x0A, length - start) else { break }
                let newline = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
                count += 1
                if let (id, status) = JournalLine.peek(UnsafeBufferPointer(start: base + start, count: newline - start)),
                    let size = Int32(exactly: newline - start)
                {
                    let (key, hasStringID) = Self.key(id)
                    lines.append(Entry(key: key, offset: start, length: size, status: status, hasStringID: hasStringID))
                    // A journal says an id again on every run that gets to it: with lines past
                    // twice the distinct ids of the last count, keep only the latest of each, so
                    // memory follows the records, not the lines (a hostile journal of 10 million
                    // lines of one id took 433 MB).
                    if lines.count >= compactAt {
                        peak = max(peak, lines.count)
                        lines = Self.latest(of: lines, in: file)
                        compactAt = max(floor, 2 * lines.count)
                    }
                }
                start = newline + 1
            }
        }
        file?.relinquish()
        text = file
        peakLines = max(peak, lines.count)
        entries = Self.latest(of: lines, in: file)
        lineCount = count
    }

    /// Below this many lines the index never drops repeated ids while it reads.
    static let compactionFloor = 1 << 20

    /// The latest line of each id among `lines`, sorted by key: by key, then by position in the
    /// file, keeping the last of each id.
    private static func latest(of lines: [Entry], in file: MappedFile?) -> [Entry] {
        var lines = lines
        lines.sort { $0.precedes($1) }
        var latest: [Entry] = []
        latest.reserveCapacity(lines.count)
        var first = 0
        while first < lines.count {
            var end = first + 1
            while end < lines.count, lines[end].sameKey(lines[first]) { end += 1 }
            if !lines[first].hasStringID || end - first == 1 {
                latest.append(lines[end - 1])
            } else {
                // Lines of one string id, as a rule; ids whose hashes are equal are told apart
                // by their lines.
                var ids: [RecordID?] = []
                for line in lines[first..<end] {
                    let id = file?.read { base in
                        JournalLine.peek(UnsafeBufferPointer(start: base + line.offset, count: Int(line.length)))?.id
                    }
                    ids.append(id)
                }
                for index in first..<end where !ids[(index - first + 1)...].contains(ids[index - first]) {
                    latest.append(lines[index])
                }
            }
            first = end
        }
        return latest
    }
}

/// A read-only mapping of a whole file. Every few thousand reads the mapping's pages are dropped
/// from this process (`MADV_DONTNEED`), so reading a large journal line by line does not leave
/// it all resident. Dropping is safe at any moment: the mapping is private and never written,
/// so a later read faults the page in again from the page cache.
final class MappedFile: @unchecked Sendable {
    // @unchecked: `base` points at a read-only mapping that lives as long as this object.
    let length: Int
    private let base: UnsafeMutableRawPointer
    private let reads = Locked(0)
    private static let relinquishEvery = 4096

    init?(path: String) {
        guard let fd = try? openInBundle(path, O_RDONLY) else { return nil }
        defer { fd.close() }
        guard let info = try? fd.status(), info.st_size > 0,
            let mapped = mmap(nil, Int(info.st_size), PROT_READ, MAP_PRIVATE, fd.rawValue, 0), mapped != MAP_FAILED
        else { return nil }
        length = Int(info.st_size)
        base = mapped
    }

    deinit {
        munmap(base, length)
    }

    /// Runs `body` over the mapping; long sequential reads should call `relinquish()` after.
    func read<T>(_ body: (UnsafePointer<UInt8>) -> T) -> T {
        let result = body(UnsafePointer(base.assumingMemoryBound(to: UInt8.self)))
        // A decoded line touches a page or two; after enough of them, hand the pages back.
        let drop = reads.withLock { count -> Bool in
            count += 1
            guard count >= Self.relinquishEvery else { return false }
            count = 0
            return true
        }
        if drop { relinquish() }
        return result
    }

    /// Drops the mapping's resident pages from this process (those before `end`, if given).
    func relinquish(upTo end: Int? = nil) {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let bytes = end.map { $0 / page * page } ?? length
        if bytes > 0 { madvise(base, bytes, MADV_DONTNEED) }
    }
}
