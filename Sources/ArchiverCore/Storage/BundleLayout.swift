import Foundation

/// Where everything lives inside a bundle directory.
package struct BundleLayout: Sendable {
    let root: URL

    package init(root: URL) {
        self.root = root
    }

    var images: URL { root.appendingPathComponent("images") }
    var manifest: URL { root.appendingPathComponent("manifest.json") }
    /// Bookkeeping that is not part of the bundle proper: journal, lock, run options.
    var state: URL { root.appendingPathComponent(".archiver") }
    var journal: URL { state.appendingPathComponent("journal") }
    var lock: URL { state.appendingPathComponent("lock") }
    var options: URL { state.appendingPathComponent("options.json") }
    /// The catalog read from standard input (`--catalog -`), kept so a later run can resume.
    package var standardInputCatalog: URL { state.appendingPathComponent("catalog") }
}
