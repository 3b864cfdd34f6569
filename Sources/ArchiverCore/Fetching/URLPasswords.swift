#if canImport(Glibc)
import Glibc
#endif

/// Passwords taken out of URLs (`https://user:password@host/a.png`) as a run reads them, so
/// that everything the run keeps or shows holds `https://user:***@host/a.png` instead.
///
/// Redaction happens where URLs come in (catalog records, `--catalog URL`, `--mirror`'s TO), so
/// the manifest, the journal, the gallery, `--json`, `status`, progress and error messages never
/// see a password, and resuming, `--refresh`, adoption and `merge` compare redacted URLs with
/// redacted URLs: the form is a pure function of the URL. The fetcher alone puts the password
/// back (`restoring`), in memory, just before libcurl gets the URL. Passwords are kept per
/// scheme, user and host: two different passwords for one user on one host cannot both be used
/// in one run (the last one read wins).
public final class URLPasswords: Sendable, Equatable {
    private let table = Locked<[String: String]>([:])

    public init() {}

    /// What redaction puts where the password was.
    static let mask = "***"

    /// `url` with its password replaced by `***`, the password remembered for `restoring`;
    /// `url` itself when it holds none.
    public func redacting(_ url: String) -> String {
        guard let parts = Self.split(url) else { return url }
        if parts.password != Self.mask {
            table.withLock { $0[parts.key] = String(parts.password) }
        }
        return parts.redacted
    }

    /// `url` with the password `redacting` took out put back; `url` itself otherwise.
    func restoring(_ url: String) -> String {
        guard let parts = Self.split(url), parts.password == Self.mask,
            let password = table.withLock({ $0[parts.key] })
        else { return url }
        return parts.prefix + parts.user + ":" + password + "@" + parts.rest
    }

    /// `url` with any password replaced by `***`, nothing remembered (for URLs a server sent).
    static func redacted(_ url: String) -> String {
        split(url)?.redacted ?? url
    }

    public static func == (lhs: URLPasswords, rhs: URLPasswords) -> Bool { lhs === rhs }

    private struct Parts {
        /// `scheme://`, the user, the password, and the host with everything after it.
        var prefix: Substring, user: Substring, password: Substring, rest: Substring

        var key: String { prefix.lowercased() + user + "@" + rest.prefix { !"/?#".contains($0) }.lowercased() }
        var redacted: String { prefix + user + ":" + URLPasswords.mask + "@" + rest }
    }

    /// The URL's parts around its password; nil when it has none (the common case costs one
    /// scan for `@`, `mayHoldPassword`).
    /// Whether `url` has an `@` at all: without one it holds no password.
    static func mayHoldPassword(_ url: String) -> Bool {
        // memchr over the contiguous bytes: every URL of every catalog read passes here, and the
        // generic `utf8.contains` cost 1% of a run's CPU.
        url.utf8.withContiguousStorageIfAvailable { $0.isEmpty ? false : memchr($0.baseAddress!, 0x40, $0.count) != nil }
            ?? url.utf8.contains(UInt8(ascii: "@"))
    }

    private static func split(_ url: String) -> Parts? {
        guard mayHoldPassword(url), let schemeEnd = url.range(of: "://") else { return nil }
        let authority = url[schemeEnd.upperBound...].prefix { !"/?#".contains($0) }
        guard let at = authority.lastIndex(of: "@") else { return nil }
        let userInfo = authority[..<at]
        guard let colon = userInfo.firstIndex(of: ":") else { return nil }
        return Parts(
            prefix: url[..<schemeEnd.upperBound], user: userInfo[..<colon], password: userInfo[userInfo.index(after: colon)...],
            rest: url[url.index(after: at)...])
    }
}
