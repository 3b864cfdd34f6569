#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// The syscalls that durability depends on, behind one seam so tests can inject failures.
public protocol FileSystem: Sendable {
    /// Creates `path` with `data` (mode 0644), optionally fsyncing it before close.
    func writeNew(_ data: Data, to path: String, sync: Bool) throws(ItemError)
    /// Atomically replaces `to` with `from`.
    func rename(_ from: String, to: String) throws(ItemError)
    /// Flushes a directory's entries (the names renamed into it) to disk.
    func syncDirectory(_ path: String) throws(ItemError)
    /// Removes a file, ignoring a missing one.
    func remove(_ path: String)
}

/// The real file system, through POSIX calls.
public struct POSIXFileSystem: FileSystem {
    public init() {}

    public func writeNew(_ data: Data, to path: String, sync: Bool) throws(ItemError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .io("cannot create \(path): \(errnoText())") }
        var failure: String?
        data.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    failure = "cannot write \(path): \(errnoText())"
                    return
                }
                offset += n
            }
        }
        if failure == nil, sync, fsync(fd) != 0 { failure = "cannot fsync \(path): \(errnoText())" }
        if close(fd) != 0, failure == nil { failure = "cannot close \(path): \(errnoText())" }
        if let failure {
            unlink(path)
            throw .io(failure)
        }
    }

    public func rename(_ from: String, to: String) throws(ItemError) {
        if Glibc.rename(from, to) != 0 { throw .io("cannot rename \(from) to \(to): \(errnoText())") }
    }

    public func syncDirectory(_ path: String) throws(ItemError) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw .io("cannot open directory \(path): \(errnoText())") }
        defer { close(fd) }
        if fsync(fd) != 0 { throw .io("cannot fsync directory \(path): \(errnoText())") }
    }

    public func remove(_ path: String) {
        unlink(path)
    }
}

func errnoText() -> String {
    String(cString: strerror(errno))
}
