import Foundation

/// Everything one `archiver run` needs, built once from the command line and passed in.
public struct RunConfiguration: Sendable {
    /// The catalog path or http(s) URL, as given.
    public var catalogSource: String = RunConfiguration.defaultCatalog
    /// The bundle directory.
    public var outputDirectory: URL = URL(fileURLWithPath: "archive")
    /// Most requests in flight at once (1...1024).
    public var concurrency: Int = 8
    /// Most requests, and connections, to one host at once; nil for no limit beyond `concurrency`.
    public var perHost: Int?
    /// A PEM CA bundle to verify HTTPS servers with (`--cacert`); nil for the system's.
    public var caFile: String?
    /// Offer HTTP/2 to HTTPS servers (`--http2`).
    public var http2 = false
    /// Headers, user agent, netrc, cookies and proxy of every request, the catalog's too.
    public var request = RequestOptions()
    /// The record key of the image URL (`--field`); `catalog.field` is kept equal to it.
    public var field: ImageField = .url {
        didSet { catalog.field = field }
    }
    /// The catalog's format and keys (`--format`, `--records`, `--id`, `--title`, `--group`).
    public var catalog = CatalogOptions()
    /// Archive only this share of the catalog (`--shard I/N`); nil for all of it.
    public var shard: Shard?
    public var mirrors = MirrorMap()
    public var validation: ValidationMode = .structure
    /// The image formats kept (`--accept`); any other image fails as `unaccepted-format`.
    public var accepted: AcceptedFormats = .all
    /// Extra attempts after a retriable failure.
    public var retries: Int = 3
    /// Seconds one attempt may take, enforced by the archiver.
    public var timeout: Double = 30
    /// Largest body accepted.
    public var maxBytes: Int64 = 50 * 1024 * 1024
    /// The most `--max-bytes` allows (1 TiB less a byte: the ledger keeps a size in 40 bits, and
    /// a file of 2^40 bytes was recorded as 0): no done file of any run is larger, so a manifest
    /// item claiming more (or fewer than 0) bytes is damage, not a size.
    public static let largestMaxBytes: Int64 = 1 << 40 - 1
    /// Longest `Retry-After` the archiver waits for; beyond it the item fails.
    var maxRetryAfter: Double = 120
    /// Redirects followed before an item fails as `too-many-redirects`.
    var maxRedirects: Int = 10
    /// Most requests started a second (`--rate`); nil for no limit.
    public var rate: Double?
    /// Keep earlier failures instead of attempting them again.
    public var skipFailed = false
    /// fsync files and the directory before journaling them.
    public var durable = false
    /// Delete files of records no longer in the catalog.
    public var prune = false
    /// Hash every journaled done file on resume (`--recheck`), not just compare its size, inode and mtime.
    public var recheck = false
    /// Revalidate every done item with a conditional request (`--refresh`): a 304 keeps the file,
    /// new bytes replace it.
    public var refresh = false
    /// Largest image width or height accepted.
    var maxDimension: Int = 16384

    public static let defaultCatalog = "https://jsonplaceholder.typicode.com/photos"
    public static let concurrencyRange = 1...1024

    public init() {}
}
