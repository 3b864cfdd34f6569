#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// One shard bundle given to `merge`: a directory made by `run --shard`, or its `pack` tarball.
struct ShardBundle: Sendable {
    /// The path as given, for messages.
    let path: String
    let isTarball: Bool
    let manifest: Manifest
    /// Of a tarball's `manifest.json`, to see that the copy pass reads the same tarball.
    let manifestSHA256: String

    /// What its manifest says of its shard; nil for a bundle of a whole catalog.
    var info: Manifest.ShardInfo? { manifest.catalog.shard }

    /// `shard 2/4 (PATH)`, or just the path when it names no shard.
    var name: String {
        info.map { "shard \($0.index)/\($0.count) (\(path))" } ?? path
    }

    /// Reads the manifest of a directory, or of a tarball (a pass over it: `pack` puts
    /// `manifest.json` last, and the copy must know the manifest before it starts).
    static func open(_ path: String) throws(BundleError) -> ShardBundle {
        switch BundleLayout.fileKind(atPath: path) {
        case .directory:
            var items: [Manifest.Item] = []
            let header = try BundleLayout(root: URL(fileURLWithPath: path)).readManifest { items.append($0) }
            guard let catalog = header.catalog, let field = header.field else {
                throw .unreadableManifest(path: path, reason: "not a valid manifest.json: no catalog or field")
            }
            let manifest = Manifest(catalog: catalog, field: field, items: items, version: header.version ?? Manifest.currentVersion)
            return ShardBundle(path: path, isTarball: false, manifest: manifest, manifestSHA256: "")
        case .regular:
            let stream = try TarballReader(path: path)
            while let header = try stream.next(readingData: false) {
                guard header.path == BundleLayout.manifestPath, header.isRegularFile else { continue }
                // Streamed as it is decompressed, as a directory's is read: a manifest of a GiB
                // of spaces costs a window, and an item over `ManifestReader.maxValue` is refused.
                let hasher = SHA256Hasher()
                var items: [Manifest.Item] = []
                let read = try ManifestReader.read(
                    source: path,
                    pull: { buffer in
                        let count = stream.read(into: buffer)
                        if count > 0 { hasher.update(UnsafeRawBufferPointer(rebasing: buffer[..<count])) }
                        return count
                    },
                    item: { items.append($0) })
                guard let catalog = read.catalog, let field = read.field else {
                    throw .unreadableManifest(path: path, reason: "not a valid manifest.json: no catalog or field")
                }
                let manifest = Manifest(catalog: catalog, field: field, items: items, version: read.version ?? Manifest.currentVersion)
                return ShardBundle(path: path, isTarball: true, manifest: manifest, manifestSHA256: hasher.finish())
            }
            throw .noManifest(path)
        case .symbolicLink, .other, .missing:
            throw .notFound(path)
        }
    }

    /// Copies the file of every done item into `copier`'s directory, each checked against the
    /// manifest (size and sha256) as it is copied; returns a line per bad item, naming it.
    /// Only `images/` is looked at: the page and anything else are rebuilt by `merge`.
    func copyImages(with copier: ImageCopier) throws(MergeError) -> [String] {
        var expected: [String: Manifest.Item] = [:]
        for item in manifest.items where item.status == .done {
            expected[item.path ?? KeyedStore.relativePath(for: item.id, format: item.format ?? .png) ?? "images/"] = item
        }
        var problems: [String] = []
        var copied = Set<String>()
        func check(_ path: String, _ result: Result<ImageCopier.Copied, ItemError>) {
            guard let item = expected[path] else { return }
            copied.insert(path)
            switch result {
            case .failure(let error): problems.append("\(name): \(item.id): \(error.description) (\(path))")
            case .success(let copied):
                if let bytes = item.bytes, bytes != copied.bytes {
                    problems.append("\(name): \(item.id): size mismatch: \(copied.bytes) bytes, manifest says \(bytes) (\(path))")
                } else if let sha256 = item.sha256, sha256 != copied.sha256 {
                    problems.append("\(name): \(item.id): sha256 mismatch (\(path))")
                }
            }
        }
        func unexpected(_ path: String) {
            problems.append("\(name): unexpected file \(path)")
        }
        do throws(BundleError) {
            if isTarball {
                let stream = try TarballReader(path: path)
                while let header = try stream.next(readingData: false) {
                    let entry = header.path
                    if entry == BundleLayout.manifestPath, header.isRegularFile {
                        let hasher = SHA256Hasher()
                        try stream.readData { hasher.update($0) }
                        if hasher.finish() != manifestSHA256 {
                            throw .unreadableManifest(path: path, reason: "manifest.json changed while merge read the tarball")
                        }
                        continue
                    }
                    guard entry.hasPrefix(BundleLayout.imagesPath + "/") else { continue }
                    let name = entry.dropFirst(BundleLayout.imagesPath.count + 1)
                    if name.isEmpty, header.isDirectory { continue }
                    guard expected[entry] != nil, header.isRegularFile, !name.contains("/"), !copied.contains(entry) else {
                        unexpected(entry)
                        continue
                    }
                    check(entry, copier.copy(to: String(name)) { buffer, chunk throws(BundleError) in try stream.read(into: buffer, chunk) })
                    if copier.full != nil { break }
                }
            } else {
                let layout = BundleLayout(root: URL(fileURLWithPath: path))
                for name in try layout.imageNames() {
                    let entry = BundleLayout.imagesPath + "/" + name
                    guard expected[entry] != nil else {
                        unexpected(entry)
                        continue
                    }
                    check(entry, copier.copy(file: layout.images.appendingPathComponent(name).path, to: name))
                    if copier.full != nil { break }
                }
            }
        } catch {
            throw .bundle(error)
        }
        if let full = copier.full { throw .destinationFull(output: full.path, reason: full.reason) }
        for (path, item) in expected where !copied.contains(path) {
            problems.append("\(name): \(item.id): missing (\(path))")
        }
        return problems.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }
}

/// Writes new files into one directory, hashing what it writes; one 64 KiB buffer for all.
final class ImageCopier {
    struct Copied {
        var bytes: Int64
        var sha256: String
    }

    private let directory: Int32
    private let path: String
    private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 16)
    /// Bytes of every file copied.
    private(set) var bytes: Int64 = 0
    /// Set when the destination ran out of space (ENOSPC, EDQUOT): the copy stops there, and
    /// the merge fails once naming the destination instead of blaming each item of the shard.
    private(set) var full: FileSystemError?

    private func noteFull(_ error: FileSystemError) {
        if error.errno == ENOSPC || error.errno == EDQUOT { full = error }
    }

    init(directory path: String) throws(FileSystemError) {
        directory = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard directory >= 0 else { throw FileSystemError(.open, path: path, errno: errno) }
        self.path = path
    }

    deinit {
        close(directory)
        buffer.deallocate()
    }

    /// Creates `name` (it must not exist) with the bytes `produce` hands to its callback.
    func copy(
        to name: String,
        from produce: (UnsafeMutableRawBufferPointer, (UnsafeRawBufferPointer) throws(ItemError) -> Void) throws(BundleError) -> Void
    ) -> Result<Copied, ItemError> {
        let target = path + "/" + name
        let fd = openat(directory, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            if errno == EEXIST { return .failure(.io("is in another shard too")) }
            let error = FileSystemError(.create, path: target, errno: errno)
            noteFull(error)
            return .failure(ItemError(error))
        }
        defer { close(fd) }
        let hasher = SHA256Hasher()
        var count: Int64 = 0
        do throws(BundleError) {
            try produce(buffer) { chunk throws(ItemError) in
                hasher.update(chunk)
                count += Int64(chunk.count)
                if let problem = writeAll(fd, chunk, path: target) {
                    noteFull(problem)
                    throw ItemError(problem)
                }
            }
        } catch {
            return .failure(.io(error.description))
        }
        bytes += count
        return .success(Copied(bytes: count, sha256: hasher.finish()))
    }

    /// Copies the regular file at `source` (never through a link) to `name`.
    func copy(file source: String, to name: String) -> Result<Copied, ItemError> {
        let input = openInBundle(source, O_RDONLY)
        var info = stat()
        guard input >= 0, fstat(input, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            let reason = input >= 0 ? "not a regular file" : errno == ELOOP ? "a symbolic link" : errnoText()
            if input >= 0 { close(input) }
            return .failure(.io(reason))
        }
        defer { close(input) }
        return copy(to: name) { buffer, chunk throws(BundleError) in
            while true {
                let n = read(input, buffer.baseAddress, buffer.count)
                if n < 0, errno == EINTR { continue }
                guard n >= 0 else { throw .unreadableFile(path: source, reason: errnoText()) }
                if n == 0 { return }
                do throws(ItemError) {
                    try chunk(UnsafeRawBufferPointer(rebasing: buffer[..<n]))
                } catch {
                    throw .cannotWrite(path: source, reason: error.description)
                }
            }
        }
    }
}
