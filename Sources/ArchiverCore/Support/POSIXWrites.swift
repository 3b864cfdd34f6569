#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Writes every byte of `bytes` to `fd`, retrying short writes and EINTR; why it failed, if it did.
func writeAll(_ fd: Int32, _ bytes: some ContiguousBytes, path: String) -> FileSystemError? {
    bytes.withUnsafeBytes { raw in
        var offset = 0
        while offset < raw.count {
            let n = Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                return FileSystemError(.write, path: path, errno: errno)
            }
            offset += n
        }
        return nil
    }
}

/// The `errno` `openInBundle` leaves when the name holds something other than a regular file
/// (a FIFO, a device, a socket, a directory); `FileSystemError` and `errnoText` say so in words.
let notRegularFileErrno = EMEDIUMTYPE

/// The text of the current `errno`, e.g. "No space left on device".
func errnoText() -> String {
    if errno == notRegularFileErrno { return "not a regular file" }
    return String(cString: strerror(errno))
}
