import Foundation

/// What the last completed run wrote: `DIR/.archiver/written.json`. A rerun that finds every
/// record done and unchanged, and `manifest.json`, `index.html` and `pages/` still as that run
/// wrote them (sizes, and the number of files in `pages/`), has nothing to rewrite: the same
/// catalog and journal give the same bytes.
struct BundleStamp: Codable, Equatable {
    var catalogSHA256: String
    var field: ImageField
    var manifestBytes: Int64
    var galleryBytes: Int64
    /// Regular files in `pages/`, and their bytes: a page removed, added or cut short shows.
    /// The bytes are clamped at `Int64.max`: sparse files put in `pages/` can each claim 2^63 - 1
    /// bytes, and their sum must not trap the run or merge that stamps the bundle.
    var pageFiles: Int
    var pageBytes: Int64

    /// The stamp for the files now in the bundle, if both exist.
    init?(catalog: Catalog, field: ImageField, layout: BundleLayout) {
        self.init(catalogSHA256: catalog.sha256, field: field, layout: layout)
    }

    /// The same from the catalog's sha256 alone (what `merge` knows of it).
    init?(catalogSHA256: String, field: ImageField, layout: BundleLayout) {
        guard let root = OpenDirectory(path: layout.root.path),
            let manifest = root.size(of: layout.manifest.lastPathComponent),
            let gallery = root.size(of: layout.gallery.lastPathComponent)
        else { return nil }
        self.catalogSHA256 = catalogSHA256
        self.field = field
        manifestBytes = manifest
        galleryBytes = gallery
        (pageFiles, pageBytes) = (0, 0)
        guard let pages = OpenDirectory(path: layout.pages.path, followingLink: false) else { return }
        pages.forEachName { name in
            // Not the temporary files (`.NAME.tmp-...`) of pages a run under way is writing.
            guard !name.hasPrefix("."), let size = pages.size(of: name) else { return }
            pageFiles += 1
            pageBytes.saturatingAdd(size)
        }
    }

    static func path(_ layout: BundleLayout) -> URL {
        layout.state.appendingPathComponent("written.json")
    }

    static func read(_ layout: BundleLayout) -> BundleStamp? {
        readBundleFile(path(layout).path).flatMap { try? JSONDecoder().decode(BundleStamp.self, from: $0) }
    }

    /// Best effort: without a stamp the next run only rewrites the manifest and page.
    func write(_ layout: BundleLayout) {
        try? AtomicFileWriter.write(encoded, to: Self.path(layout).path)
    }

    /// The stamp's bytes, keys sorted; by hand for the same reason as `RunOptions.encoded`.
    var encoded: [UInt8] {
        var out = Array(#"{"catalogSHA256":"#.utf8)
        JSONText.string(catalogSHA256, into: &out)
        out += #","field":"#.utf8
        JSONText.string(field.rawValue, into: &out)
        out += #","galleryBytes":\#(galleryBytes),"manifestBytes":\#(manifestBytes)"#.utf8
        out += #","pageBytes":\#(pageBytes),"pageFiles":\#(pageFiles)}"#.utf8
        return out
    }
}
