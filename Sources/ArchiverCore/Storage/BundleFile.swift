#if canImport(Glibc)
import Glibc
#endif

/// Opens a file inside a bundle with `O_NOFOLLOW`: a symbolic link planted at its name fails the
/// open (ELOOP) instead of letting the archiver write, truncate or read the file it points to
/// (a `FileSystemError` of `open` says so).
func openInBundle(_ path: String, _ flags: Int32, mode: mode_t = 0o644) -> Int32 {
    open(path, flags | O_NOFOLLOW | O_CLOEXEC, mode)
}
