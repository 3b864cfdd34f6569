#if canImport(Glibc)
import Glibc
#endif

/// Reads a file a piece at a time, so checking it costs the same memory whatever its size.
enum FileChunks {
    /// The size of each read.
    static let chunkSize = 1 << 16

    /// Hands `body` the bytes of `fd` from where it stands, a chunk at a time, stopping after
    /// `limit + 1` bytes when a limit is given (enough to tell that the file is longer). Returns
    /// how many bytes were read, or the error text of a failed read.
    static func read(
        _ fd: FileDescriptor, limit: Int64? = nil, _ body: (UnsafeRawBufferPointer) -> Void
    ) -> Result<Int64, FileChunksError> {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 16)
        defer { buffer.deallocate() }
        var total: Int64 = 0
        while true {
            var want = chunkSize
            if let limit { want = Int(min(Int64(chunkSize), limit + 1 - total)) }
            if want <= 0 { return .success(total) }
            let count: Int
            do {
                count = try fd.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<want]))
            } catch {
                return .failure(FileChunksError(reason: error.description))
            }
            if count == 0 { return .success(total) }
            body(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
            total += Int64(count)
        }
    }
}

/// Why a file could not be read to its end.
struct FileChunksError: Error {
    var reason: String
}
