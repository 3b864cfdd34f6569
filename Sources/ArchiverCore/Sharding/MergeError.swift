/// Why `merge` wrote nothing.
public enum MergeError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The shards are not the complete set of one sharded run: missing, repeated, of different
    /// catalogs or options, unfinished. One line each; exit 2.
    case refused([String])
    /// Files that do not match their shard's manifest: a line for each of the first few bad
    /// items and unexpected files of each damaged shard (and one counting the rest), and how
    /// many there are in all; exit 1.
    case damaged(lines: [String], badItems: Int, unexpectedFiles: Int)
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
        case .damaged(let lines, let badItems, let unexpectedFiles):
            lines + ["merge refused: \(Self.counted(badItems: badItems, unexpectedFiles: unexpectedFiles)) in the shards above; nothing written. Rerun or repack the damaged shard"]
        case .bundle(let error): [error.description]
        case .destinationFull(let output, let reason):
            ["cannot write the merged bundle \(output): \(reason); nothing written: free some space there and merge again"]
        case .fileSystem(let error): [error.description]
        }
    }

    public var description: String { lines.joined(separator: "\n") }

    /// `3 bad items and 1 unexpected file`, leaving out a kind there is none of.
    private static func counted(badItems: Int, unexpectedFiles: Int) -> String {
        var parts: [String] = []
        if badItems > 0 || unexpectedFiles == 0 { parts.append("\(badItems) bad item\(badItems == 1 ? "" : "s")") }
        if unexpectedFiles > 0 { parts.append("\(unexpectedFiles) unexpected file\(unexpectedFiles == 1 ? "" : "s")") }
        return parts.joined(separator: " and ")
    }
}
