#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Checks a bundle directory or a packed tarball against its manifest: every done item's file
/// exists with the recorded size and sha256 and passes its format's check; files in `images/` that
/// the manifest does not list are unexpected. Failed and pending items are only counted.
///
/// Everything streams: the manifest is read an item at a time (`ManifestReader`) and every file
/// a piece at a time (`FileFacts`), so memory does not grow with the bundle's files or their
/// sizes. In a directory a done item's file is checked as its item is read, and one whose size
/// is not the manifest's is not read at all; in a tarball, where `images/` comes before
/// `manifest.json`, each file's facts (not its bytes) are kept until the manifest is read.
public struct BundleVerifier: Sendable {
    let validator: ImageValidator

    /// A verifier with the image checks of `--validate structure`, every format accepted.
    public init() {
        self.init(validator: ImageValidator())
    }

    init(validator: ImageValidator) {
        self.validator = validator
    }

    /// Verifies a directory, or a tarball when `url` is a file.
    public func verify(_ url: URL) throws(BundleError) -> VerificationReport {
        switch BundleLayout.fileKind(atPath: url.path) {
        case .directory: try verifyDirectory(url)
        case .regular: try verifyTarball(url)
        case .symbolicLink, .other, .missing: throw .notFound(url.path)
        }
    }

    /// Verifies the bundle directory `root`, ignoring `.archiver/` and dot files in `images/`.
    func verifyDirectory(_ root: URL) throws(BundleError) -> VerificationReport {
        let layout = BundleLayout(root: root)
        try layout.requireManifest()
        let names = try layout.imageNameTable()
        var listed = [Bool](repeating: false, count: names.count)
        let images = OpenDirectory(path: layout.images.path)
        var tally = VerificationTally(source: root.path)
        let prefix = BundleLayout.imagesPath + "/"
        try layout.readManifest { item throws(BundleError) in
            guard let path = tally.count(item) else { return }
            if path.hasPrefix(prefix), let index = names.index(of: path.dropFirst(prefix.count)) { listed[index] = true }
            var facts: FileFacts?
            if let images, let name = Self.imageName(path) {
                facts = try FileFacts.read(name, in: images, limit: item.bytes, validator: validator)
            }
            tally.check(item, path: path, facts: facts)
        }
        // Counted, and the first few named: images/ may hold millions of files no item lists.
        var unexpected = Sample(keeping: VerificationReport.maxNamed)
        for index in listed.indices where !listed[index] { unexpected.add(prefix + names[index]) }
        return tally.report(unexpected: unexpected)
    }

    /// Verifies a tarball made by `pack`, streaming its entries in two passes: the first spools
    /// `manifest.json` (last in a tarball `pack` makes) to an unnamed temporary file and takes
    /// the names it lists in `images/`; the second keeps the facts of those files only. So memory
    /// follows the manifest, not the tarball: a million entries it does not list cost a count.
    func verifyTarball(_ tarball: URL) throws(BundleError) -> VerificationReport {
        var manifest: UnsafeMutablePointer<FILE>?
        defer { if let manifest { fclose(manifest) } }
        let first = try TarballReader(path: tarball.path)
        while let entry = try first.next(readingData: false) {
            guard entry.path == BundleLayout.manifestPath, entry.isRegularFile else { continue }
            if let manifest { fclose(manifest) }
            manifest = try spool(first, tarball: tarball.path)
        }
        guard let manifest else { throw .noManifest(tarball.path) }
        let prefix = BundleLayout.imagesPath + "/"
        // The names in `images/` that done items list (one with a `/` is never matched: see below).
        var listed = NameTable()
        var items = 0, failed = 0
        rewind(manifest)
        _ = try ManifestReader.read(descriptor: FileDescriptor(rawValue: fileno(manifest)), source: tarball.path) { item throws(BundleError) in
            items += 1
            if item.status == .failed { failed += 1 }
            guard item.status == .done else { return }
            let path = item.path ?? KeyedStore.relativePath(for: item.id, format: item.format ?? .png) ?? "images/"
            if path.hasPrefix(prefix), !listed.append(path.dropFirst(prefix.count)) {
                throw .unreadableManifest(path: tarball.path, reason: NameTable.fullReason)
            }
        }
        listed.sort()
        let pages = BundleLayout.galleryPagePaths(items: items, failed: failed)

        let reader = try TarballReader(path: tarball.path)
        // By index in `listed`: 56 bytes a file.
        var files = [FileFacts.Packed?](repeating: nil, count: listed.count)
        var imageErrors: [Int: ItemError] = [:]
        // Counted, and the first few named, each clipped: libarchive reads names of 512 KiB.
        var strays = Sample(keeping: VerificationReport.maxNamed)
        // A tarball `pack` made holds the listed names in `listed`'s order.
        var next = 0
        while let entry = try reader.next(readingData: false) {
            let path = entry.path
            if (path == BundleLayout.manifestPath && entry.isRegularFile) || path == BundleLayout.galleryPath
                || (entry.isDirectory && Self.isImagesDirectory(path)) || pages.contains(path)
            {
                continue
            } else if path.hasPrefix(prefix), !path.dropFirst(prefix.count).contains("/"),
                let index = listed.index(of: path.dropFirst(prefix.count), hint: next)
            {
                next = index + 1
                guard entry.isRegularFile else {
                    files[index] = FileFacts.Packed(FileFacts(isRegularFile: false))
                    continue
                }
                let builder = FileFacts.Builder(validator)
                try reader.readData(builder.feed)
                let facts = builder.finish()
                files[index] = FileFacts.Packed(facts)
                imageErrors[index] = facts.imageError
            } else {
                strays.add(path.clipped)
            }
        }
        rewind(manifest)
        // Every file kept is one the manifest lists: the others are strays already.
        var tally = VerificationTally(source: tarball.path)
        _ = try ManifestReader.read(descriptor: FileDescriptor(rawValue: fileno(manifest)), source: tarball.path) { item in
            guard let path = tally.count(item) else { return }
            var facts: FileFacts?
            if path.hasPrefix(prefix), let index = listed.index(of: path.dropFirst(prefix.count)) {
                facts = files[index].map { $0.unpacked(imageError: imageErrors[index]) }
            }
            tally.check(item, path: path, facts: facts)
        }
        return tally.report(unexpected: strays)
    }

    /// Copies the current entry's data to an unnamed temporary file.
    private func spool(_ reader: TarballReader, tarball: String) throws(BundleError) -> UnsafeMutablePointer<FILE> {
        guard let file = tmpfile() else { throw .unreadableTarball(path: tarball, reason: "no temporary file: \(errnoText())") }
        let fd = FileDescriptor(rawValue: fileno(file))
        var failure: Errno?
        try reader.readData { piece in
            if failure == nil {
                do throws(Errno) { try fd.write(all: piece) } catch { failure = error }
            }
        }
        if let failure {
            fclose(file)
            throw .unreadableTarball(path: tarball, reason: FileSystemError(.write, path: "a temporary file", errno: failure).description)
        }
        return file
    }

    /// The file name of a manifest path inside `images/`, or nil for any other path.
    static func imageName(_ path: String) -> String? {
        guard path.hasPrefix(BundleLayout.imagesPath + "/") else { return nil }
        let name = String(path.dropFirst(BundleLayout.imagesPath.count + 1))
        return BundleLayout.isBundleFileName(name) && !name.contains("/") ? name : nil
    }

    private static func isImagesDirectory(_ path: String) -> Bool {
        path == BundleLayout.imagesPath || path == BundleLayout.imagesPath + "/"
    }
}
