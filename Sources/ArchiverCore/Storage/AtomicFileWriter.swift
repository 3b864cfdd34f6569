#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Writes a whole file in chunks under a temporary name and renames it into place on `commit`,
/// so a large manifest or page is never held in memory whole, and a reader sees the old file or
/// the complete new one. The temporary file comes from `FileSystem.createTemporary`: a name that
/// cannot be guessed, created with `O_EXCL`, so a link planted beside the file is never written
/// through; the rename replaces a link at the final name instead of writing to its target.
final class AtomicFileWriter {
    private let path: String
    private let temporary: String
    private var output: ChunkedWrites
    private var descriptor: FileDescriptor { output.descriptor }
    private var closed = false
    private var sealed = false
    private let sync: Bool

    /// With `sync`, the file is fsynced before its rename and the directory after (`--durable`).
    init(
        path: String, sync: Bool = false, capacity: Int = ChunkedWrites.chunk, fileSystem: any FileSystem = POSIXFileSystem()
    ) throws(FileSystemError) {
        self.path = path
        self.sync = sync
        let (fd, temporary) = try fileSystem.createTemporary(beside: path)
        self.temporary = temporary
        output = ChunkedWrites(descriptor: fd, path: temporary, capacity: capacity)
    }

    deinit {
        discard()
    }

    func append(_ bytes: [UInt8]) {
        output.append(bytes)
    }

    func append(_ text: String) {
        output.append(text)
    }

    /// Replaces `path` with `bytes` atomically: a small file in one write.
    static func write(_ bytes: [UInt8], to path: String, sync: Bool = false) throws(FileSystemError) {
        let writer = try AtomicFileWriter(path: path, sync: sync, capacity: bytes.count)
        writer.append(bytes)
        try writer.commit()
    }

    /// Removes the regular files that `AtomicFileWriter`s of a killed run left in `directory`
    /// (`.NAME.tmp-PID-RANDOM`, or `.NAME.tmp-PID` from older versions); call it holding the
    /// bundle lock, when no writer of this process is open there. A link at `directory` is not
    /// followed unless `followingLink` (`--out` itself may be a link its user made).
    static func removeDebris(in directory: String, followingLink: Bool = false) {
        OpenDirectory(path: directory, followingLink: followingLink)?.forEachName { name in
            guard name.hasPrefix("."), let mark = name.range(of: ".tmp-", options: .backwards),
                case let suffix = name[mark.upperBound...], suffix.first?.isWholeNumber == true,
                suffix.allSatisfy({ ("0"..."9").contains($0) || $0 == "-" })
            else { return }
            var info = stat()
            let path = directory + "/" + name
            if lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG { unlink(path) }
        }
    }

    /// Gives up: the temporary file goes now and the old file stays.
    func discard() {
        guard !closed else { return }
        closed = true
        if !sealed { descriptor.close() }
        unlink(temporary)
    }

    /// Writes what is buffered and closes the file, leaving it under its temporary name until
    /// `commit` (or `discard`): the gallery's pages are finished one by one during a run but
    /// all put in place at its end, and must not hold a descriptor each meanwhile.
    func seal() throws(FileSystemError) {
        guard !sealed else { return }
        output.flush()
        if output.failure == nil, sync {
            do { try descriptor.sync() } catch { output.fail(FileSystemError(.fsync, path: temporary, errno: error)) }
        }
        if let failure = output.failure { throw failure }
        sealed = true
        descriptor.close()
        output = ChunkedWrites(descriptor: FileDescriptor(rawValue: -1), path: temporary, capacity: 0)
    }

    /// Writes what is buffered, closes, and renames the file into place.
    func commit() throws(FileSystemError) {
        try seal()
        closed = true
        guard rename(temporary, path) == 0 else {
            let error = FileSystemError(.rename, path: temporary, to: path, errno: errno)
            unlink(temporary)
            throw error
        }
        if sync { try POSIXFileSystem().syncDirectory(URL(fileURLWithPath: path).deletingLastPathComponent().path) }
    }
}
