/// What `verify` found: every problem with a done item or an unexpected file, and the counts.
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
            self.id = id
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
    public var problems: [Problem]

    /// Whether every done item checked out and nothing unexpected was found.
    public var ok: Bool { problems.isEmpty }

    var unexpectedFiles: Int { problems.filter { $0.kind == .unexpected }.count }
    var badItems: Int { problems.count - unexpectedFiles }

    /// The closing line, e.g. `OK: 5000 of 5000 done items verified in DIR (0 failed, 0 pending in the manifest)`.
    public var summary: String {
        let head = ok ? "OK" : "BAD"
        var parts = ["\(verified) of \(done) done items verified in \(source)"]
        if !ok { parts.append("\(badItems) bad, \(unexpectedFiles) unexpected \(unexpectedFiles == 1 ? "file" : "files")") }
        return "\(head): " + parts.joined(separator: "; ") + " (\(failed) failed, \(pending) pending in the manifest)"
    }

    private enum CodingKeys: String, CodingKey {
        case source, items, done, verified, failed, pending, problems, ok
    }

    init(
        source: String, items: Int, done: Int, verified: Int, failed: Int, pending: Int, problems: [Problem]
    ) {
        self.source = source
        self.items = items
        self.done = done
        self.verified = verified
        self.failed = failed
        self.pending = pending
        self.problems = problems
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            source: try c.decode(String.self, forKey: .source), items: try c.decode(Int.self, forKey: .items),
            done: try c.decode(Int.self, forKey: .done), verified: try c.decode(Int.self, forKey: .verified),
            failed: try c.decode(Int.self, forKey: .failed), pending: try c.decode(Int.self, forKey: .pending),
            problems: try c.decode([Problem].self, forKey: .problems))
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
        try c.encode(ok, forKey: .ok)
    }
}
