#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// The append-only record of item outcomes that lets an interrupted run resume.
///
/// Each outcome is one line written with a single `write(2)` on an `O_APPEND` descriptor, after
/// the item's file has been renamed into place. A process killed at any instant leaves at most
/// one partial last line, which replay ignores.
public final class Journal: Sendable {
    /// Lines waiting to be written, by sequence number.
    private struct Pending {
        var bytes: [UInt8] = []
        var enqueued: UInt64 = 0
        var committed: UInt64 = 0
        var failure: (upTo: UInt64, message: String)?
    }

    public let path: String
    private let descriptor: Int32
    private let durable: Bool
    private let beforeCommit: @Sendable () throws(ItemError) -> Void
    private let pending = Locked(Pending())
    private let commit = Locked(())

    /// Opens (creating if needed) the journal for appending. With `durable`, every commit runs
    /// `beforeCommit` (the images directory's fsync) and fsyncs the journal.
    public init(
        path: String, durable: Bool = false, beforeCommit: @escaping @Sendable () throws(ItemError) -> Void = {}
    ) throws(ItemError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .io("cannot open journal \(path): \(errnoText())") }
        self.path = path
        self.descriptor = fd
        self.durable = durable
        self.beforeCommit = beforeCommit
    }

    deinit {
        close(descriptor)
    }

    /// Appends one record.
    public func append(_ record: ItemRecord) throws(ItemError) {
        try append([record])
    }

    /// Appends records and returns once they are written (and, when durable, on disk).
    ///
    /// Group commit: callers queue their lines, then take turns at the commit lock; whoever holds
    /// it writes every line queued so far in one `write` (one directory fsync and one journal
    /// fsync for the batch), so later callers usually find their lines already committed.
    public func append(_ records: [ItemRecord]) throws(ItemError) {
        guard !records.isEmpty else { return }
        let lines = Array(records.map(JournalLine.encode).joined().utf8)
        let ticket = pending.withLock { pending in
            pending.bytes += lines
            pending.enqueued += 1
            return pending.enqueued
        }
        let failure: String? = commit.withLock { _ in
            let (batch, upTo, earlier) = pending.withLock { pending -> ([UInt8], UInt64, String?) in
                if let failure = pending.failure, failure.upTo >= ticket { return ([], 0, failure.message) }
                guard pending.committed < ticket else { return ([], 0, nil) }
                defer { pending.bytes = [] }
                return (pending.bytes, pending.enqueued, nil)
            }
            if let earlier { return earlier }
            guard !batch.isEmpty else { return nil }
            let message = write(batch)
            pending.withLock { pending in
                pending.committed = upTo
                if let message { pending.failure = (upTo, message) }
            }
            return message
        }
        if let failure { throw .io(failure) }
    }

    private func write(_ bytes: [UInt8]) -> String? {
        if durable {
            do { try beforeCommit() } catch { return error.description }
        }
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 {
                if errno == EINTR { continue }
                return "cannot append to journal \(path): \(errnoText())"
            }
            offset += n
        }
        if durable, fsync(descriptor) != 0 { return "cannot fsync journal \(path): \(errnoText())" }
        return nil
    }

    /// Reads a journal: the last record per id wins; a malformed or unterminated line is skipped.
    public static func replay(path: String) -> [Int: ItemRecord] {
        JournalIndex(path: path).allRecords()
    }

    /// Replaces a journal with just `records` (one line each), atomically.
    public static func compact(path: String, records: [ItemRecord]) throws(ItemError) {
        let writer = try AtomicFileWriter(path: path)
        for record in records.sorted(by: { $0.id < $1.id }) where record.status != .pending {
            writer.append(JournalLine.encode(record))
        }
        try writer.commit()
    }
}
