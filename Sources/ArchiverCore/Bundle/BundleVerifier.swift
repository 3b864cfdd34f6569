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
        let names = try layout.imageNames()
        let images = OpenDirectory(path: layout.images.path)
        var tally = VerificationTally(source: root.path)
        try layout.readManifest { item throws(BundleError) in
            guard let path = tally.count(item) else { return }
            var facts: FileFacts?
            if let images, let name = Self.imageName(path) {
                facts = try FileFacts.read(name, in: images, limit: item.bytes, validator: validator)
            }
            tally.check(item, path: path, facts: facts)
        }
        return tally.report(found: names.map { BundleLayout.imagesPath + "/" + $0 }, strays: [])
    }

    /// Verifies a tarball made by `pack`, streaming its entries; the manifest is spooled to an
    /// unnamed temporary file and read back as a stream.
    func verifyTarball(_ tarball: URL) throws(BundleError) -> VerificationReport {
        let reader = try TarballReader(path: tarball.path)
        var manifest: UnsafeMutablePointer<FILE>?
        defer { if let manifest { fclose(manifest) } }
        // By file name in `images/`: a name of up to 15 bytes (`12345.png`) is kept inline, where
        // a path (`images/12345.png`) would cost a heap object per image.
        var files: [String: FileFacts.Packed] = [:]
        var imageErrors: [String: ItemError] = [:]
        var strays: [String] = []
        let prefix = BundleLayout.imagesPath + "/"
        while let entry = try reader.next(readingData: false) {
            let path = entry.path
            if path == BundleLayout.manifestPath, entry.isRegularFile {
                if let manifest { fclose(manifest) }
                manifest = try spool(reader, tarball: tarball.path)
            } else if path == BundleLayout.galleryPath || (entry.isDirectory && Self.isImagesDirectory(path)) {
                continue
            } else if path.hasPrefix(prefix), !path.dropFirst(prefix.count).contains("/") {
                let name = String(path.dropFirst(prefix.count))
                guard entry.isRegularFile else {
                    files[name] = FileFacts.Packed(FileFacts(isRegularFile: false))
                    continue
                }
                let builder = FileFacts.Builder(validator)
                try reader.readData(builder.feed)
                let facts = builder.finish()
                files[name] = FileFacts.Packed(facts)
                imageErrors[name] = facts.imageError
            } else {
                strays.append(path)
            }
        }
        guard let manifest else { throw .noManifest(tarball.path) }
        rewind(manifest)
        // Which files the manifest lists is marked on their facts rather than kept in a set.
        var tally = VerificationTally(source: tarball.path, tracksListed: false)
        var items = 0, failed = 0
        _ = try ManifestReader.read(descriptor: fileno(manifest), source: tarball.path) { item in
            items += 1
            if item.status == .failed { failed += 1 }
            guard let path = tally.count(item) else { return }
            var facts: FileFacts?
            if path.hasPrefix(prefix) {
                let name = String(path.dropFirst(prefix.count))
                if var packed = files[name] {
                    facts = packed.unpacked(imageError: imageErrors[name])
                    packed.listed = true
                    files[name] = packed
                }
            }
            tally.check(item, path: path, facts: facts)
        }
        let pages = BundleLayout.galleryPagePaths(items: items, failed: failed)
        let unlisted = files.compactMap { $0.value.listed ? nil : prefix + $0.key }
        return tally.report(found: unlisted, strays: strays.filter { !pages.contains($0) })
    }

    /// Copies the current entry's data to an unnamed temporary file.
    private func spool(_ reader: TarballReader, tarball: String) throws(BundleError) -> UnsafeMutablePointer<FILE> {
        guard let file = tmpfile() else { throw .unreadableTarball(path: tarball, reason: "no temporary file: \(errnoText())") }
        var failure: FileSystemError?
        try reader.readData { piece in
            if failure == nil { failure = writeAll(fileno(file), piece, path: "a temporary file") }
        }
        if let failure {
            fclose(file)
            throw .unreadableTarball(path: tarball, reason: failure.description)
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
