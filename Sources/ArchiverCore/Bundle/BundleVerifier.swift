import Foundation

/// Checks a bundle directory or a packed tarball against its manifest: every done item's file
/// exists with the recorded size and sha256 and passes the PNG check; files in `images/` that
/// the manifest does not list are unexpected. Failed and pending items are only counted.
public struct BundleVerifier: Sendable {
    public let validator: PNGValidator

    public init(validator: PNGValidator = PNGValidator()) {
        self.validator = validator
    }

    /// What is known about one file in the bundle, gathered before the manifest is at hand
    /// (in a tarball, `images/` comes before `manifest.json`).
    struct FileFacts: Sendable, Equatable {
        var isRegularFile = true
        var bytes: Int64 = 0
        var sha256 = ""
        var image: ImageInfo?
        var imageError: ItemError?
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
    public func verifyDirectory(_ root: URL) throws(BundleError) -> VerificationReport {
        let layout = BundleLayout(root: root)
        let manifest = try layout.readManifest()
        var files: [String: FileFacts] = [:]
        for name in try layout.imageNames() {
            let file = layout.images.appendingPathComponent(name)
            let path = BundleLayout.imagesPath + "/" + name
            guard case .regular = BundleLayout.fileKind(atPath: file.path) else {
                files[path] = FileFacts(isRegularFile: false)
                continue
            }
            do {
                files[path] = facts(about: try Data(contentsOf: file))
            } catch {
                throw .unreadableFile(path: file.path, reason: error.localizedDescription)
            }
        }
        return Self.compare(manifest, files: files, strays: [], source: root.path)
    }

    /// Verifies a tarball made by `pack`, streaming its entries in memory.
    public func verifyTarball(_ tarball: URL) throws(BundleError) -> VerificationReport {
        let reader = try TarballReader(path: tarball.path)
        var manifestData: Data?
        var files: [String: FileFacts] = [:]
        var strays: [String] = []
        while let entry = try reader.next() {
            let path = entry.path
            if path == BundleLayout.manifestPath, entry.isRegularFile {
                manifestData = entry.data
            } else if path == BundleLayout.galleryPath || (entry.isDirectory && Self.isImagesDirectory(path)) {
                continue
            } else if path.hasPrefix(BundleLayout.imagesPath + "/"), !path.dropFirst(7).contains("/") {
                files[path] = entry.isRegularFile ? facts(about: entry.data) : FileFacts(isRegularFile: false)
            } else {
                strays.append(path)
            }
        }
        guard let manifestData else { throw .noManifest(tarball.path) }
        let manifest = try BundleLayout.decodeManifest(manifestData, in: tarball.path)
        let pages = BundleLayout.galleryPagePaths(items: manifest.items.count, failed: manifest.items.count { $0.status == .failed })
        return Self.compare(manifest, files: files, strays: strays.filter { !pages.contains($0) }, source: tarball.path)
    }

    private static func isImagesDirectory(_ path: String) -> Bool {
        path == BundleLayout.imagesPath || path == BundleLayout.imagesPath + "/"
    }

    func facts(about data: Data) -> FileFacts {
        var facts = FileFacts(bytes: Int64(data.count), sha256: SHA256.hex(data))
        do {
            facts.image = try validator.validate(data)
        } catch {
            facts.imageError = error
        }
        return facts
    }

    /// Matches the manifest's items against the files found; pure, so it is tested directly.
    static func compare(
        _ manifest: Manifest, files: [String: FileFacts], strays: [String], source: String
    ) -> VerificationReport {
        var report = VerificationReport(
            source: source, items: manifest.items.count, done: 0, verified: 0, failed: 0, pending: 0, problems: [])
        var listed = Set<String>()
        for item in manifest.items {
            let path = item.path ?? KeyedStore.relativePath(for: item.id)
            switch item.status {
            case .failed: report.failed += 1
            case .pending: report.pending += 1
            case .done:
                report.done += 1
                listed.insert(path)
                if let problem = problem(with: item, path: path, facts: files[path]) {
                    report.problems.append(problem)
                } else {
                    report.verified += 1
                }
            }
        }
        let unexpected = files.keys.filter { !listed.contains($0) } + strays
        for path in unexpected.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
            report.problems.append(.init(id: nil, path: path, kind: .unexpected, detail: "unexpected file"))
        }
        return report
    }

    private static func problem(
        with item: Manifest.Item, path: String, facts: FileFacts?
    ) -> VerificationReport.Problem? {
        func problem(_ kind: VerificationReport.Problem.Kind, _ detail: String) -> VerificationReport.Problem {
            .init(id: item.id, path: path, kind: kind, detail: detail)
        }
        guard let facts else { return problem(.missing, "missing") }
        guard facts.isRegularFile else { return problem(.notRegularFile, "not a regular file") }
        if let bytes = item.bytes, bytes != facts.bytes {
            return problem(.sizeMismatch, "size mismatch: \(facts.bytes) bytes, manifest says \(bytes)")
        }
        if let sha256 = item.sha256, sha256 != facts.sha256 {
            return problem(.sha256Mismatch, "sha256 mismatch")
        }
        if let error = facts.imageError {
            return problem(.invalidPNG, error.description)
        }
        if let image = facts.image, let width = item.width, let height = item.height,
            image.width != width || image.height != height
        {
            return problem(
                .dimensionsMismatch, "dimensions \(image.width)x\(image.height), manifest says \(width)x\(height)")
        }
        return nil
    }
}
