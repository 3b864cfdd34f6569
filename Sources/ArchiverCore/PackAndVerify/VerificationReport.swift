/// What `verify` found: the counts, and the problems with done items and the unexpected files,
/// the first `maxNamed` of each kind by name (each path clipped to `String.maxShownBytes`).
public struct VerificationReport: Sendable, Codable, Equatable {
    /// One thing wrong with the bundle.
    public struct Problem: Sendable, Codable, Equatable, CustomStringConvertible {
        /// What is wrong with an item or file.
        enum Kind: String, Sendable, Codable {
            case missing
            case notRegularFile = "not-a-file"
            case sizeMismatch = "size-mismatch"
            case sha256Mismatch = "sha256-mismatch"
            case invalidPNG = "invalid-png"
            case invalidJPEG = "invalid-jpeg"
            case invalidWebP = "invalid-webp"
            case invalidGIF = "invalid-gif"
            /// The file holds no image at all.
            case notImage = "not-image"
            /// The file's bytes are an image of another format than its name and item say.
            case formatMismatch = "format-mismatch"
            case dimensionsMismatch = "dimensions-mismatch"
            case unexpected
            /// The manifest names a file that is not the id's own (`Manifest.isOwnPath`).
            case pathMismatch = "path-mismatch"
        }

        /// The manifest item's id; nil for an unexpected file.
        var id: RecordID?
        var path: String
        var kind: Kind
        /// The one line `verify` prints, e.g. `17: sha256 mismatch (images/17.png)`.
        public var message: String

        init(id: RecordID?, path: String, kind: Kind, detail: String) {
            // A manifest's path or a tarball's entry name is outside input: megabytes, maybe. So
            // is a string id (up to the manifest's 8 MiB an item), and a report names a thousand.
            let path = path.clipped
            self.id = id.map { id in id.text.utf8.count > String.maxShownBytes ? RecordID(id.text.clipped) : id }
            self.path = path
            self.kind = kind
            self.message = id.map { "\($0): \(detail) (\(path))" } ?? "\(detail) \(path)"
        }

        public var description: String { message }
    }

    /// The directory or tarball checked.
    var source: String
    /// Items in the manifest, and of those: done, done and verified, failed, pending.
    var items: Int
    var done: Int
    var verified: Int
    var failed: Int
    var pending: Int
    /// The first `maxNamed` bad items (in the manifest's order), then the first `maxNamed`
    /// unexpected files (in byte order).
    public var problems: [Problem]
    /// Done items with a problem, and files no done item lists: all of them, named or not.
    var badItems: Int
    var unexpectedFiles: Int

    /// Problems of each kind (bad items, unexpected files) a report names; the rest are counted
    /// only: a bundle from outside may hold millions of either, and a report named 200,000
    /// unlisted files at 227 MB.
    static let maxNamed = 1000

    /// Whether every done item checked out and nothing unexpected was found.
    public var ok: Bool { badItems == 0 && unexpectedFiles == 0 }

    /// A line for each kind with problems `problems` does not name, e.g.
    /// `and 500 more unexpected files, not named: verify names the first 1000 of each kind`.
    public var unnamed: [String] {
        let named = problems.count { $0.kind == .unexpected }
        var lines: [String] = []
        for (count, what) in [(badItems - (problems.count - named), "bad item"), (unexpectedFiles - named, "unexpected file")] where count > 0 {
            lines.append("and \(count) more \(what)\(count == 1 ? "" : "s"), not named: verify names the first \(Self.maxNamed) of each kind")
        }
        return lines
    }

    /// The closing line, e.g. `OK: 5000 of 5000 done items verified in DIR (0 failed, 0 pending in the manifest)`.
    public var summary: String {
        let head = ok ? "OK" : "BAD"
        var parts = ["\(verified) of \(done) done items verified in \(source)"]
        if !ok { parts.append("\(badItems) bad, \(unexpectedFiles) unexpected \(unexpectedFiles == 1 ? "file" : "files")") }
        return "\(head): " + parts.joined(separator: "; ") + " (\(failed) failed, \(pending) pending in the manifest)"
    }

    private enum CodingKeys: String, CodingKey {
        case source, items, done, verified, failed, pending, problems, ok, badItems, unexpectedFiles
    }

    /// A report whose counts of bad items and unexpected files are those `problems` names,
    /// unless given.
    init(
        source: String, items: Int, done: Int, verified: Int, failed: Int, pending: Int, problems: [Problem],
        badItems: Int? = nil, unexpectedFiles: Int? = nil
    ) {
        self.source = source
        self.items = items
        self.done = done
        self.verified = verified
        self.failed = failed
        self.pending = pending
        self.problems = problems
        let named = problems.count { $0.kind == .unexpected }
        self.badItems = badItems ?? problems.count - named
        self.unexpectedFiles = unexpectedFiles ?? named
    }

    /// Reads a report, one written before the counts were (every problem named) too.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            source: try c.decode(String.self, forKey: .source), items: try c.decode(Int.self, forKey: .items),
            done: try c.decode(Int.self, forKey: .done), verified: try c.decode(Int.self, forKey: .verified),
            failed: try c.decode(Int.self, forKey: .failed), pending: try c.decode(Int.self, forKey: .pending),
            problems: try c.decode([Problem].self, forKey: .problems),
            badItems: try c.decodeIfPresent(Int.self, forKey: .badItems),
            unexpectedFiles: try c.decodeIfPresent(Int.self, forKey: .unexpectedFiles))
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(source, forKey: .source)
        try c.encode(items, forKey: .items)
        try c.encode(done, forKey: .done)
        try c.encode(verified, forKey: .verified)
        try c.encode(failed, forKey: .failed)
        try c.encode(pending, forKey: .pending)
        try c.encode(problems, forKey: .problems)
        try c.encode(badItems, forKey: .badItems)
        try c.encode(unexpectedFiles, forKey: .unexpectedFiles)
        try c.encode(ok, forKey: .ok)
    }
}
