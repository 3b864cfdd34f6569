#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation

/// Reads a catalog from a file path or fetches it from an http(s) URL (2xx only).
public enum CatalogLoader {
    /// Loads and parses the catalog; blocks the calling thread (call it from the command's main thread).
    public static func load(
        _ source: String, fetcher: any Fetching, options: CatalogOptions, keepStandardInputAt kept: URL? = nil
    ) throws(CatalogError) -> Catalog {
        if source == "-" {
            return try standardInput(kept: kept, options: options)
        }
        let lowered = source.lowercased()
        if lowered.hasPrefix("http://") || lowered.hasPrefix("https://") {
            guard let url = URL(string: source) else { throw .unreadable(source: source, reason: "not a valid URL") }
            let result = Locked<FetchOutcome?>(nil)
            let finished = DispatchSemaphore(value: 0)
            _ = fetcher.fetch(url) { outcome in
                result.withLock { $0 = outcome }
                finished.signal()
            }
            finished.wait()
            switch result.withLock({ $0 }) {
            case .body(let data, _, _)?:
                return try Catalog(source: source, data: data, options: options)
            case .failed(let error, _)?:
                throw .unreadable(source: source, reason: error.description)
            case .cancelled?, .notModified?, nil:  // a plain GET never gets notModified
                throw .unreadable(source: source, reason: "the download was cancelled")
            }
        }
        return try Catalog(source: source, path: source, options: options)
    }

    /// `--catalog -`: standard input, copied to `kept` (in the bundle's state, so a run reads
    /// records back from it and a later run resumes with it); an empty standard input reuses the
    /// copy an earlier run kept.
    static func standardInput(kept: URL?, options: CatalogOptions) throws(CatalogError) -> Catalog {
        guard let kept else { return try Catalog(source: "-", path: "/dev/stdin", options: options) }
        let directory = kept.deletingLastPathComponent().path
        var info = stat()
        if lstat(directory, &info) == 0, (info.st_mode & S_IFMT) != S_IFDIR {
            throw .unreadable(source: "-", reason: "\(directory) is not a directory (a symbolic link?); nothing is written through it")
        }
        // The kept copy is read back by path: a FIFO or device there would block the run forever.
        if lstat(kept.path, &info) == 0, (info.st_mode & S_IFMT) != S_IFREG {
            let found = BundleLayout.fileKind(atPath: kept.path).noun
            throw .unreadable(source: "-", reason: "\(kept.path) is \(found), not a regular file; remove it and run again")
        }
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        guard let copy = Catalog.spool(STDIN_FILENO) else {
            throw .unreadable(source: "-", reason: "cannot copy standard input: \(errnoText())")
        }
        defer { close(copy) }
        var size = stat()
        fstat(copy, &size)
        if size.st_size == 0, access(kept.path, R_OK) == 0 {
            return try Catalog(source: "-", path: kept.path, options: options)
        }
        let temporary = kept.path + ".tmp-\(getpid())"
        let output = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard output >= 0 else { throw .unreadable(source: "-", reason: "cannot write \(temporary): \(errnoText())") }
        var offset: off_t = 0
        while offset < size.st_size {
            let n = sendfile(output, copy, &offset, Int(size.st_size - offset))
            if n < 0, errno == EINTR { continue }
            guard n > 0 else {
                close(output)
                unlink(temporary)
                throw .unreadable(source: "-", reason: "cannot write \(temporary): \(errnoText())")
            }
        }
        close(output)
        guard rename(temporary, kept.path) == 0 else {
            unlink(temporary)
            throw .unreadable(source: "-", reason: "cannot write \(kept.path): \(errnoText())")
        }
        return try Catalog(source: "-", path: kept.path, options: options)
    }
}
