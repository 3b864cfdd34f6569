#if canImport(Glibc)
import Glibc
#endif

/// What a failed system call left in `errno`: what `FileDescriptor` throws.
package struct Errno: Error, Sendable, Equatable, CustomStringConvertible {
    package let rawValue: Int32

    package init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// The `errno` the last failed call left on this thread.
    static var current: Errno {
        Errno(rawValue: errno)
    }

    /// The system's text, e.g. "No space left on device" ("not a regular file" for
    /// `notRegularFileErrno`).
    package var description: String {
        if rawValue == notRegularFileErrno { return "not a regular file" }
        return String(cString: strerror(rawValue))
    }
}

/// The `errno` `openInBundle` leaves when the name holds something other than a regular file
/// (a FIFO, a device, a socket, a directory); `FileSystemError` and `errnoText` say so in words.
let notRegularFileErrno = EMEDIUMTYPE

/// The text of the current `errno`, e.g. "No space left on device".
func errnoText() -> String {
    Errno.current.description
}
