/// Why `merge` wrote nothing.
public enum MergeError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The shards are not the complete set of one sharded run: missing, repeated, of different
    /// catalogs or options, unfinished. One line each; exit 2.
    case refused([String])
    /// Files that do not match their shard's manifest, one line per bad item; exit 1.
    case damaged([String])
    /// A shard or the output could not be read or written at all; exit 2.
    case bundle(BundleError)
    /// The destination's file system is full (ENOSPC, EDQUOT): no shard is to blame; exit 2.
    case destinationFull(output: String, reason: String)
    /// A file of the new bundle could not be written; exit 2.
    case fileSystem(FileSystemError)

    /// A stable short name for the failure.
    public var kind: String {
        switch self {
        case .refused: "refused"
        case .damaged: "damaged"
        case .bundle(let error): error.kind
        case .fileSystem: "io"
        case .destinationFull: "no-space"
        }
    }

    /// Lines for stderr.
    public var lines: [String] {
        switch self {
        case .refused(let lines): lines
        case .damaged(let lines):
            lines + ["merge refused: \(lines.count) bad item\(lines.count == 1 ? "" : "s") in the shards above; nothing written. Rerun or repack the damaged shard"]
        case .bundle(let error): [error.description]
        case .destinationFull(let output, let reason):
            ["cannot write the merged bundle \(output): \(reason); nothing written: free some space there and merge again"]
        case .fileSystem(let error): [error.description]
        }
    }

    public var description: String { lines.joined(separator: "\n") }
}
