/// Why one catalog item could not be archived.
///
/// Every case has a stable `kind` (recorded in the manifest and journal) and a one-line
/// `description` a user can act on.
public enum ItemError: Error, Sendable, Equatable, CustomStringConvertible {
    case httpStatus(Int, url: String)
    case timeout(seconds: Int, url: String)
    case network(String, url: String)
    /// The host's name did not resolve, or it refused or failed the connection: recorded as
    /// `network`, and counted towards the host being down (`HostHealth`).
    case unreachable(String, url: String)
    /// The host is down for the rest of the run (`HostHealth`): the URL was not tried again.
    case hostDown(host: String, reason: String, url: String)
    case tls(String, url: String)
    case truncated(expected: Int64, received: Int64, url: String)
    case tooLarge(limit: Int64, url: String)
    case tooManyRedirects(url: String)
    /// A response header line over libcurl's limit (`limit` bytes).
    case headerTooLarge(limit: Int, url: String)
    /// The URL (or one it redirected to, as `url` says) is at a link-local address.
    case forbiddenAddress(url: String)
    /// A 401 or 403: the server wants credentials the run did not give (or gave wrong).
    case unauthorized(Int, url: String)
    /// The body is no image at all (HTML, JSON, empty...).
    case notImage(String)
    /// An image in a format `--accept` leaves out.
    case unacceptedFormat(ImageFormat, accepted: String)
    /// An image of `format` that is broken (cut short, a bad checksum, corrupt data, a bomb).
    case invalidImage(ImageFormat, String)
    /// The body's SHA-256 is not the one the catalog gives (`--sha256 KEY`).
    case checksumMismatch(expected: String, actual: String, url: String)
    case invalidURL(String)
    case unsafeKey(String)
    case io(String)

    /// A file the item needed could not be written: recorded as `io`, with the failure's message.
    init(_ error: FileSystemError) {
        self = .io(error.description)
    }

    /// The stable short name of the failure, as recorded in the manifest.
    public var kind: String {
        switch self {
        case .httpStatus: "http-status"
        case .timeout: "timeout"
        case .network, .unreachable: "network"
        case .hostDown: "host-down"
        case .tls: "tls"
        case .truncated: "truncated"
        case .tooLarge: "too-large"
        case .tooManyRedirects: "too-many-redirects"
        case .headerTooLarge: "header-too-large"
        case .forbiddenAddress: "forbidden-address"
        case .unauthorized: "unauthorized"
        case .notImage: "not-image"
        case .unacceptedFormat: "unaccepted-format"
        case .invalidImage(let format, _): "invalid-" + format.rawValue
        case .checksumMismatch: "checksum-mismatch"
        case .invalidURL: "invalid-url"
        case .unsafeKey: "unsafe-key"
        case .io: "io"
        }
    }

    /// Every kind the archiver records or has recorded (`not-png` before other formats were
    /// accepted), and `unknown`, which stands for any other a journal or manifest holds.
    static let recordedKinds: Set<String> = Set(
        [
            "http-status", "timeout", "network", "host-down", "tls", "truncated", "too-large", "too-many-redirects",
            "header-too-large", "forbidden-address", "unauthorized", "not-image", "unaccepted-format", "checksum-mismatch",
            "invalid-url", "unsafe-key", "io", "not-png", "unknown",
        ] + ImageFormat.allCases.map { "invalid-" + $0.rawValue })

    /// The HTTP status for `http-status` failures.
    var status: Int? {
        if case .httpStatus(let code, _) = self { return code }
        if case .unauthorized(let code, _) = self { return code }
        return nil
    }

    /// Whether another attempt at the same URL may succeed.
    var isRetriable: Bool {
        switch self {
        case .httpStatus(let code, _): [408, 429, 500, 502, 503, 504].contains(code)
        case .timeout, .network, .unreachable, .truncated: true
        default: false
        }
    }

    public var description: String {
        switch self {
        case .httpStatus(let code, let url): "HTTP \(code) from \(url)"
        case .timeout(let seconds, let url): "no complete answer within \(seconds) s from \(url)"
        case .network(let reason, let url), .unreachable(let reason, let url): "network error from \(url): \(reason)"
        case .hostDown(let host, let reason, let url):
            "host \(host) is down (\(reason)), not tried again for \(url); a rerun tries it again"
        case .tls(let reason, let url):
            "TLS error from \(url): \(reason) (a server with a private CA needs --cacert FILE)"
        case .truncated(let expected, let received, let url):
            "body cut short: \(received) of \(expected) bytes from \(url)"
        case .tooLarge(let limit, let url): "body larger than \(limit) bytes from \(url) (raise --max-bytes)"
        case .tooManyRedirects(let url): "too many redirects from \(url)"
        case .headerTooLarge(let limit, let url): "a response header line over \(limit) bytes from \(url)"
        case .forbiddenAddress(let url):
            "\(url) is at a link-local address (169.254.0.0/16 or fe80::/10, where clouds serve instance"
                + " credentials); the archiver never connects there"
        case .unauthorized(let code, let url):
            "HTTP \(code) from \(url): the server wants credentials (--header, --netrc-file, --cookie, or user:password@ in the URL)"
        case .notImage(let reason): "not an image: \(reason)"
        case .unacceptedFormat(let format, let accepted):
            "body is a \(format.displayName), which --accept \(accepted) leaves out"
        case .invalidImage(let format, let reason): "broken \(format.displayName): \(reason)"
        case .checksumMismatch(let expected, let actual, let url):
            "sha256 \(actual) from \(url) is not the catalog's \(expected)"
        case .invalidURL(let url): "not an http(s) URL: \(url)"
        case .unsafeKey(let reason): "no safe file name for \(reason)"
        case .io(let reason): "write failed: \(reason)"
        }
    }
}
