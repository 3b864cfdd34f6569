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

    /// The most `--catalog -` reads from standard input (1 GiB: the sample catalog is 1 MB, a
    /// million records about 250 MB); more is refused where it passes the limit.
    package static let maxStandardInputBytes: Int64 = 1 << 30

    /// `--catalog -`: standard input, copied to `kept` (in the bundle's state, so a run reads
    /// records back from it and a later run resumes with it); an empty standard input reuses the
    /// copy an earlier run kept. The input is parsed as it is copied, so bad text is refused in
    /// its first bytes and the copy never grows past `limit`.
    static func standardInput(
        kept: URL?, options: CatalogOptions, input: FileDescriptor = FileDescriptor(rawValue: STDIN_FILENO),
        limit: Int64 = maxStandardInputBytes
    ) throws(CatalogError) -> Catalog {
        guard let kept else { return try Catalog(source: "-", path: "/dev/stdin", options: options) }
        let directory = kept.deletingLastPathComponent().path
        var info = stat()
        if lstat(directory, &info) == 0, (info.st_mode & S_IFMT) != S_IFDIR {
            throw .unreadable(source: "-", reason: "\(directory) is not a directory (a symbolic link?); nothing is written through it")
        }
        // The kept copy is read back by path: a FIFO or device there would block the run forever.
        if lstat(kept.path, &info) == 0, (info.st_mode & S_IFMT) != S_IFREG {
            throw .unreadable(source: "-", reason: "\(kept.path) is not a regular file (a FIFO, device or directory?); remove it and run again")
        }
        // The directories made here go again if the catalog is refused: bad input writes nothing.
        var made: [String] = []
        var missing = directory
        while !missing.isEmpty, missing != "/", access(missing, F_OK) != 0 {
            made.append(missing)
            missing = (missing as NSString).deletingLastPathComponent
        }
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        do throws(CatalogError) {
            return try copyStandardInput(to: kept, options: options, input: input, limit: limit)
        } catch {
            for path in made { rmdir(path) }
            throw error
        }
    }

    /// `standardInput`'s copy into `kept`'s directory, which exists; or the copy an earlier run
    /// kept there, when standard input is empty.
    private static func copyStandardInput(
        to kept: URL, options: CatalogOptions, input: FileDescriptor, limit: Int64
    ) throws(CatalogError) -> Catalog {
        let directory = kept.deletingLastPathComponent().path
        var first = [UInt8](repeating: 0, count: 1 << 16)
        let count: Int
        switch first.withUnsafeMutableBytes({ raw in Result { () throws(Errno) in try input.read(into: raw) } }) {
        case .success(let n): count = n
        case .failure(let error): throw .unreadable(source: "-", reason: "cannot read standard input: \(error)")
        }
        if count == 0 {
            guard access(kept.path, R_OK) == 0 else {
                throw .unreadable(source: "-", reason: "standard input is empty, and \(directory) keeps no copy of an earlier run's to reuse")
            }
            return try Catalog(source: "-", path: kept.path, options: options)
        }
        // The copy is written under a name no other process can guess, created here or not at
        // all: a FIFO planted at a guessable name (`catalog.tmp-PID`, as this was named) took
        // the copy (the run failed reading it back, or blocked once 64 KiB were in it), and a
        // hard link there had its target truncated. A killed run's copy goes once its process has.
        let prefix = kept.lastPathComponent + ".tmp-"
        Leftovers.remove(in: directory, prefix: prefix, directories: false, legacy: true)
        let temporary = directory + "/" + prefix + "\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let output: FileDescriptor
        do {
            output = try FileDescriptor.open(temporary, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW, mode: 0o600)
        } catch {
            throw .unreadable(source: "-", reason: "cannot write \(temporary): \(error)")
        }
        let catalog: Catalog
        do throws(CatalogError) {
            do {
                try output.write(all: first[..<count])
            } catch {
                output.close()
                throw .unreadable(source: "-", reason: FileSystemError(.write, path: temporary, errno: error).description)
            }
            // From here the catalog owns `output`, and closes it if it cannot be made.
            catalog = try Catalog(source: "-", streaming: input, spool: output, copied: Int64(count), limit: limit, options: options)
        } catch {
            unlink(temporary)
            throw error
        }
        guard rename(temporary, kept.path) == 0 else {
            unlink(temporary)
            throw .unreadable(source: "-", reason: "cannot write \(kept.path): \(errnoText())")
        }
        return catalog
    }
}
