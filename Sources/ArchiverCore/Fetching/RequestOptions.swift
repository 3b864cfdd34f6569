import Foundation

/// What every request of a run carries and how it goes out, spelled as curl's options
/// (`--header`, `--user-agent`, `--netrc`, `--netrc-file`, `--cookie`, `--proxy`, `--noproxy`).
///
/// The fetcher hands it to libcurl once per connection handle, not per request. Nothing here
/// is ever written to the bundle or printed: header values, cookies and netrc passwords are
/// secrets. Credentials stay with the host asked first: libcurl drops them, and custom
/// `Authorization` and `Cookie` headers, on a redirect to another host.
public struct RequestOptions: Sendable, Equatable {
    /// `Name: value` lines sent with every request, checked by `HeaderLine.parse`.
    public var headers: [String] = []
    /// The `User-Agent` sent.
    public var userAgent = "archiver/\(ArchiverVersion.current)"
    /// Read credentials from a netrc file: `netrcFile`, or `~/.netrc` when that is nil.
    public var netrc = false
    public var netrcFile: String?
    /// A Netscape cookies.txt whose cookies are sent to the hosts they name.
    public var cookieFile: String?
    /// The proxy every request goes through; nil lets libcurl read `http_proxy`,
    /// `https_proxy` and `ALL_PROXY`.
    public var proxy: String?
    /// Hosts reached directly, comma-separated (`*` for all); nil lets libcurl read `NO_PROXY`.
    public var noProxy: String?

    public init() {}
}

/// One `--header` line, checked before anything is sent.
package enum HeaderLine {
    /// The line `Name: value` as libcurl sends it, or why it cannot be sent: the name must be
    /// an RFC 9110 token and the value must hold no CR, LF or NUL (which would end the header
    /// and let the rest become a request of its own).
    package static func parse(_ text: String) -> Result<String, HeaderProblem> {
        guard let colon = text.firstIndex(of: ":") else { return .failure(.noColon) }
        let name = text[..<colon]
        let value = text[text.index(after: colon)...].drop(while: { $0 == " " || $0 == "\t" })
        guard !name.isEmpty, name.utf8.allSatisfy(isTokenByte) else { return .failure(.badName(String(name))) }
        guard !value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }) else {
            return .failure(.controlCharacter(String(name)))
        }
        return .success("\(name): \(value)")
    }

    /// The lines of a `--header @FILE`: one header a line; blank lines and lines starting
    /// with `#` are skipped; CR LF line ends are accepted.
    package static func lines(ofFile text: String) -> [String] {
        // Split on any line end: "\r\n" is one Character in Swift, so splitting on "\n" would keep it.
        text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).map(String.init)
            .filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty && !$0.hasPrefix("#") }
    }

    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }
}

/// Why a `--header` line was refused; the description never repeats the value (it may be a secret).
package enum HeaderProblem: Error, Equatable, CustomStringConvertible {
    case noColon
    case badName(String)
    case controlCharacter(String)

    package var description: String {
        switch self {
        case .noColon: "a header is 'Name: value'; this one has no colon"
        case .badName(let name):
            "'\(name.prefix(64))' is no header name (letters, digits and !#$%&'*+-.^_`|~ only)"
        case .controlCharacter(let name): "the value of header '\(name)' holds a CR, LF or NUL"
        }
    }
}
