#if canImport(Glibc)
import Glibc
#endif

/// URL prefix rewrites from `--mirror FROM=TO`: a URL starting with FROM is fetched from TO
/// plus the rest. The longest matching FROM wins.
public struct MirrorMap: Sendable, Equatable {
    var rules: [(from: String, to: String)]

    public init(_ rules: [(from: String, to: String)] = []) {
        self.rules = rules.sorted { $0.from.count > $1.from.count }
    }

    /// Parses one `FROM=TO` argument.
    package static func parseRule(_ text: String) -> (from: String, to: String)? {
        guard let eq = text.firstIndex(of: "=") else { return nil }
        let from = String(text[..<eq]), to = String(text[text.index(after: eq)...])
        guard !from.isEmpty, !to.isEmpty else { return nil }
        return (from, to)
    }

    /// The URL to fetch for a catalog URL. Prefixes are compared byte for byte (a URL is
    /// ASCII, and `String.hasPrefix` compares Unicode characters, which cost a run a few
    /// percent: every record's URL is resolved several times).
    func resolve(_ url: String) -> String {
        for rule in rules where Self.hasBytePrefix(url, rule.from) {
            // One allocation: TO's bytes and the rest of the URL copied into the new string.
            var url = url, to = rule.to
            let skip = rule.from.utf8.count
            return url.withUTF8 { url in
                to.withUTF8 { to in
                    String(unsafeUninitializedCapacity: to.count + url.count - skip) { buffer in
                        _ = UnsafeMutableBufferPointer(rebasing: buffer[..<to.count]).initialize(from: to)
                        _ = UnsafeMutableBufferPointer(rebasing: buffer[to.count...]).initialize(from: url[skip...])
                        return buffer.count
                    }
                }
            }
        }
        return url
    }

    /// Whether `resolve(url)` is `source`, without making the resolved string: the ledger asks
    /// this for every outcome, to keep only the fetched URLs that are not what it resolves to.
    func resolves(_ url: String, to source: String) -> Bool {
        var url = url, source = source
        for rule in rules where Self.hasBytePrefix(url, rule.from) {
            var to = rule.to, from = rule.from
            return url.withUTF8 { url in
                source.withUTF8 { source in
                    to.withUTF8 { to in
                        let rest = url.count - from.utf8.count
                        return source.count == to.count + rest
                            && (to.isEmpty || memcmp(source.baseAddress!, to.baseAddress!, to.count) == 0)
                            && (rest == 0 || memcmp(source.baseAddress! + to.count, url.baseAddress! + (url.count - rest), rest) == 0)
                    }
                }
            }
        }
        return url.withUTF8 { url in
            source.withUTF8 { source in
                url.count == source.count && (url.isEmpty || memcmp(url.baseAddress!, source.baseAddress!, url.count) == 0)
            }
        }
    }

    private static func hasBytePrefix(_ text: String, _ prefix: String) -> Bool {
        var text = text, prefix = prefix
        return text.withUTF8 { text in
            prefix.withUTF8 { prefix in
                prefix.isEmpty || (text.count >= prefix.count && memcmp(text.baseAddress!, prefix.baseAddress!, prefix.count) == 0)
            }
        }
    }

    public static func == (lhs: MirrorMap, rhs: MirrorMap) -> Bool {
        lhs.rules.elementsEqual(rhs.rules) { $0.from == $1.from && $0.to == $1.to }
    }
}
