/// The recorded outcome of one catalog item, as the journal keeps it.
struct ItemRecord: Sendable, Equatable {
    /// Where an item stands: archived, failed with a recorded error, or not attempted yet.
    enum Status: String, Sendable, Codable {
        case done, failed, pending
    }

    var id: RecordID
    /// The catalog URL the outcome belongs to; a changed URL makes the record stale.
    var url: String
    /// The URL actually fetched (after `--mirror`).
    var source: String
    var status: Status
    var bytes: Int64 = 0
    /// The done file's SHA-256; nil for an item not done.
    var sha256: SHA256Digest?
    var width: Int = 0
    var height: Int = 0
    var attempts: Int = 0
    var error: RecordedError?
    /// The done file's inode and mtime when it was written; nil in lines of older versions.
    var file: FileStamp?
    /// The `ETag` and `Last-Modified` the done file was served with (empty when the server sent
    /// none, and in lines of older versions): what `run --refresh` revalidates it with.
    var validators = Validators()
    /// The done file's format, as its bytes said (PNG in lines of older versions).
    var format: ImageFormat = .png
    /// Frames of an animated done file; 1 for a still image.
    var frames: Int = 1

    init(
        id: RecordID, url: String, source: String, status: Status, bytes: Int64 = 0, sha256: SHA256Digest? = nil,
        width: Int = 0, height: Int = 0, attempts: Int = 0, error: RecordedError? = nil, file: FileStamp? = nil,
        validators: Validators = Validators(), format: ImageFormat = .png, frames: Int = 1
    ) {
        self.format = format
        self.frames = frames
        self.validators = validators
        self.id = id
        self.url = url
        self.source = source
        self.status = status
        self.bytes = bytes
        self.sha256 = sha256
        self.width = width
        self.height = height
        self.attempts = attempts
        self.error = error
        self.file = file
    }
}

/// A failure as recorded in the journal and the manifest.
///
/// Journals and manifests are read back from bundles that may be hostile, and a run keeps every
/// failure in memory: a kind no version of the archiver writes is read as `unknown` (the kinds
/// are grouped, counted and given a gallery section each, so a million distinct ones would cost
/// a million groups), and a message is cut to `maxMessageBytes` (one holds its URL, which a
/// catalog may make 4 MiB long, and a dead host fails every record).
struct RecordedError: Sendable, Equatable, Codable {
    var kind: String
    var status: Int?
    var message: String

    /// The longest message kept, in UTF-8 bytes; a longer one is cut there and ends in "...".
    static let maxMessageBytes = 4096

    init(kind: String, status: Int? = nil, message: String) {
        self.kind = ItemError.recordedKinds.contains(kind) ? kind : "unknown"
        self.status = status
        self.message = message.utf8.count > Self.maxMessageBytes ? message.prefix(utf8Bytes: Self.maxMessageBytes) + "..." : message
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            kind: try container.decode(String.self, forKey: .kind), status: try container.decodeIfPresent(Int.self, forKey: .status),
            message: try container.decode(String.self, forKey: .message))
    }

    init(_ error: ItemError) {
        self.init(kind: error.kind, status: error.status, message: error.description)
    }
}
