#if canImport(Glibc)
import Glibc
#endif

/// Bytes bound for an open file, gathered and written `chunk` bytes at a time; the first failure
/// is kept (and later writes skipped) for the owner to report. What `AtomicFileWriter` writes
/// through.
struct ChunkedWrites {
    let descriptor: FileDescriptor
    /// The path named in a failure.
    let path: String
    private var buffer: [UInt8] = []
    /// Bytes written to the file so far.
    private(set) var written = 0
    private(set) var failure: FileSystemError?
    static let chunk = 256 * 1024

    init(descriptor: FileDescriptor, path: String, capacity: Int = chunk) {
        self.descriptor = descriptor
        self.path = path
        buffer.reserveCapacity(min(capacity, Self.chunk))
    }

    // Flushing before the buffer would outgrow its capacity keeps it at one allocation of
    // `chunk` bytes (appending past it would double it).
    mutating func append(_ bytes: [UInt8]) {
        if buffer.count + bytes.count > Self.chunk { flush() }
        buffer += bytes
    }

    mutating func append(_ text: String) {
        if buffer.count + text.utf8.count > Self.chunk { flush() }
        buffer.appendUTF8(text)
    }

    /// Writes what is buffered, unless an earlier write failed.
    mutating func flush() {
        guard failure == nil, !buffer.isEmpty else { return }
        do { try descriptor.write(all: buffer) } catch { failure = FileSystemError(.write, path: path, errno: error) }
        written += buffer.count
        buffer.removeAll(keepingCapacity: true)
    }

    /// Keeps `error` as the failure, unless there is one already.
    mutating func fail(_ error: FileSystemError) {
        if failure == nil { failure = error }
    }
}
