#if canImport(Glibc)
import Glibc
#endif

/// An open directory, for looking at many names in it without resolving its path each time:
/// a million-record resume checks a million files.
final class OpenDirectory {
    private let descriptor: FileDescriptor

    init?(path: String) {
        guard let descriptor = try? FileDescriptor.open(path, O_RDONLY | O_DIRECTORY) else { return nil }
        self.descriptor = descriptor
    }

    deinit {
        descriptor.close()
    }

    /// The size of the regular file `name`, or nil when there is none (a symbolic link is none).
    func size(of name: String) -> Int64? {
        facts(of: name)?.size
    }

    /// The size and stamp of the regular file `name`, or nil when there is none.
    func facts(of name: String) -> (size: Int64, stamp: FileStamp)? {
        var info = stat()
        guard fstatat(descriptor.rawValue, name, &info, AT_SYMLINK_NOFOLLOW) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return (Int64(info.st_size), FileStamp(info))
    }

    /// Whether `name` is there and a regular file (with its size); nil when nothing is there.
    func kind(of name: String) -> (isRegular: Bool, size: Int64)? {
        var info = stat()
        guard fstatat(descriptor.rawValue, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { return nil }
        return ((info.st_mode & S_IFMT) == S_IFREG, Int64(info.st_size))
    }

    /// Opens the regular file `name` for reading, never through a link.
    func openFile(_ name: String) throws(Errno) -> FileDescriptor {
        try descriptor.open(at: name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK)
    }

    /// The total size of the regular files in the directory, clamped at `Int64.max`: sparse
    /// files can each claim up to 2^63 - 1 bytes, and `status` must report, not trap, on them.
    func totalBytes() -> Int64 {
        let copy = dup(descriptor.rawValue)
        guard copy >= 0, let directory = fdopendir(copy) else { return 0 }
        defer { closedir(directory) }
        var total: Int64 = 0
        while let entry = readdir(directory) {
            var info = stat()
            let found = withUnsafePointer(to: &entry.pointee.d_name) { name in
                name.withMemoryRebound(to: CChar.self, capacity: 256) { fstatat(descriptor.rawValue, $0, &info, AT_SYMLINK_NOFOLLOW) == 0 }
            }
            if found, (info.st_mode & S_IFMT) == S_IFREG { total.saturatingAdd(Int64(info.st_size)) }
        }
        return total
    }
}
