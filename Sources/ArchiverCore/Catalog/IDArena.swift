#if canImport(Glibc)
import Glibc
#endif

/// The string ids of a catalog's records, kept so that records can be ordered and found by id
/// without reading the catalog back: each id's bytes after a one-byte length, in blocks of
/// 64 KiB that never move. A catalog whose ids are all integers has none.
///
/// Ids are hostile input, so what is kept per id is bounded: an id of up to
/// `RecordKey.maxIDBytes` is kept whole; a longer one (which fails as `unsafe-key`, and may be
/// up to a record's 4 MiB) keeps its first 200 bytes and its SHA-256: 233 bytes at most per
/// record, whatever the catalog holds. Its whole text is read back from the catalog when it is
/// needed (for its manifest item). Kept forms compare as the ids' bytes do, except that two
/// long ids with the same first 200 bytes are ordered by their SHA-256.
///
/// Written while the catalog is read, by one thread; only read after that.
final class IDArena: @unchecked Sendable {
    // @unchecked: appended to only while the catalog is built, before it is shared.
    private static let blockSize = 1 << 16
    private var blocks: [UnsafeMutableRawPointer] = []
    private var fill = blockSize

    deinit {
        for block in blocks { block.deallocate() }
    }

    /// The form an id is kept in: its UTF-8, or for an id over `RecordKey.maxIDBytes` its first
    /// 200 bytes and its SHA-256 (232 bytes, longer than any kept whole).
    static func form(of text: String) -> [UInt8] {
        let bytes = Array(text.utf8)
        guard bytes.count > RecordKey.maxIDBytes else { return bytes }
        return Array(bytes.prefix(RecordKey.maxIDBytes)) + bytes.withUnsafeBytes(SHA256.digest)
    }

    /// Keeps a string id; returns where it is.
    func append(_ text: String) -> Int {
        let form = Self.form(of: text)
        if fill + 1 + form.count > Self.blockSize {
            blocks.append(.allocate(byteCount: Self.blockSize, alignment: 8))
            fill = 0
        }
        let block = blocks[blocks.count - 1]
        block.storeBytes(of: UInt8(form.count), toByteOffset: fill, as: UInt8.self)
        form.withUnsafeBytes { (block + fill + 1).copyMemory(from: $0.baseAddress!, byteCount: form.count) }
        let key = (blocks.count - 1) * Self.blockSize + fill
        fill += 1 + form.count
        return key
    }

    /// The kept form of the id at `key`.
    func form(_ key: Int) -> UnsafeRawBufferPointer {
        let start = UnsafeRawPointer(blocks[key / Self.blockSize]) + key % Self.blockSize
        return UnsafeRawBufferPointer(start: start + 1, count: Int(start.load(as: UInt8.self)))
    }

    /// The id at `key`, if it was kept whole.
    func text(_ key: Int) -> String? {
        let form = form(key)
        return form.count <= RecordKey.maxIDBytes ? String(decoding: form, as: UTF8.self) : nil
    }

    /// Whether one kept form comes before another: by their bytes, a prefix first.
    static func precedes(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        let common = min(a.count, b.count)
        if common > 0 {
            let order = memcmp(a.baseAddress!, b.baseAddress!, common)
            if order != 0 { return order < 0 }
        }
        return a.count < b.count
    }

    static func equal(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        a.count == b.count && (a.count == 0 || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0)
    }
}
