#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Why a file-system call failed: which call, on which path, and the `errno` it set.
///
/// What the file-system seam, the atomic writers, the store and the journal throw, so the cause
/// is kept until someone decides what it means: an item's `io` outcome (`ItemError(_:)`), or
/// the end of a run or a merge.
public struct FileSystemError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The call that failed, as the message names it.
    enum Operation: String, Sendable {
        case create, open, write, fsync, rename
    }

    /// What the path is, when the message says so (`cannot open journal ...`).
    enum Subject: String, Sendable {
        case file, directory, journal
        case lockFile = "lock file"
    }

    var operation: Operation
    var subject: Subject
    var path: String
    /// The new name, for `rename`.
    var destination: String?
    var errno: Int32

    /// Call it right after the failing call, passing `errno` before anything can change it.
    init(_ operation: Operation, _ subject: Subject = .file, path: String, to destination: String? = nil, errno: Int32) {
        self.operation = operation
        self.subject = subject
        self.path = path
        self.destination = destination
        self.errno = errno
    }

    /// A failure a `FileDescriptor` call threw.
    init(_ operation: Operation, _ subject: Subject = .file, path: String, to destination: String? = nil, errno: Errno) {
        self.init(operation, subject, path: path, to: destination, errno: errno.rawValue)
    }

    /// A failure Foundation reported (`FileManager`), with the `errno` under it (EIO if it has none).
    init(_ operation: Operation, path: String, foundation error: any Error) {
        // On Linux the underlying error is a `POSIXError`, which does not cast to `NSError`.
        let underlying = (error as NSError).userInfo[NSUnderlyingErrorKey] as? any Error
        let code = underlying.map { $0 as NSError }.flatMap { $0.domain == NSPOSIXErrorDomain ? Int32(truncatingIfNeeded: $0.code) : nil }
        self.init(operation, path: path, errno: code ?? EIO)
    }

    /// A stable short name for the failure: the call that failed.
    public var kind: String {
        "cannot-" + operation.rawValue
    }

    /// The system's reason (`No space left on device`); for a link met by an open that never
    /// follows one (`openInBundle`), what to do about it.
    var reason: String {
        if operation == .open, errno == ELOOP {
            return "it is a symbolic link, which the archiver never writes through; remove it and run again"
        }
        if errno == notRegularFileErrno {
            return "it is not a regular file (a FIFO, device or directory?), which the archiver never opens; remove it and run again"
        }
        return String(cString: strerror(errno))
    }

    /// `cannot create /x/images/7.png: No space left on device`.
    public var description: String {
        let what = subject == .file ? "" : subject.rawValue + " "
        let target = destination.map { " to \($0)" } ?? ""
        return "cannot \(operation.rawValue) \(what)\(path)\(target): \(reason)"
    }
}
