#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// An exclusive `flock` on `DIR/.archiver/lock`, so two runs never write one bundle at once.
/// The kernel drops it when the process dies, however it dies.
final class BundleLock: Sendable {
    private let descriptor: FileDescriptor

    /// Why the lock could not be taken.
    enum Failure: Error, Sendable, Equatable {
        case unopenable(FileSystemError)
        /// Another process holds it; `directory` is the bundle's.
        case held(directory: String, pid: Int?)
    }

    /// Takes the lock or throws naming the process that holds it.
    init(path: String) throws(Failure) {
        let fd: FileDescriptor
        do {
            fd = try openInBundle(path, O_RDWR | O_CREAT)
        } catch {
            throw .unopenable(FileSystemError(.open, .lockFile, path: path, errno: error))
        }
        guard flock(fd.rawValue, LOCK_EX | LOCK_NB) == 0 else {
            let holder = Self.holder(fd: fd)
            fd.close()
            throw .held(directory: URL(fileURLWithPath: path).deletingLastPathComponent().deletingLastPathComponent().path, pid: holder)
        }
        try? fd.truncate(to: 0)
        try? fd.write(all: Array("\(getpid())\n".utf8))
        descriptor = fd
    }

    deinit {
        descriptor.close()
    }

    /// Whether some process holds the lock now, and its pid if it wrote one.
    static func isHeld(path: String) -> (held: Bool, pid: Int?) {
        guard let fd = try? openInBundle(path, O_RDONLY) else { return (false, nil) }
        defer { fd.close() }
        if flock(fd.rawValue, LOCK_SH | LOCK_NB) == 0 {
            flock(fd.rawValue, LOCK_UN)
            return (false, nil)
        }
        return (true, holder(fd: fd))
    }

    private static func holder(fd: FileDescriptor) -> Int? {
        var buffer = [UInt8](repeating: 0, count: 32)
        guard let n = buffer.withUnsafeMutableBytes({ try? fd.read(into: $0, at: 0) }), n > 0 else { return nil }
        return Int(String(decoding: buffer[..<n], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
