#if canImport(Glibc)
import Glibc
#endif
import CSystem
import Foundation
import Synchronization

/// The syscalls that durability depends on, behind one seam so tests can inject failures.
protocol FileSystem: Sendable {
    /// Creates or replaces `directory/name` with `data` atomically: a reader (or a run resumed
    /// after a crash) sees the old file or the whole new one, never part of it. With `sync`, the
    /// data is fsynced before the file gets its name. Returns the new file's stamp, taken from the
    /// descriptor it was written through (nil if that cannot be read).
    func writeAtomically(_ data: Data, directory: String, name: String, sync: Bool) throws(FileSystemError) -> FileStamp?
    /// Flushes a directory's entries (the names created in it) to disk.
    func syncDirectory(_ path: String) throws(FileSystemError)
    /// Removes a file, ignoring a missing one.
    func remove(_ path: String)
    /// Creates a new file for writing beside `path`, to be renamed over it: under a name no other
    /// process can guess (`.NAME.tmp-PID-RANDOM`), with `O_EXCL`, never through a link.
    func createTemporary(beside path: String) throws(FileSystemError) -> (descriptor: FileDescriptor, path: String)
}

extension FileSystem {
    func createTemporary(beside path: String) throws(FileSystemError) -> (descriptor: FileDescriptor, path: String) {
        let url = URL(fileURLWithPath: path)
        let temporary = url.deletingLastPathComponent().path
            + "/.\(url.lastPathComponent).tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        do {
            return (try openInBundle(temporary, O_WRONLY | O_CREAT | O_EXCL), temporary)
        } catch {
            throw FileSystemError(.create, path: temporary, errno: error)
        }
    }
}

/// The real file system, through POSIX calls.
///
/// A new file is written as an unnamed `O_TMPFILE` inode and then linked under its name: one
/// directory operation per file instead of two (create a temporary name, rename it), which is
/// what file creation costs here, and a crash leaves no debris. When the name already exists,
/// or the file system has no `O_TMPFILE`, it falls back to a temporary name and `rename`.
struct POSIXFileSystem: FileSystem {
    /// Prefix of temporary names; anything starting with it is debris from an interrupted write.
    static let temporaryPrefix = ".partial-"

    init() {}

    func writeAtomically(_ data: Data, directory: String, name: String, sync: Bool) throws(FileSystemError) -> FileStamp? {
        let final = directory + "/" + name
        if let unnamed = try? FileDescriptor.open(directory, csystem_o_tmpfile | O_WRONLY) {
            defer { unnamed.close() }
            let stamp = try write(data, to: unnamed, path: final, sync: sync)
            if link(unnamed, as: final) { return stamp }
            guard errno == EEXIST else { return try replace(data, directory: directory, name: name, sync: sync) }
            // Replacing an existing file: give the inode a temporary name, then rename over.
            let temporary = temporaryPath(directory, name)
            if link(unnamed, as: temporary) {
                try rename(temporary, to: final)
                return stamp
            }
        }
        return try replace(data, directory: directory, name: name, sync: sync)
    }

    /// Whether `linkat(fd, "", ..., AT_EMPTY_PATH)` may work here; cleared the first time the
    /// kernel refuses it (it needs CAP_DAC_READ_SEARCH before Linux 6.10).
    private static let emptyPathLinks = Atomic(true)

    /// Names the unnamed file `fd` as `path`; false with `errno` set when it cannot.
    ///
    /// Linking the descriptor itself (`AT_EMPTY_PATH`) spares the kernel resolving
    /// `/proc/self/fd/N`, a procfs lookup per file; without the privilege that needs, it
    /// returns ENOENT, and the `/proc` path is used from then on.
    private func link(_ fd: FileDescriptor, as path: String) -> Bool {
        let tryEmptyPath = Self.emptyPathLinks.load(ordering: .relaxed)
        if tryEmptyPath {
            if linkat(fd.rawValue, "", AT_FDCWD, path, csystem_at_empty_path) == 0 { return true }
            guard errno == ENOENT || errno == EPERM else { return false }
        }
        guard linkat(AT_FDCWD, "/proc/self/fd/\(fd.rawValue)", AT_FDCWD, path, AT_SYMLINK_FOLLOW) == 0 else { return false }
        // ENOENT can also mean a missing directory: only a `/proc` link that works proves the
        // empty path was refused.
        if tryEmptyPath { Self.emptyPathLinks.store(false, ordering: .relaxed) }
        return true
    }

    /// The portable path: write a temporary name, then rename it over the final one.
    private func replace(_ data: Data, directory: String, name: String, sync: Bool) throws(FileSystemError) -> FileStamp? {
        let temporary = temporaryPath(directory, name)
        let fd: FileDescriptor
        do { fd = try openInBundle(temporary, O_WRONLY | O_CREAT | O_EXCL) } catch { throw FileSystemError(.create, path: temporary, errno: error) }
        let stamp: FileStamp?
        do {
            stamp = try write(data, to: fd, path: temporary, sync: sync)
        } catch {
            fd.close()
            unlink(temporary)
            throw error
        }
        fd.close()
        try rename(temporary, to: directory + "/" + name)
        return stamp
    }

    private func rename(_ from: String, to: String) throws(FileSystemError) {
        guard Glibc.rename(from, to) == 0 else {
            let error = FileSystemError(.rename, path: from, to: to, errno: errno)
            unlink(from)
            throw error
        }
    }

    private func temporaryPath(_ directory: String, _ name: String) -> String {
        "\(directory)/\(Self.temporaryPrefix)\(name)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    }

    /// Writes (and with `sync` fsyncs) `data` through `fd`; returns the file's stamp, from `fstat`
    /// on the descriptor: no second path walk, and it is this file's even if the name is replaced.
    private func write(_ data: Data, to fd: FileDescriptor, path: String, sync: Bool) throws(FileSystemError) -> FileStamp? {
        do { try fd.write(all: data) } catch { throw FileSystemError(.write, path: path, errno: error) }
        if sync {
            do { try fd.sync() } catch { throw FileSystemError(.fsync, path: path, errno: error) }
        }
        return (try? fd.status()).map(FileStamp.init)
    }

    func syncDirectory(_ path: String) throws(FileSystemError) {
        let fd: FileDescriptor
        do { fd = try FileDescriptor.open(path, O_RDONLY | O_DIRECTORY) } catch { throw FileSystemError(.open, .directory, path: path, errno: error) }
        defer { fd.close() }
        do { try fd.sync() } catch { throw FileSystemError(.fsync, .directory, path: path, errno: error) }
    }

    func remove(_ path: String) {
        unlink(path)
    }
}
