#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Removes what a killed `merge` or `pack` left beside its output: `.OUT.merging-PID-RAND/` and
/// `.FILE.partial-PID-RAND` (or `.FILE.partial-RAND`, as `pack` named it before it carried its
/// PID), and a killed `run --catalog -`'s copy of standard input (`catalog.tmp-PID-RAND`). Only
/// names of the output's own pattern go, only when the process that made them is dead (or
/// unknown, for the old name), and never through a link: a link of that name is left alone.
enum Leftovers {
    /// Removes the entries of `directory` named `prefix` + `PID-RAND` whose PID is dead, and with
    /// `legacy` also `prefix` + `RAND`; directories only when `directories`, else regular files.
    /// `directory` is the one `--out` or `--output` names a place in, and may be a link to one.
    static func remove(in directory: String, prefix: String, directories: Bool, legacy: Bool = false) {
        OpenDirectory(path: directory)?.forEachName { name in
            guard name.hasPrefix(prefix) else { return }
            let parts = name.dropFirst(prefix.count).split(separator: "-", omittingEmptySubsequences: false)
            guard parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy { ("0"..."9").contains($0) } }) else { return }
            switch parts.count {
            case 2:
                guard let pid = pid_t(parts[0]), pid > 0, pid != getpid(), kill(pid, 0) != 0, errno == ESRCH else { return }
            case 1 where legacy: break
            default: return
            }
            let path = directory + "/" + name
            var info = stat()
            guard lstat(path, &info) == 0, info.st_uid == geteuid() else { return }
            let kind = info.st_mode & S_IFMT
            if directories, kind == S_IFDIR {
                // FileManager removes a tree without following the links inside it.
                try? FileManager.default.removeItem(atPath: path)
            } else if !directories, kind == S_IFREG {
                unlink(path)
            }
        }
    }
}
