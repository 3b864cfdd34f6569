#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Writes a whole file in chunks under a temporary name and renames it into place on `commit`,
/// so a large manifest or page is never held in memory whole, and a reader sees the old file or
/// the complete new one.
final class AtomicFileWriter {
    private let path: String
    private let temporary: String
    private let descriptor: Int32
    private var buffer: [UInt8] = []
    private var failure: String?
    private var closed = false
    private let sync: Bool
    private static let chunk = 256 * 1024

    /// With `sync`, the file is fsynced before its rename and the directory after (`--durable`).
    init(path: String, sync: Bool = false, capacity: Int = chunk) throws(ItemError) {
        self.path = path
        self.sync = sync
        let url = URL(fileURLWithPath: path)
        temporary = url.deletingLastPathComponent().path + "/.\(url.lastPathComponent).tmp-\(getpid())"
        descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw .io("cannot create \(temporary): \(errnoText())") }
        buffer.reserveCapacity(min(capacity, Self.chunk))
    }

    deinit {
        if !closed {
            close(descriptor)
            unlink(temporary)
        }
    }

    // Flushing before the buffer would outgrow its capacity keeps it at one allocation of
    // `chunk` bytes (appending past it would double it).
    func append(_ bytes: [UInt8]) {
        if buffer.count + bytes.count > Self.chunk { flush() }
        buffer += bytes
    }

    func append(_ text: String) {
        if buffer.count + text.utf8.count > Self.chunk { flush() }
        buffer.appendUTF8(text)
    }

    /// Replaces `path` with `bytes` atomically: a small file in one write.
    static func write(_ bytes: [UInt8], to path: String, sync: Bool = false) throws(ItemError) {
        let writer = try AtomicFileWriter(path: path, sync: sync, capacity: bytes.count)
        writer.append(bytes)
        try writer.commit()
    }

    /// Writes what is buffered, closes, and renames the file into place.
    func commit() throws(ItemError) {
        flush()
        if failure == nil, sync, fsync(descriptor) != 0 { failure = "cannot fsync \(temporary): \(errnoText())" }
        if let failure { throw .io(failure) }
        closed = true
        close(descriptor)
        guard rename(temporary, path) == 0 else {
            let reason = errnoText()
            unlink(temporary)
            throw .io("cannot rename \(temporary) to \(path): \(reason)")
        }
        if sync { try POSIXFileSystem().syncDirectory(URL(fileURLWithPath: path).deletingLastPathComponent().path) }
    }

    private func flush() {
        guard failure == nil, !buffer.isEmpty else { return }
        failure = writeAll(descriptor, buffer, path: temporary)
        buffer.removeAll(keepingCapacity: true)
    }
}
