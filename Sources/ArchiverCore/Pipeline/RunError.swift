/// Why a run could not start or finish as a whole; the command exits 2 for every case.
public enum RunError: Error, Sendable, Equatable, CustomStringConvertible {
    case catalog(CatalogError)
    case locked(directory: String, pid: Int?)
    case optionsChanged(directory: String, option: String, recorded: String, given: String)
    /// Something the run writes into or through is a link (or not what it must be).
    case unsafeBundle(path: String, found: String, expected: String)
    /// `--out`, or a directory on the way to it, is something other than a directory.
    case notADirectory(path: String, found: String)
    /// `--out` is a non-empty directory that is neither a bundle nor a restored one to adopt.
    case foreignDirectory(path: String, reason: String)
    /// A file or directory of the bundle (the lock, the journal, the manifest, a page, `images/`)
    /// could not be made, opened or written.
    case fileSystem(FileSystemError)
    case openFileLimit(OpenFileLimit.TooLow)
    /// `run` was called a second time on one `Archiver`.
    case alreadyRun

    /// A stable short name for the failure.
    public var kind: String {
        switch self {
        case .catalog: "catalog"
        case .locked: "locked"
        case .optionsChanged: "options-changed"
        case .unsafeBundle: "unsafe-bundle"
        case .notADirectory: "not-a-directory"
        case .foreignDirectory: "not-a-bundle"
        case .fileSystem: "io"
        case .openFileLimit: "open-file-limit"
        case .alreadyRun: "already-run"
        }
    }

    public var description: String {
        switch self {
        case .catalog(let error):
            error.description
        case .locked(let directory, let pid):
            "\(directory) is in use by another archiver run"
                + (pid.map { " (pid \($0))" } ?? "") + "; wait for it to finish or stop it"
        case .optionsChanged(let directory, let option, let recorded, let given):
            "\(directory) was archived with \(option) \(recorded), not \(given); rerun with \(option) \(recorded) or choose another --out"
        case .unsafeBundle(let path, let found, let expected):
            "\(path) is \(found), not \(expected); the archiver never writes through a link or outside the bundle: "
                + "remove it (a run makes a new one) and run again"
        case .notADirectory(let path, let found):
            "\(path) is \(found), not a directory; --out names the bundle directory (made if missing)"
        case .foreignDirectory(let path, let reason):
            "--out \(path) is not a bundle: \(reason); nothing in it was touched: give a new or empty directory, or a bundle"
        case .fileSystem(let error):
            error.description
        case .alreadyRun:
            "this Archiver has already run; make a new one for another run"
        case .openFileLimit(let tooLow):
            tooLow.description
        }
    }
}
