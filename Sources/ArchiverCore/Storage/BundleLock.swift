#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// An exclusive `flock` on `DIR/.archiver/lock`, so two runs never write one bundle at once.
/// The kernel drops it when the process dies, however it dies.
final class BundleLock: Sendable {
    private let descriptor: Int32

    /// Why the lock could not be taken.
    enum Failure: Error, Sendable, Equatable {
        case unopenable(FileSystemError)
        /// Another process holds it; `directory` is the bundle's.
        case held(directory: String, pid: Int?)
    }

    /// Takes the lock or throws naming the process that holds it.
    init(path: String) throws(Failure) {
        let fd = openInBundle(path, O_RDWR | O_CREAT)
        guard fd >= 0 else { throw .unopenable(FileSystemError(.open, .lockFile, path: path, errno: errno)) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let holder = Self.holder(fd: fd)
            close(fd)
            throw .held(directory: URL(fileURLWithPath: path).deletingLastPathComponent().deletingLastPathComponent().path, pid: holder)
        }
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(fd, 0)
        _ = pwrite(fd, pid, pid.count, 0)
        descriptor = fd
    }

    deinit {
        close(descriptor)
    }

    /// Whether some process holds the lock now, and its pid if it wrote one.
    static func isHeld(path: String) -> (held: Bool, pid: Int?) {
        let fd = openInBundle(path, O_RDONLY)
        guard fd >= 0 else { return (false, nil) }
        defer { close(fd) }
        if flock(fd, LOCK_SH | LOCK_NB) == 0 {
            flock(fd, LOCK_UN)
            return (false, nil)
        }
        return (true, holder(fd: fd))
    }

    private static func holder(fd: Int32) -> Int? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let n = pread(fd, &buffer, buffer.count, 0)
        guard n > 0 else { return nil }
        return Int(String(decoding: buffer[..<n], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
