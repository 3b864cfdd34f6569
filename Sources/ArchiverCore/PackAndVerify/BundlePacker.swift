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
        /// Files in `images/` the manifest does not list for a done item, not packed: how many,
        /// and the first few by bytes (a directory may hold millions).
        public var leftOut = Sample(keeping: named)
        /// Done items' images that are missing or not regular files, so not in the tarball.
        public var notPacked = Sample(keeping: named)
    }

    /// How many paths of each kind `pack` names (each clipped to 1 KiB); the rest are counted.
    static let named = 3

    /// Calls `body` with each path the tarball of `directory` holds, in order (directories end
    /// in `/`), one at a time: a list of them would hold a `String` for each of a million images.
    func forEachEntry(of directory: URL, _ body: (String) throws(BundleError) -> Void) throws(BundleError) {
        try plan(directory).forEachPath(body)
    }

    /// What to pack: the paths other than images', and the names in `images/` to pack, both
    /// sorted by bytes (a million image paths as `String`s cost pack 250 MiB at its peak).
    private struct Plan {
        var others: [String] = []
        var names = NameTable()
        /// Indices into `names` of the images to pack, in order.
        var packed: [UInt32] = []
        var leftOut = Sample(keeping: named)
        var notPacked = Sample(keeping: named)

        /// Every path in the tarball's order: the images' follow `images/`, which no other path
        /// but the directory itself starts with.
        func forEachPath(_ body: (String) throws(BundleError) -> Void) throws(BundleError) {
            let prefix = BundleLayout.imagesPath + "/"
            var others = others[...]
            while let path = others.first, !prefix.utf8.lexicographicallyPrecedes(path.utf8) {
                try body(path)
                others.removeFirst()
            }
            for index in packed { try body(prefix + names[Int(index)]) }
            for path in others { try body(path) }
        }
    }

    /// The paths to pack, the files of `images/` left out because no done item lists them, and
    /// the done items' images that are not there to pack.
    ///
    /// The manifest's names in `images/` and the directory's are each sorted by bytes, then
    /// walked side by side.
    private func plan(_ directory: URL) throws(BundleError) -> Plan {
        let layout = BundleLayout(root: directory)
        let prefix = BundleLayout.imagesPath + "/"
        // Listed paths other than a name in `images/` (`images/` itself, a path elsewhere): a
        // table, as a hostile manifest may list millions.
        var listedOthers = NameTable()
        var listed = NameTable()
        var items = 0, failed = 0
        try layout.readManifest { item throws(BundleError) in
            items += 1
            if item.status == .failed { failed += 1 }
            if item.status == .done, let path = item.path ?? KeyedStore.relativePath(for: item.id, format: item.format ?? .png) {
                if path.hasPrefix(prefix), path.utf8.count > prefix.utf8.count {
                    guard listed.append(path.dropFirst(prefix.count)) else {
                        throw .unreadableManifest(path: layout.manifest.path, reason: NameTable.fullReason)
                    }
                } else {
                    guard listedOthers.append(path[...]) else {
                        throw .unreadableManifest(path: layout.manifest.path, reason: NameTable.fullReason)
                    }
                }
            }
        }
        listed.sort()
        var plan = Plan(others: [BundleLayout.manifestPath])
        if case .regular = BundleLayout.fileKind(atPath: layout.gallery.path) {
            plan.others.append(BundleLayout.galleryPath)
        }
        plan.names = try layout.imageNameTable()
        var notPacked: [String] = []
        var notPackedCount = 0
        func notPackedImage(_ index: Int) {
            notPackedCount += 1
            if notPacked.count < Self.named { notPacked.append((prefix + listed[index]).clipped) }
        }
        var next = 0
        if case .directory = BundleLayout.fileKind(atPath: layout.images.path), let images = OpenDirectory(path: layout.images.path) {
            plan.others.append(prefix)
            for index in 0..<plan.names.count {
                while next < listed.count, listed.compare(next, with: index, of: plan.names) < 0 {
                    notPackedImage(next)
                    next += 1
                }
                guard next < listed.count, listed.compare(next, with: index, of: plan.names) == 0 else {
                    plan.leftOut.add((prefix + plan.names[index]).clipped)
                    continue
                }
                if images.kind(of: listed[next])?.isRegular == true {
                    plan.packed.append(UInt32(index))
                } else {
                    notPackedImage(next)
                }
                next += 1
            }
        }
        while next < listed.count {
            notPackedImage(next)
            next += 1
        }
        listedOthers.sort()
        var othersNotPacked = 0
        for index in 0..<listedOthers.count where index == 0 || listedOthers.compare(index, with: index - 1, of: listedOthers) != 0 {
            let path = listedOthers[index]
            guard !plan.others.contains(path) else { continue }
            notPackedCount += 1
            // Sorted already: the first few are all that can be among the first few overall.
            if othersNotPacked < Self.named { notPacked.append(path.clipped) }
            othersNotPacked += 1
        }
        notPacked.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        plan.notPacked = Sample(keeping: Self.named, count: notPackedCount, first: notPacked)
        plan.others += try layout.pagePaths(items: items, failed: failed)
        plan.others.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        return plan
    }

    /// Writes the tarball of `directory` to `output` through a temporary file and a rename.
    @discardableResult
    public func pack(_ directory: URL, to output: URL) throws(BundleError) -> Result {
        let plan = try plan(directory)
        // What a killed pack of the same output left.
        let partial = ".\(output.lastPathComponent).partial-"
        Leftovers.remove(in: output.deletingLastPathComponent().path, prefix: partial, directories: false, legacy: true)
        let temporary = output.deletingLastPathComponent().appendingPathComponent(
            partial + "\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        do throws(BundleError) {
            let writer = try TarballWriter(path: temporary.path, modificationTime: modificationTime)
            try plan.forEachPath { path throws(BundleError) in
                if path.hasSuffix("/") {
                    try writer.addDirectory(path)
                } else {
                    let file = directory.appendingPathComponent(path).path
                    let fd: FileDescriptor
                    do throws(Errno) {
                        fd = try openInBundle(file, O_RDONLY)
                    } catch {
                        throw BundleError.unreadableFile(path: file, reason: FileSystemError(.open, path: file, errno: error).reason)
                    }
                    defer { fd.close() }
                    let info: stat
                    do throws(Errno) { info = try fd.status() } catch { throw BundleError.unreadableFile(path: file, reason: error.description) }
                    try writer.addFile(path, size: Int64(info.st_size), from: fd)
                }
            }
            try writer.close()
            let (bytes, sha256) = try Self.digest(of: temporary.path)
            guard rename(temporary.path, output.path) == 0 else {
                throw BundleError.cannotWrite(path: output.path, reason: errnoText())
            }
            return Result(
                output: output, entries: plan.others.count + plan.packed.count, images: plan.packed.count,
                bytes: bytes, sha256: sha256, leftOut: plan.leftOut, notPacked: plan.notPacked)
        } catch {
            unlink(temporary.path)
            // The user named the output, not the hidden file written first.
            if case .cannotWrite(temporary.path, let reason) = error { throw .cannotWrite(path: output.path, reason: reason) }
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
