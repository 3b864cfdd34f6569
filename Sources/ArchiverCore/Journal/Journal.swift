#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization

/// The append-only record of item outcomes that lets an interrupted run resume.
///
/// Each outcome is one line written with a single `write(2)` on an `O_APPEND` descriptor, after
/// the item's file has been renamed into place. A process killed at any instant leaves at most
/// one partial last line, which replay ignores.
public final class Journal: Sendable {
    public let path: String
    private let descriptor: Mutex<Int32>
    private let durable: Bool

    /// Opens (creating if needed) the journal for appending.
    public init(path: String, durable: Bool = false) throws(ItemError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .io("cannot open journal \(path): \(errnoText())") }
        self.path = path
        self.descriptor = Mutex(fd)
        self.durable = durable
    }

    deinit {
        descriptor.withLock { fd in
            if fd >= 0 { close(fd) }
        }
    }

    /// Appends one record.
    public func append(_ record: ItemRecord) throws(ItemError) {
        try appendLines(JournalLine.encode(record))
    }

    /// Appends many records in one write.
    public func append(_ records: [ItemRecord]) throws(ItemError) {
        guard !records.isEmpty else { return }
        try appendLines(records.map(JournalLine.encode).joined())
    }

    private func appendLines(_ text: String) throws(ItemError) {
        var bytes = Array(text.utf8)
        let failure: String? = descriptor.withLock { fd in
            var offset = 0
            while offset < bytes.count {
                let n = bytes.withUnsafeMutableBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
                if n < 0 {
                    if errno == EINTR { continue }
                    return "cannot append to journal \(path): \(errnoText())"
                }
                offset += n
            }
            if durable, fsync(fd) != 0 { return "cannot fsync journal \(path): \(errnoText())" }
            return nil
        }
        if let failure { throw .io(failure) }
    }

    /// Reads a journal: the last record per id wins; a malformed or unterminated line is skipped.
    public static func replay(path: String) -> [Int: ItemRecord] {
        guard let data = FileManager.default.contents(atPath: path) else { return [:] }
        var records: [Int: ItemRecord] = [:]
        data.withUnsafeBytes { raw in
            guard let base = raw.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
            records.reserveCapacity(raw.count / 160)
            var start = 0
            while start < raw.count {
                // A line without its newline is the torn end of a write; leave it out.
                guard let found = memchr(base + start, 0x0A, raw.count - start) else { break }
                let newline = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
                if let record = JournalLine.decode(UnsafeBufferPointer(start: base + start, count: newline - start)) {
                    records[record.id] = record
                }
                start = newline + 1
            }
        }
        return records
    }

    /// Replaces a journal with just `records` (one line each), atomically.
    public static func compact(path: String, records: [ItemRecord]) throws(ItemError) {
        let text = records.sorted { $0.id < $1.id }.filter { $0.status != .pending }.map(JournalLine.encode).joined()
        do {
            try Data(text.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw .io("cannot compact journal \(path): \(error.localizedDescription)")
        }
    }
}
