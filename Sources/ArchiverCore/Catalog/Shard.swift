import CLibCrypto

/// One share of a catalog, shard `index` of `count`, one-based like `jest --shard 2/4`.
///
/// A record belongs to the shard its image URL hashes to: the first 8 bytes of the SHA-256 of
/// the URL's UTF-8 bytes, as the catalog has it (before `--mirror`), read as a big-endian
/// integer, modulo `count`, plus one. So records that share a URL share a shard (each distinct
/// URL is fetched by one shard only), a record's shard never depends on the other records
/// (adding records moves none), and every machine may use its own `--mirror`.
public struct Shard: Sendable, Hashable, CustomStringConvertible {
    let index: Int
    let count: Int

    /// The most shards a catalog can be split into.
    public static let maxCount = 100_000

    /// Shard `index` of `count`; nil unless 1 <= index <= count <= `maxCount`.
    init?(index: Int, count: Int) {
        guard (1...Self.maxCount).contains(count), (1...count).contains(index) else { return nil }
        self.index = index
        self.count = count
    }

    /// Parses `I/N`, as `--shard` takes it.
    public init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCII) }),
            let index = Int(parts[0]), let count = Int(parts[1])
        else { return nil }
        self.init(index: index, count: count)
    }

    /// `I/N`.
    public var description: String { "\(index)/\(count)" }

    /// Whether a record whose image URL is `url` belongs to this shard.
    func contains(url: String) -> Bool {
        Self.index(ofURL: url, count: count) == index
    }

    /// The shard (1...count) a record whose image URL is `url` belongs to.
    static func index(ofURL url: String, count: Int) -> Int {
        var url = url
        let key: UInt64 = url.withUTF8 { utf8 in
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32) { digest in
                var length: UInt32 = 0
                let ok = EVP_Digest(utf8.baseAddress, utf8.count, digest.baseAddress, &length, SHA256.algorithm, nil)
                precondition(ok == 1 && length == 32, "libcrypto EVP_Digest failed")
                return digest.prefix(8).reduce(0) { $0 << 8 | UInt64($1) }
            }
        }
        return Int(key % UInt64(count)) + 1
    }
}
