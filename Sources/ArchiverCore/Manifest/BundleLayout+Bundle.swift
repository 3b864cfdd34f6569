import Foundation

extension BundleLayout {
    /// The gallery page, `DIR/index.html`.
    var gallery: URL { root.appendingPathComponent("index.html") }

    /// The bundle's top-level files, as paths inside a tarball.
    static let manifestPath = "manifest.json"
    static let galleryPath = "index.html"
    static let imagesPath = "images"

    /// Whether a name inside `images/` is part of the bundle; dot files are temporary debris.
    static func isBundleFileName(_ name: String) -> Bool {
        !name.isEmpty && !name.hasPrefix(".")
    }

    /// What sits at `path` itself (a link is not followed): a regular file (with its size), a
    /// directory, a symbolic link, something else, or nothing.
    static func fileKind(atPath path: String) -> FileKind {
        var info = stat()
        guard lstat(path, &info) == 0 else { return .missing }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return .regular(size: Int64(info.st_size))
        case S_IFDIR: return .directory
        case S_IFLNK: return .symbolicLink
        default: return .other
        }
    }

    enum FileKind: Equatable {
        case regular(size: Int64)
        case directory
        case symbolicLink
        case other
        case missing

        /// What it is, for a message: "a symbolic link".
        var noun: String {
            switch self {
            case .regular: "a file"
            case .directory: "a directory"
            case .symbolicLink: "a symbolic link"
            case .other: "a special file"
            case .missing: "missing"
            }
        }
    }

    /// The names in `images/` that belong to the bundle, sorted by their UTF-8 bytes; none when
    /// there is no `images/`. Anything but a real directory there (a link to one elsewhere) is
    /// refused: its files are not the bundle's. Read with `readdir` into a `NameTable`: a million
    /// names at about 18 bytes each, where `String`s cost several times that. Sorted because
    /// `pack` writes them in that order and `verify` and `merge` walk them beside the manifest's.
    func imageNameTable() throws(BundleError) -> NameTable {
        var names = NameTable()
        guard try hasImagesDirectory() else { return names }
        let directory: OpenDirectory
        do {
            directory = try OpenDirectory(opening: images.path, followingLink: false)
        } catch {
            throw .unreadableFile(path: images.path, reason: error.description)
        }
        let failure = try directory.forEachEntry { (name) throws(BundleError) in
            // Only a name that starts with a dot can fail the check (dot files).
            if name.first == UInt8(ascii: "."), !Self.isBundleFileName(String(decoding: name, as: UTF8.self)) { return }
            guard names.append(name) else { throw .unreadableFile(path: images.path, reason: NameTable.fullReason) }
        }
        if let failure { throw .unreadableFile(path: images.path, reason: failure.description) }
        names.sort()
        return names
    }

    /// Whether `images/` is there: false when it is missing; throws when it is not a directory.
    private func hasImagesDirectory() throws(BundleError) -> Bool {
        switch Self.fileKind(atPath: images.path) {
        case .missing: return false
        case .directory: return true
        case let kind: throw .notADirectory(path: images.path, found: kind.noun)
        }
    }

    /// Throws unless `root` is a directory holding a `manifest.json` file; one holding only
    /// `.archiver/` is a bundle whose first run has not ended.
    func requireManifest() throws(BundleError) {
        guard case .directory = Self.fileKind(atPath: root.path) else { throw .notFound(root.path) }
        guard case .regular = Self.fileKind(atPath: manifest.path) else {
            if case .directory = Self.fileKind(atPath: state.path) { throw .unfinished(root.path) }
            throw .noManifest(root.path)
        }
    }

    /// Streams `manifest.json`'s items to `item` (see `ManifestReader`), or says why it cannot.
    @discardableResult
    func readManifest(item: (Manifest.Item) throws(BundleError) -> Void = { _ in }) throws(BundleError) -> ManifestReader.Header {
        try requireManifest()
        let fd = try ManifestReader.open(manifest.path, source: root.path)
        defer { fd.close() }
        return try ManifestReader.read(descriptor: fd, source: root.path, item: item)
    }
}
