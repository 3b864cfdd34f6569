import Foundation

extension BundleLayout {
    /// The gallery's item and failures pages, `DIR/pages/`.
    var pages: URL { root.appendingPathComponent("pages") }

    static let pagesPath = "pages"

    /// The paths of the gallery pages a tarball of this bundle holds, for a manifest of `items`
    /// items of which `failed` failed: `pages/` and those of its pages that are regular files
    /// here; none without `pages/`. Anything but a real directory there is refused.
    func pagePaths(items: Int, failed: Int) throws(BundleError) -> [String] {
        switch Self.fileKind(atPath: pages.path) {
        case .missing: return []
        case .directory: break
        case let kind: throw .notADirectory(path: pages.path, found: kind.noun)
        }
        let names = Gallery.pageNames(items: items, failed: failed).filter {
            if case .regular = Self.fileKind(atPath: pages.appendingPathComponent($0).path) { true } else { false }
        }
        return [Self.pagesPath + "/"] + names.map { Self.pagesPath + "/" + $0 }
    }

    /// Every path of the gallery's pages in a tarball, `pages/` itself included, for a manifest
    /// of `items` items of which `failed` failed.
    static func galleryPagePaths(items: Int, failed: Int) -> Set<String> {
        Set([pagesPath, pagesPath + "/"] + Gallery.pageNames(items: items, failed: failed).map { pagesPath + "/" + $0 })
    }
}
