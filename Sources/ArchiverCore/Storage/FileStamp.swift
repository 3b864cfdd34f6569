#if canImport(Glibc)
import Glibc
#endif

/// What identifies one written file cheaply: its inode and modification time. A journal line
/// records them so a resumed run notices a file replaced (new inode) or rewritten in place
/// (new mtime) since, with one `stat` and no read.
struct FileStamp: Sendable, Equatable, Hashable {
    var inode: UInt64
    /// Modification time in nanoseconds since 1970.
    var modified: Int64

    init(inode: UInt64, modified: Int64) {
        self.inode = inode
        self.modified = modified
    }

    init(_ info: stat) {
        inode = UInt64(info.st_ino)
        modified = Int64(info.st_mtim.tv_sec) &* 1_000_000_000 &+ Int64(info.st_mtim.tv_nsec)
    }
}
