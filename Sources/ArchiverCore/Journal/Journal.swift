#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// The append-only record of item outcomes that lets an interrupted run resume.
///
/// Each outcome is one line written with a single `write(2)` on an `O_APPEND` descriptor, after
/// the item's file has been renamed into place. A process killed at any instant leaves at most
/// one partial last line, which replay ignores.
final class Journal: Sendable {
    let path: String
    private let descriptor: FileDescriptor
    private let durable: Bool
    private let beforeCommit: @Sendable () throws(FileSystemError) -> Void
    private let lock = Locked(())

    /// Opens (creating if needed) the journal for appending. With `durable`, every append first
    /// runs `beforeCommit` (the images directory's fsync) and then fsyncs the journal.
    init(
        path: String, durable: Bool = false, beforeCommit: @escaping @Sendable () throws(FileSystemError) -> Void = {}
    ) throws(FileSystemError) {
        let fd: FileDescriptor
        do {
            fd = try openInBundle(path, O_WRONLY | O_CREAT | O_APPEND)
        } catch {
            throw FileSystemError(.open, .journal, path: path, errno: error)
        }
        if durable {
            // The journal's own name must survive a power cut too.
            do {
                try POSIXFileSystem().syncDirectory(URL(fileURLWithPath: path).deletingLastPathComponent().path)
            } catch {
                fd.close()
                throw error
            }
        }
        self.path = path
        self.descriptor = fd
        self.durable = durable
        self.beforeCommit = beforeCommit
    }

    deinit {
        descriptor.close()
    }

    /// Appends one record.
    func append(_ record: ItemRecord) throws(FileSystemError) {
        try append([record])
    }

    /// Appends records in one write and returns once they are written (and, when durable, on
    /// disk). A write that fails part-way is cut back off, so the next line starts clean.
    func append(_ records: [ItemRecord]) throws(FileSystemError) {
        guard !records.isEmpty else { return }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(records.count * 256)
        for record in records { JournalLine.append(record, to: &bytes) }
        let failure: FileSystemError? = lock.withLock { _ in
            if durable {
                do throws(FileSystemError) { try beforeCommit() } catch { return error }
            }
            let size = try? descriptor.status().st_size
            do throws(Errno) {
                try descriptor.write(all: bytes)
            } catch {
                if let size { try? descriptor.truncate(to: Int64(size)) }
                return FileSystemError(.write, path: path, errno: error)
            }
            if durable {
                do throws(Errno) { try descriptor.sync() } catch { return FileSystemError(.fsync, .journal, path: path, errno: error) }
            }
            return nil
        }
        if let failure { throw failure }
    }

    /// Replaces a journal with the records `produce` hands over (one line each, in that order;
    /// pending ones are left out), atomically, without holding them all.
    /// `shouldCommit` is asked once `produce` is done; false leaves the journal as it was.
    /// Returns whether the journal was replaced.
    @discardableResult
    static func compact(
        path: String, sync: Bool = false, produce: ((ItemRecord) -> Void) -> Void, if shouldCommit: () -> Bool = { true }
    ) throws(FileSystemError) -> Bool {
        let writer = try AtomicFileWriter(path: path, sync: sync)
        produce { record in
            if record.status != .pending { writer.append(JournalLine.encode(record)) }
        }
        guard shouldCommit() else { return false }
        try writer.commit()
        return true
    }

    /// Replaces a journal with just `records` (one line each), atomically.
    static func compact(path: String, records: [ItemRecord], sync: Bool = false) throws(FileSystemError) {
        try compact(path: path, sync: sync, produce: { emit in records.sorted { $0.id < $1.id }.forEach(emit) })
    }
}
