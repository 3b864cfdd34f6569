#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A journal read back: for each record id, where its latest line is and what it says.
///
/// Replay reads only each line's status and id; a record's other fields are decoded when asked
/// for. Counting a million-record journal therefore makes no string, and a resumed run decodes
/// only the records of its catalog.
public struct JournalIndex: Sendable {
    struct Entry {
        var offset: Int
        var length: Int
        var status: ItemRecord.Status
    }

    private let bytes: Data
    private let entries: [Int: Entry]
    /// Lines in the journal, including those a later line for the same id supersedes.
    public let lineCount: Int

    /// Record ids with a journal line.
    public var ids: some Collection<Int> { entries.keys }
    public var count: Int { entries.count }
    public var isEmpty: Bool { entries.isEmpty }

    /// How many records the journal last recorded with `status`.
    public func count(of status: ItemRecord.Status) -> Int {
        entries.values.count { $0.status == status }
    }

    /// The status the journal last recorded for `id`.
    public func status(of id: Int) -> ItemRecord.Status? {
        entries[id]?.status
    }

    /// The record the journal last recorded for `id`, decoded from its line.
    public func record(for id: Int) -> ItemRecord? {
        guard let entry = entries[id] else { return nil }
        return bytes.withUnsafeBytes { raw in
            let base = raw.baseAddress!.assumingMemoryBound(to: UInt8.self)
            return JournalLine.decode(UnsafeBufferPointer(start: base + entry.offset, count: entry.length))
        }
    }

    /// Every record, decoded (for tests and small journals).
    public func allRecords() -> [Int: ItemRecord] {
        Dictionary(uniqueKeysWithValues: entries.keys.compactMap { id in record(for: id).map { (id, $0) } })
    }

    /// Reads the journal at `path` (an empty index when there is none). A line without its
    /// newline is the torn end of an interrupted write and is left out. A line whose status and
    /// id parse is trusted; if the rest of it is damaged, `record(for:)` returns nil and the
    /// record is fetched again.
    public init(path: String) {
        bytes = (try? Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped)) ?? Data()
        var entries: [Int: Entry] = [:]
        var lines = 0
        bytes.withUnsafeBytes { raw in
            guard let base = raw.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
            entries.reserveCapacity(raw.count / 150)
            var start = 0
            while start < raw.count {
                guard let found = memchr(base + start, 0x0A, raw.count - start) else { break }
                let newline = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
                let line = UnsafeBufferPointer(start: base + start, count: newline - start)
                lines += 1
                if let (id, status) = JournalLine.peek(line) {
                    entries[id] = Entry(offset: start, length: newline - start, status: status)
                }
                start = newline + 1
            }
        }
        self.entries = entries
        lineCount = lines
    }
}
