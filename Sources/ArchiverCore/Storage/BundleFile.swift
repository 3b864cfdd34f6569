#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Opens a regular file inside a bundle with `O_NOFOLLOW`: a symbolic link planted at its name fails the
/// open (ELOOP) instead of letting the archiver write, truncate or read the file it points to
/// (a `FileSystemError` of `open` says so).
///
/// The open is also `O_NONBLOCK`, and anything but a regular file is closed at once with
/// `notRegularFileErrno`: a FIFO at `.archiver/journal` would otherwise block the open (or the
/// first read) forever, and a device could be read without end. `O_NONBLOCK` left on a regular
/// file's descriptor changes nothing.
func openInBundle(_ path: String, _ flags: Int32, mode: mode_t = 0o644) throws(Errno) -> FileDescriptor {
    let fd: FileDescriptor
    do {
        fd = try FileDescriptor.open(path, flags | O_NOFOLLOW | O_NONBLOCK, mode: mode)
    } catch {
        // A FIFO without a reader refuses a non-blocking open for writing with ENXIO.
        throw error.rawValue == ENXIO ? Errno(rawValue: notRegularFileErrno) : error
    }
    guard let info = try? fd.status(), (info.st_mode & S_IFMT) == S_IFREG else {
        fd.close()
        throw Errno(rawValue: notRegularFileErrno)
    }
    return fd
}

/// The whole of a small regular file inside a bundle (`options.json`, the stamp), read through
/// `openInBundle`; nil when it is missing, unreadable, not a regular file or over `limit` bytes.
func readBundleFile(_ path: String, limit: Int64 = 1 << 20) -> Data? {
    guard let fd = try? openInBundle(path, O_RDONLY) else { return nil }
    defer { fd.close() }
    var data = Data()
    switch FileChunks.read(fd, limit: limit, { data.append(contentsOf: $0) }) {
    case .success(let bytes) where bytes <= limit: return data
    default: return nil
    }
}
