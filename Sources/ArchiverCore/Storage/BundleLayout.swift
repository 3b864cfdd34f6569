import Foundation

/// Where everything lives inside a bundle directory.
public struct BundleLayout: Sendable {
    public let root: URL

    public init(root: URL) {
        self.root = root
    }

    public var images: URL { root.appendingPathComponent("images") }
    public var manifest: URL { root.appendingPathComponent("manifest.json") }
    /// Bookkeeping that is not part of the bundle proper: journal, lock, run options.
    public var state: URL { root.appendingPathComponent(".archiver") }
    public var journal: URL { state.appendingPathComponent("journal") }
    public var lock: URL { state.appendingPathComponent("lock") }
    public var options: URL { state.appendingPathComponent("options.json") }
    /// The catalog read from standard input (`--catalog -`), kept so a later run can resume.
    public var standardInputCatalog: URL { state.appendingPathComponent("catalog") }
}
