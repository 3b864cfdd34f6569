import Foundation

/// Packs a bundle directory into a reproducible `.tar.gz`: `manifest.json`, `index.html` when
/// present, the gallery's pages, and the regular files of `images/` that the manifest lists for
/// a done item, sorted by path; never `.archiver/`, dot files, or files the manifest does not list
/// (which `verify` would report as unexpected): those are left out and named in the result. A
/// done item's image that is missing or not a regular file (a FIFO, a link: never opened) is not
/// in the tarball either, and is named in the result too: `verify` of the tarball reports it.
///
/// Same content and same `modificationTime` give byte-identical tarballs, so the tarball's
/// sha256 can be published and checked.
public struct BundlePacker: Sendable {
    /// The mtime of every entry, in seconds since 1970 (`SOURCE_DATE_EPOCH`, or 0).
    var modificationTime: Int64

    public init(modificationTime: Int64 = 0) {
        self.modificationTime = modificationTime
    }

    /// What `pack` wrote.
    public struct Result: Sendable, Equatable {
        var output: URL
        /// Tar entries, the `images/` directory included.
        public var entries: Int
        public var images: Int
        public var bytes: Int64
        public var sha256: String
        /// Files in `images/` the manifest does not list for a done item, not packed.
        public var leftOut: [String] = []
        /// Done items' images that are missing or not regular files, so not in the tarball.
        public var notPacked = NotPacked()
    }

    /// How many done items' images could not be packed, and the first few (by path).
    public struct NotPacked: Sendable, Equatable {
        public var count = 0
        public var first: [String] = []
    }

    /// The paths the tarball of `directory` holds, in order (directories end in `/`).
    func entries(of directory: URL) throws(BundleError) -> [String] {
        try plan(directory).paths
    }

    /// The paths to pack, and the files of `images/` left out because no done item lists them.
    private func plan(_ directory: URL) throws(BundleError) -> (paths: [String], leftOut: [String], notPacked: NotPacked) {
        let layout = BundleLayout(root: directory)
        var listed = Set<String>()
        var items = 0, failed = 0
        try layout.readManifest { item in
            items += 1
            if item.status == .failed { failed += 1 }
            if item.status == .done, let path = item.path ?? KeyedStore.relativePath(for: item.id, format: item.format ?? .png) { listed.insert(path) }
        }
        var paths = [BundleLayout.manifestPath]
        var leftOut: [String] = []
        if case .regular = BundleLayout.fileKind(atPath: layout.gallery.path) {
            paths.append(BundleLayout.galleryPath)
        }
        let names = try layout.imageNames()
        var packed = 0
        if case .directory = BundleLayout.fileKind(atPath: layout.images.path) {
            paths.append(BundleLayout.imagesPath + "/")
            for name in names {
                let path = BundleLayout.imagesPath + "/" + name
                guard listed.contains(path) else {
                    leftOut.append(path)
                    continue
                }
                if case .regular = BundleLayout.fileKind(atPath: layout.images.appendingPathComponent(name).path) {
                    paths.append(path)
                    packed += 1
                }
            }
        }
        var notPacked = 0, firstNotPacked: [String] = []
        if packed < listed.count {
            let present = Set(paths)
            for path in listed where !present.contains(path) {
                notPacked += 1
                firstNotPacked.append(path)
            }
            firstNotPacked.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            firstNotPacked = Array(firstNotPacked.prefix(3))
        }
        paths += try layout.pagePaths(items: items, failed: failed)
        return (paths.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }, leftOut, NotPacked(count: notPacked, first: firstNotPacked))
    }

    /// Writes the tarball of `directory` to `output` through a temporary file and a rename.
    @discardableResult
    public func pack(_ directory: URL, to output: URL) throws(BundleError) -> Result {
        let (paths, leftOut, notPacked) = try plan(directory)
        // What a killed pack of the same output left.
        let partial = ".\(output.lastPathComponent).partial-"
        Leftovers.remove(in: output.deletingLastPathComponent().path, prefix: partial, directories: false, legacy: true)
        let temporary = output.deletingLastPathComponent().appendingPathComponent(
            partial + "\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        do throws(BundleError) {
            let writer = try TarballWriter(path: temporary.path, modificationTime: modificationTime)
            for path in paths {
                if path.hasSuffix("/") {
                    try writer.addDirectory(path)
                } else {
                    let file = directory.appendingPathComponent(path).path
                    let fd: FileDescriptor
                    do {
                        fd = try openInBundle(file, O_RDONLY)
                    } catch {
                        throw BundleError.unreadableFile(path: file, reason: FileSystemError(.open, path: file, errno: error).reason)
                    }
                    defer { fd.close() }
                    let info: stat
                    do { info = try fd.status() } catch { throw BundleError.unreadableFile(path: file, reason: error.description) }
                    try writer.addFile(path, size: Int64(info.st_size), from: fd)
                }
            }
            try writer.close()
            let (bytes, sha256) = try Self.digest(of: temporary.path)
            guard rename(temporary.path, output.path) == 0 else {
                throw BundleError.cannotWrite(path: output.path, reason: errnoText())
            }
            return Result(
                output: output, entries: paths.count,
                images: paths.filter { $0.hasPrefix("images/") && !$0.hasSuffix("/") }.count,
                bytes: bytes, sha256: sha256, leftOut: leftOut, notPacked: notPacked)
        } catch {
            unlink(temporary.path)
            throw error
        }
    }

    /// The size and sha256 of the file at `path`, read a piece at a time.
    private static func digest(of path: String) throws(BundleError) -> (Int64, String) {
        let fd: FileDescriptor
        do { fd = try openInBundle(path, O_RDONLY) } catch { throw .unreadableFile(path: path, reason: error.description) }
        defer { fd.close() }
        let hasher = SHA256Hasher()
        switch FileChunks.read(fd, hasher.update) {
        case .success(let bytes): return (bytes, hasher.finish())
        case .failure(let error): throw .unreadableFile(path: path, reason: error.reason)
        }
    }
}
