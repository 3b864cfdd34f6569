#if canImport(Glibc)
import Glibc
#endif

/// Adopts a restored bundle: a directory with `manifest.json` and `images/` but no journal (a
/// `pack` tarball unpacked, or a cache that kept only the bundle proper). Before planning, each
/// done item of the manifest whose file has the recorded size and sha256 is journaled done, as
/// the run that wrote it had journaled it (validators included), so it is not fetched again; a
/// missing or different file is left out and fetched. Failed items are journaled failed (tried
/// again, unless `--skip-failed`), pending ones not at all.
///
/// Items are matched to the catalog by the plan as journal lines always are, by id and URL, and
/// their files by their bytes, so the catalog may be read from another path than the one the
/// manifest names (a CI checkout elsewhere). `--field` and `--shard` must be the manifest's, as
/// they must be a journaled bundle's options.
enum BundleAdoption {
    /// Journaled lines are written in batches of this many.
    private static let batch = 4096

    /// Adopts the bundle in `layout` if its journal is absent or empty and it has a manifest;
    /// returns how many done items were adopted (0 when there was nothing to adopt).
    static func adopt(
        layout: BundleLayout, field: ImageField, shard: String?, durable: Bool, log: (String) -> Void
    ) throws(RunError) -> Int {
        var info = stat()
        if lstat(layout.journal.path, &info) == 0, info.st_size > 0 { return 0 }
        let manifestPath = layout.manifest.path
        guard let fd = try? openInBundle(manifestPath, O_RDONLY) else { return 0 }
        defer { fd.close() }
        let journal: Journal
        do {
            journal = try Journal(path: layout.journal.path, durable: durable)
        } catch {
            throw .fileSystem(error)
        }
        let images = OpenDirectory(path: layout.images.path)
        var pending: [ItemRecord] = []
        var adopted = 0, refetch = 0
        var writeError: FileSystemError?
        func flush() {
            guard writeError == nil else { return }
            do { try journal.append(pending) } catch { writeError = error }
            pending.removeAll(keepingCapacity: true)
        }
        let header: ManifestReader.Header
        do throws(BundleError) {
            header = try ManifestReader.read(descriptor: fd, source: manifestPath) { item in
                switch item.status {
                case .done:
                    if let record = verified(item, images: images) {
                        pending.append(record)
                        adopted += 1
                    } else {
                        refetch += 1
                    }
                case .failed:
                    pending.append(
                        ItemRecord(
                            id: item.id, url: item.url, source: item.source, status: .failed, attempts: item.attempts,
                            error: item.error ?? RecordedError(kind: "io", message: "unknown")))
                case .pending:
                    break
                }
                if pending.count >= batch { flush() }
            }
        } catch {
            forget(layout)
            log("not adopting \(manifestPath): \(error.description); every item is fetched")
            return 0
        }
        let manifestShard = header.catalog?.shard.map { "\($0.index)/\($0.count)" }
        if let recorded = header.field, recorded != field {
            forget(layout)
            throw .optionsChanged(
                directory: layout.root.path, option: "--field", recorded: recorded.rawValue, given: field.rawValue)
        }
        if manifestShard != shard {
            forget(layout)
            throw .optionsChanged(
                directory: layout.root.path, option: "--shard", recorded: manifestShard ?? "(none: the whole catalog)",
                given: shard ?? "none")
        }
        flush()
        if let writeError {
            forget(layout)
            throw .fileSystem(writeError)
        }
        log("adopting the bundle in \(layout.root.path) (no journal): \(adopted) done items match their files"
            + (refetch > 0 ? ", \(refetch) do not and are fetched again" : ""))
        return adopted
    }

    /// The done line for `item` if its file is in `images/` with the recorded size and sha256
    /// (hashed 64 KiB at a time; a file of another size is not read).
    private static func verified(_ item: Manifest.Item, images: OpenDirectory?) -> ItemRecord? {
        guard let images, let bytes = item.bytes, let sha256 = item.sha256.flatMap({ SHA256Digest(hex: $0) }), let width = item.width,
            let height = item.height, width > 0, height > 0, let format = Optional(item.format ?? .png),
            item.path == KeyedStore.relativePath(for: item.id, format: format),
            let name = KeyedStore.fileName(for: item.id, format: format)
        else { return nil }
        guard let fd = try? images.openFile(name) else { return nil }
        defer { fd.close() }
        guard let info = try? fd.status(), (info.st_mode & S_IFMT) == S_IFREG, Int64(info.st_size) == bytes else { return nil }
        let hasher = SHA256Hasher()
        guard case .success(let count) = FileChunks.read(fd, limit: bytes, { hasher.update($0) }), count == bytes,
            hasher.digest() == sha256
        else { return nil }
        let stamp = FileStamp(info)
        return ItemRecord(
            id: item.id, url: item.url, source: item.source, status: .done, bytes: bytes, sha256: sha256, width: width,
            height: height, attempts: item.attempts, file: stamp,
            validators: Validators(etag: item.etag, lastModified: item.lastModified), format: format,
            frames: item.frames ?? 1)
    }

    /// Removes a journal adoption began: the directory is left as it was found.
    private static func forget(_ layout: BundleLayout) {
        unlink(layout.journal.path)
    }
}
