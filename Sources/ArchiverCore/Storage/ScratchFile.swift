#if canImport(Glibc)
import Glibc
#endif

/// An unnamed file for bytes that must be written before the file they belong in can be: a run
/// writes the page's rows as their items finish, while the head that counts them comes last.
/// It has no name (`O_TMPFILE`, or a name removed as soon as it is made), so a killed run
/// leaves nothing behind, and it is gone when closed.
final class ScratchFile {
    let descriptor: Int32
    private var buffer: [UInt8] = []
    private(set) var size = 0
    private(set) var failure: String?
    private static let chunk = 256 * 1024

    init(directory: String) throws(ItemError) {
        var fd = open(directory, POSIXFileSystem.tmpfile | O_RDWR | O_CLOEXEC, 0o600)
        if fd < 0 {
            let path = "\(directory)/.scratch-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
            fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            if fd >= 0 { unlink(path) }
        }
        guard fd >= 0 else { throw .io("cannot create a scratch file in \(directory): \(errnoText())") }
        descriptor = fd
    }

    deinit {
        close(descriptor)
    }

    func append(_ bytes: [UInt8]) {
        if buffer.count + bytes.count > Self.chunk { flush() }
        buffer += bytes
    }

    /// Writes what is buffered; a failure is kept for whoever reads the file back.
    func flush() {
        guard failure == nil, !buffer.isEmpty else { return }
        failure = writeAll(descriptor, buffer, path: "a scratch file")
        size += buffer.count
        buffer.removeAll(keepingCapacity: true)
    }
}
