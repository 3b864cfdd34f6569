#if canImport(Glibc)
import Glibc
#endif
import Foundation

extension BundleLayout {
    /// What a restored bundle may hold at its top: what `pack` puts in a tarball.
    private static let bundleNames: Set<String> = ["manifest.json", "index.html", "images", "pages"]

    /// Refuses a `--out` that is a non-empty directory of someone's own files: one with no
    /// `.archiver/` (so no run made it) that is not a restored bundle to adopt either (only the
    /// names `pack` writes, and a `manifest.json` that starts as the archiver writes one). A run
    /// would overwrite its `index.html` and `manifest.json` and add `images/` and `pages/`;
    /// refused before anything in it is touched. A missing or empty directory is fine.
    package func refuseForeignDirectory() throws(RunError) {
        // A link in the bundle is the more precise complaint, and the one a run makes first.
        if let unsafe = unsafePlace() {
            throw .unsafeBundle(path: unsafe.path, found: unsafe.found, expected: unsafe.expected)
        }
        // `--out` itself may be a link its user made: what counts is the directory it leads to
        // (the run writes there), so the root is followed, as nothing inside it is.
        var info = stat()
        guard stat(root.path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else { return }
        if lstat(state.path, &info) == 0 { return }
        guard let directory = OpenDirectory(path: root.path) else { return }
        // Walked, not listed: it may hold millions. What is kept: whether it holds anything, the
        // manifest, and how many names are not the bundle's with the first three by `<`.
        var isEmpty = true, hasManifest = false
        var foreign = 0, firstForeign: [String] = []
        directory.forEachName { name in
            isEmpty = false
            if name == Self.manifestPath { hasManifest = true }
            guard !Self.bundleNames.contains(name) else { return }
            foreign += 1
            firstForeign.insert(name, at: firstForeign.firstIndex { name < $0 } ?? firstForeign.endIndex)
            if firstForeign.count > 3 { firstForeign.removeLast() }
        }
        if isEmpty { return }
        if foreign > 0 {
            let shown = firstForeign.joined(separator: ", ") + (foreign > 3 ? ", ..." : "")
            throw .foreignDirectory(path: root.path, reason: "it holds files of its own (\(shown))")
        }
        guard hasManifest else {
            throw .foreignDirectory(path: root.path, reason: "it has no manifest.json")
        }
        guard startsAsArchiverManifest() else {
            throw .foreignDirectory(path: root.path, reason: "its manifest.json is not one the archiver wrote")
        }
    }

    /// Whether `manifest.json` is a regular file that opens as the archiver writes one: `{` and
    /// the key `"catalog"` first (keys are sorted).
    private func startsAsArchiverManifest() -> Bool {
        guard let fd = try? openInBundle(manifest.path, O_RDONLY) else { return false }
        defer { fd.close() }
        var head = [UInt8](repeating: 0, count: 64)
        guard let count = head.withUnsafeMutableBytes({ try? fd.read(into: $0) }), count > 0 else { return false }
        let significant = head[..<count].filter { ![0x20, 0x0A, 0x0D, 0x09].contains($0) }
        return significant.starts(with: Array("{\"catalog\":".utf8))
    }
}
