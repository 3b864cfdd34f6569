#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// One shard bundle given to `merge`: a directory made by `run --shard`, or its `pack` tarball.
///
/// It is read once (`read`): its images are copied into the merge's staging directory, each
/// file's size and sha256 noted, then its manifest is decoded, item by item, through a
/// `ShardDigest`, which checks every done item against the file copied for it, and into an
/// `ItemSpool` for the pass that writes the merged bundle. A tarball's `manifest.json` comes
/// after `images/` (`pack` sorts by path), so the copy cannot wait for it: its bytes are spooled
/// beside the staged bundle and decoded once the images are in (a tarball is decompressed once,
/// never unpacked whole).
struct ShardBundle: Sendable {
    /// The path as given, for messages.
    let path: String
    let isTarball: Bool
    let catalog: Manifest.CatalogInfo
    let field: ImageField
    let version: Int
    /// What the manifest held, but not its items.
    let digest: ShardDigest
    /// The `ItemSpool` of its manifest's items, for the pass that writes the merged bundle.
    let items: String

    /// What its manifest says of its shard; nil for a bundle of a whole catalog.
    var info: Manifest.ShardInfo? { catalog.shard }

    /// `shard 2/4 (PATH)`, or just the path when it names no shard.
    var name: String { Self.name(path, info) }

    static func name(_ path: String, _ info: Manifest.ShardInfo?) -> String {
        info.map { "shard \($0.index)/\($0.count) (\(path))" } ?? path
    }

    /// Copies the shard's `images/` into `copier`'s directory and reads its manifest (a
    /// tarball's spooled to `spool` on the way, and removed once read) into an item spool at
    /// `items`. Only `images/` and the manifest are looked at: the page and anything else are
    /// rebuilt by `merge`.
    static func read(_ path: String, into copier: ImageCopier, spool: String, items: String) throws(MergeError) -> ShardBundle {
        var copies = ShardDigest.Copies()
        var unexpected = Sample(keeping: ShardDigest.named)
        var manifestPath = spool
        var isTarball = false
        do throws(BundleError) {
            switch BundleLayout.fileKind(atPath: path) {
            case .directory:
                let layout = BundleLayout(root: URL(fileURLWithPath: path))
                try layout.requireManifest()
                manifestPath = layout.manifest.path
                // Paths joined as text: URL.appendingPathComponent was 5% of a merge's CPU.
                let images = layout.images.path + "/"
                let names = try layout.imageNameTable()
                for index in 0..<names.count {
                    let name = names[index]
                    copies.add(name, copier.copy(file: images + name, to: name))
                    if copier.full != nil { break }
                }
            case .regular:
                isTarball = true
                try copyTarball(path, into: copier, spool: spool, copies: &copies, unexpected: &unexpected)
            case .symbolicLink, .other, .missing:
                throw .notFound(path)
            }
        } catch {
            throw .bundle(error)
        }
        if let full = copier.full { throw .destinationFull(output: full.path, reason: full.reason) }
        defer { if isTarball { unlink(spool) } }
        return try digest(
            path, isTarball: isTarball, manifestPath: manifestPath, items: items, copies: copies, unexpected: unexpected)
    }

    /// One pass over a tarball: its images copied, its manifest's bytes written to `spool`.
    private static func copyTarball(
        _ path: String, into copier: ImageCopier, spool: String,
        copies: inout ShardDigest.Copies, unexpected: inout Sample
    ) throws(BundleError) {
        let stream = try TarballReader(path: path)
        var sawManifest = false
        while let header = try stream.next(readingData: false) {
            let entry = header.path
            if entry == BundleLayout.manifestPath, header.isRegularFile {
                guard !sawManifest else { throw .unreadableManifest(path: path, reason: "the tarball holds manifest.json twice") }
                sawManifest = true
                let fd: FileDescriptor
                do {
                    fd = try FileDescriptor.open(spool, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW)
                } catch {
                    throw .cannotWrite(path: spool, reason: error.description)
                }
                defer { fd.close() }
                var failure: Errno?
                try stream.readData { chunk in
                    if failure == nil {
                        do throws(Errno) { try fd.write(all: chunk) } catch { failure = error }
                    }
                }
                if let failure { throw .cannotWrite(path: spool, reason: FileSystemError(.write, path: spool, errno: failure).reason) }
                continue
            }
            guard entry.hasPrefix(BundleLayout.imagesPath + "/") else { continue }
            let name = String(entry.dropFirst(BundleLayout.imagesPath.count + 1))
            if name.isEmpty, header.isDirectory { continue }
            // Dot files are debris, not the bundle's: skipped as a directory's listing skips them
            // (`imageNameTable`), and so is what is under a dot directory, which that never reaches.
            if !name.isEmpty, !BundleLayout.isBundleFileName(name) { continue }
            // A name over NAME_MAX is no file merge could write: counted with the other strays,
            // never kept whole as a failed copy (libarchive reads names of 512 KiB and more).
            guard header.isRegularFile, name.utf8.count <= Int(NAME_MAX), !name.contains("/"), !copies.contains(name) else {
                unexpected.add(entry.clipped)
                continue
            }
            // Larger than any run keeps: no image, and gzip makes a terabyte of zeros small.
            guard header.size <= RunConfiguration.largestMaxBytes else {
                copies.add(name, .failure(ImageCopier.tooLarge))
                continue
            }
            copies.add(name, copier.copy(to: name) { buffer, chunk throws(BundleError) in try stream.read(into: buffer, chunk) })
            if copier.full != nil { return }
        }
        if !sawManifest { throw .noManifest(path) }
    }

    /// Decodes the manifest at `manifestPath` through a digest and into the item spool at `items`.
    private static func digest(
        _ path: String, isTarball: Bool, manifestPath: String, items: String,
        copies: ShardDigest.Copies, unexpected: Sample
    ) throws(MergeError) -> ShardBundle {
        var digest: ShardDigest?
        let spool: ItemSpool.Writer
        do throws(FileSystemError) { spool = try ItemSpool.Writer(path: items) } catch { throw .fileSystem(error) }
        let header: ManifestReader.Header
        do throws(BundleError) {
            let fd = try ManifestReader.open(manifestPath, source: path)
            defer { fd.close() }
            header = try ManifestReader.read(
                source: path,
                pull: { (buffer) throws(Errno) in try fd.read(into: buffer) },
                catalog: { info in
                    if digest == nil { digest = ShardDigest(name: name(path, info.shard), shard: info.shard?.shard, copies: copies) }
                },
                item: { (item) throws(BundleError) in
                    guard digest != nil else {
                        throw .unreadableManifest(path: path, reason: "not a valid manifest.json: its items come before its catalog")
                    }
                    digest!.add(item)
                    spool.add(item)
                })
        } catch {
            throw .bundle(error)
        }
        do throws(FileSystemError) { try spool.finish() } catch { throw .fileSystem(error) }
        guard let catalog = header.catalog, let field = header.field else {
            throw .bundle(.unreadableManifest(path: path, reason: "not a valid manifest.json: no catalog or field"))
        }
        var done = digest ?? ShardDigest(name: name(path, catalog.shard), shard: catalog.shard?.shard, copies: copies)
        done.finish(unexpected: unexpected)
        return ShardBundle(
            path: path, isTarball: isTarball, catalog: catalog, field: field, version: header.version ?? Manifest.currentVersion,
            digest: done, items: items)
    }
}

/// Writes new files into one directory, hashing what it writes; one 64 KiB buffer for all.
final class ImageCopier {
    /// A copied file's size and sha256, held by value (40 bytes, nothing on the heap): merge
    /// keeps one per file until its manifest item comes.
    struct Copied {
        var bytes: Int64
        var sha256: SHA256Digest
    }

    private let directory: FileDescriptor
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
        do {
            directory = try FileDescriptor.open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
        } catch {
            throw FileSystemError(.open, path: path, errno: error)
        }
        self.path = path
    }

    deinit {
        directory.close()
        buffer.deallocate()
    }

    /// Creates `name` (it must not exist) with the bytes `produce` hands to its callback.
    func copy(
        to name: String,
        from produce: (UnsafeMutableRawBufferPointer, (UnsafeRawBufferPointer) throws(ItemError) -> Void) throws(BundleError) -> Void
    ) -> Result<Copied, ItemError> {
        let target = path + "/" + name
        let fd: FileDescriptor
        do {
            fd = try directory.open(at: name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW)
        } catch {
            if error.rawValue == EEXIST { return .failure(.io("is in another shard too")) }
            let failure = FileSystemError(.create, path: target, errno: error)
            noteFull(failure)
            return .failure(ItemError(failure))
        }
        defer { fd.close() }
        let hasher = SHA256Hasher()
        var count: Int64 = 0
        do throws(BundleError) {
            try produce(buffer) { chunk throws(ItemError) in
                hasher.update(chunk)
                count += Int64(chunk.count)
                // No run keeps a larger file: a tarball's entry (or a file) past it is no image,
                // and would otherwise be copied until the disk was full.
                guard count <= RunConfiguration.largestMaxBytes else { throw Self.tooLarge }
                do throws(Errno) {
                    try fd.write(all: chunk)
                } catch {
                    let problem = FileSystemError(.write, path: target, errno: error)
                    noteFull(problem)
                    throw ItemError(problem)
                }
            }
        } catch {
            return .failure(.io(error.description))
        }
        bytes += count
        return .success(Copied(bytes: count, sha256: hasher.digest()))
    }

    /// Why a file over `RunConfiguration.largestMaxBytes` is not copied.
    static let tooLarge = ItemError.io("over \(RunConfiguration.largestMaxBytes) bytes, more than any run keeps")

    /// Copies the regular file at `source` (never through a link) to `name`; one larger than any
    /// run keeps (a sparse file claiming exabytes) is refused before a byte is read.
    func copy(file source: String, to name: String) -> Result<Copied, ItemError> {
        let input: FileDescriptor
        do {
            input = try openInBundle(source, O_RDONLY)
        } catch {
            return .failure(.io(error.rawValue == ELOOP ? "a symbolic link" : error.description))
        }
        defer { input.close() }
        if let info = try? input.status(), Int64(info.st_size) > RunConfiguration.largestMaxBytes { return .failure(Self.tooLarge) }
        return copy(to: name) { buffer, chunk throws(BundleError) in
            while true {
                let n: Int
                do throws(Errno) { n = try input.read(into: buffer) } catch { throw .unreadableFile(path: source, reason: error.description) }
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
