#if canImport(Glibc)
import Glibc
#endif

/// An open directory, for looking at many names in it without resolving its path each time:
/// a million-record resume checks a million files.
final class OpenDirectory {
    private let descriptor: FileDescriptor

    /// Opens the directory at `path`, or throws why not. Without `followingLink`, a symbolic link
    /// at `path` is refused (ENOTDIR): a directory inside a bundle that is a link leads out of it.
    init(opening path: String, followingLink: Bool = true) throws(Errno) {
        descriptor = try FileDescriptor.open(path, O_RDONLY | O_DIRECTORY | (followingLink ? 0 : O_NOFOLLOW))
    }

    /// Opens the directory at `path`; nil when it cannot be (missing, not a directory, a link
    /// without `followingLink`).
    convenience init?(path: String, followingLink: Bool = true) {
        do { try self.init(opening: path, followingLink: followingLink) } catch { return nil }
    }

    deinit {
        descriptor.close()
    }

    /// Calls `body` with the bytes of each name in the directory but `.` and `..`, one at a time
    /// as `readdir` gives them, so memory stays the same whatever the directory holds (a
    /// `contentsOfDirectory` array costs 20 to 300 bytes a name, and a directory from outside
    /// may hold millions). The bytes are valid only during the call, and a NUL follows them.
    ///
    /// `body` may remove the name it is given (the clean-ups do): POSIX leaves unspecified only
    /// whether a name removed or added during the walk is given. Returns the `Errno` of a read
    /// that failed part way (the names before it were given), nil when every name was read. Each
    /// call starts from the first name; not from two threads at once.
    @discardableResult
    func forEachEntry<E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> Void) throws(E) -> Errno? {
        let copy = dup(descriptor.rawValue)
        guard copy >= 0 else { return .current }
        guard let directory = fdopendir(copy) else {
            let failure = Errno.current
            Glibc.close(copy)
            return failure
        }
        defer { closedir(directory) }
        // The copy shares the descriptor's position: an earlier walk left it at the end.
        rewinddir(directory)
        let nameOffset = MemoryLayout<dirent>.offset(of: \.d_name)!
        while true {
            errno = 0
            guard let entry = readdir(directory) else { return errno == 0 ? nil : .current }
            let start = UnsafeRawPointer(entry) + nameOffset
            let name = UnsafeRawBufferPointer(start: start, count: strlen(start.assumingMemoryBound(to: CChar.self)))
            if name.elementsEqual(".".utf8) || name.elementsEqual("..".utf8) { continue }
            try body(name)
        }
    }

    /// `forEachEntry` with each name as a `String` (bytes that are not UTF-8 read as U+FFFD, as
    /// `FileManager` reads them).
    @discardableResult
    func forEachName<E: Error>(_ body: (String) throws(E) -> Void) throws(E) -> Errno? {
        try forEachEntry { (name) throws(E) in try body(String(decoding: name, as: UTF8.self)) }
    }

    /// Whether the directory holds no name but `.` and `..`: stops at the first other one.
    var isEmpty: Bool {
        struct Found: Error {}
        do throws(Found) {
            try forEachEntry { (_) throws(Found) in throw Found() }
        } catch {
            return false
        }
        return true
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
        var total: Int64 = 0
        forEachEntry { name in
            var info = stat()
            let found = fstatat(descriptor.rawValue, name.baseAddress!.assumingMemoryBound(to: CChar.self), &info, AT_SYMLINK_NOFOLLOW) == 0
            if found, (info.st_mode & S_IFMT) == S_IFREG { total.saturatingAdd(Int64(info.st_size)) }
        }
        return total
    }
}
