/// Why `pack` or `verify` could not work on its input at all; the commands exit 2 for every case.
public enum BundleError: Error, Sendable, Equatable, CustomStringConvertible {
    case notFound(String)
    case noManifest(String)
    /// `.archiver/` and no manifest yet: the first run is going on, or was killed before its end.
    case unfinished(String)
    case unreadableManifest(path: String, reason: String)
    case unreadableTarball(path: String, reason: String)
    case unreadableFile(path: String, reason: String)
    case cannotWrite(path: String, reason: String)
    /// `images/` is a link or a file: what it leads to is not the bundle's.
    case notADirectory(path: String, found: String)

    /// A stable short name for the failure.
    public var kind: String {
        switch self {
        case .notFound: "not-found"
        case .noManifest: "no-manifest"
        case .unfinished: "unfinished"
        case .unreadableManifest: "unreadable-manifest"
        case .unreadableTarball: "unreadable-tarball"
        case .unreadableFile: "unreadable-file"
        case .cannotWrite: "cannot-write"
        case .notADirectory: "not-a-directory"
        }
    }

    public var description: String {
        switch self {
        case .notFound(let path):
            "\(path) does not exist; give a bundle directory made by 'archiver run' or a tarball made by 'archiver pack'"
        case .noManifest(let path):
            "\(path) holds no manifest.json; is it a bundle made by 'archiver run'?"
        case .unfinished(let path):
            "\(path) has no manifest.json yet: its first run is still going or was stopped before writing one; "
                + "run the same 'archiver run' command again to finish it"
        case .unreadableManifest(let path, let reason):
            "cannot read the manifest in \(path): \(reason)"
        case .unreadableTarball(let path, let reason):
            "cannot read \(path) as a .tar.gz: \(reason)"
        case .unreadableFile(let path, let reason):
            "cannot read \(path): \(reason)"
        case .cannotWrite(let path, let reason):
            "cannot write \(path): \(reason)"
        case .notADirectory(let path, let found):
            "\(path) is \(found), not a directory; a bundle's images are only those in its own images/ directory: replace it with a real one"
        }
    }
}
