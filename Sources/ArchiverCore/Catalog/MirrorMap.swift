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

    /// The URL to fetch for a catalog URL: `rewrite(url, by: rule(for: url))`.
    func resolve(_ url: String) -> String {
        rewrite(url, by: rule(for: url))
    }

    /// The index in `rules` of the rule `url` takes (the longest matching FROM), or nil. Prefixes
    /// are compared byte for byte: a URL is ASCII, and `String.hasPrefix` compares Unicode
    /// characters, which cost a run a few percent.
    func rule(for url: String) -> Int? {
        rules.firstIndex { Self.hasBytePrefix(url, $0.from) }
    }

    /// `url` with rule `index`'s FROM replaced by its TO (`url` itself for nil). `index` is
    /// what `rule(for: url)` returned; if that rule does not fit `url` (a catalog edited under
    /// the run, which then ends with an error), the rules are matched again rather than the URL cut.
    func rewrite(_ url: String, by index: Int?) -> String {
        guard let index = fitting(index, url) else { return url }
        // One allocation: TO's bytes and the rest of the URL copied into the new string.
        var url = url, to = rules[index].to
        let skip = rules[index].from.utf8.count
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

    /// Whether `rewrite(url, by: index)` is `source`, without making the string.
    func rewrites(_ url: String, by index: Int?, to source: String) -> Bool {
        var url = url, source = source
        guard let index = fitting(index, url) else {
            return url.withUTF8 { url in
                source.withUTF8 { source in
                    url.count == source.count && (url.isEmpty || memcmp(url.baseAddress!, source.baseAddress!, url.count) == 0)
                }
            }
        }
        var to = rules[index].to
        let skip = rules[index].from.utf8.count
        return url.withUTF8 { url in
            source.withUTF8 { source in
                to.withUTF8 { to in
                    let rest = url.count - skip
                    return source.count == to.count + rest
                        && (to.isEmpty || memcmp(source.baseAddress!, to.baseAddress!, to.count) == 0)
                        && (rest == 0 || memcmp(source.baseAddress! + to.count, url.baseAddress! + skip, rest) == 0)
                }
            }
        }
    }

    /// `index` if its rule's FROM starts `url`, otherwise the rule `url` takes.
    private func fitting(_ index: Int?, _ url: String) -> Int? {
        guard let index else { return nil }
        return Self.hasBytePrefix(url, rules[index].from) ? index : rule(for: url)
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

/// Which `--mirror` rule each record's URL takes, chosen once per record (by the plan) and kept
/// in a byte per record, so the URL to fetch is made where it is needed (the request, the
/// manifest's `source`) without matching the rules again. Without rules it holds nothing and
/// every URL is fetched as it is.
struct MirrorChoices: Sendable {
    let map: MirrorMap
    /// By catalog position: 0 for no rule, 1 to 254 for rule 0 to 253; 255 (a rule past the
    /// 254th, or a position never chosen) for "match the rules again".
    private var choices: [UInt8]

    private static let unknown: UInt8 = 255

    /// No choice made yet for any of `count` records.
    init(_ map: MirrorMap, count: Int) {
        self.map = map
        choices = map.rules.isEmpty ? [] : Array(repeating: Self.unknown, count: count)
    }

    /// Matches `url`, the URL of the record at `position`, against the rules and keeps which applies.
    mutating func choose(_ url: String, at position: Int) {
        guard !choices.isEmpty else { return }
        choices[position] = map.rule(for: url).map { $0 < 254 ? UInt8($0 + 1) : Self.unknown } ?? 0
    }

    /// The URL to fetch for `url`, the URL of the record at `position`.
    func address(of url: String, at position: Int) -> String {
        map.rewrite(url, by: rule(of: url, at: position))
    }

    /// Whether `source` is `address(of: url, at: position)`, without making that string.
    func isAddress(_ source: String, of url: String, at position: Int) -> Bool {
        map.rewrites(url, by: rule(of: url, at: position), to: source)
    }

    private func rule(of url: String, at position: Int) -> Int? {
        guard !choices.isEmpty else { return nil }
        switch choices[position] {
        case 0: return nil
        case Self.unknown: return map.rule(for: url)
        case let choice: return Int(choice) - 1
        }
    }
}
