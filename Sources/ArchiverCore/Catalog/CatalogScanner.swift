#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// The first pass over a catalog: reads it a window at a time, hashing every byte, and notes
/// where each record object starts and its id. Nothing but those entries is kept, so loading a
/// catalog costs memory for its records, not for its text.
///
/// Returns nil for anything the fast parser does not accept (a syntax error, an odd number, a
/// record over 1 MiB); `Catalog` then reads the whole text with JSONDecoder for its message.
struct CatalogScanner {
    private let read: (UnsafeMutableRawBufferPointer, Int) -> Int
    private let hasher = SHA256Hasher()
    private var buffer: [UInt8]
    private var base = 0  // file offset of buffer[0]
    private var count = 0  // bytes in buffer
    private var position = 0  // next unread byte in buffer
    private var atEOF = false
    private var failed = false
    private static let maxLookahead = 1 << 20

    /// Scans catalog bytes held in memory.
    static func scan(_ data: Data) -> Result? {
        var scanner = CatalogScanner { into, offset in
            let n = min(into.count, max(0, data.count - offset))
            // Offsets count from the first byte, which for a slice is not index 0.
            let from = data.startIndex + offset
            if n > 0 { data.copyBytes(to: into.bindMemory(to: UInt8.self), from: from..<(from + n)) }
            return n
        }
        return scanner.scan()
    }

    /// `read(into, offset)` fills `into` from `offset` and returns the bytes read (0 at the end, -1 on error).
    init(read: @escaping (UnsafeMutableRawBufferPointer, Int) -> Int) {
        self.read = read
        buffer = [UInt8](repeating: 0, count: 256 * 1024)
    }

    struct Result {
        var entries: [CatalogRecords.Entry]
        var end: Int
        var sha256: String
    }

    /// Scans everything; nil if it is not the catalog shape the fast parser reads.
    mutating func scan() -> Result? {
        var entries: [CatalogRecords.Entry] = []
        var end = 0
        guard nextByte() == 0x5B else { return nil }  // [
        position += 1
        if nextByte() == 0x5D {
            position += 1
        } else {
            while true {
                var lookahead = 64 * 1024
                var parsed: (record: CatalogRecord, end: Int)?
                while true {
                    guard ensure(lookahead) else { return nil }
                    parsed = buffer.withUnsafeBufferPointer {
                        CatalogParser.record(in: UnsafeBufferPointer(rebasing: $0[..<count]), at: position, fields: [])
                    }
                    if parsed != nil || atEOF || lookahead >= Self.maxLookahead { break }
                    lookahead *= 4
                }
                guard let (record, stop) = parsed else { return nil }
                entries.append(.init(id: record.id, offset: base + position, albumId: record.albumId))
                position = stop
                end = base + position
                let separator = nextByte()
                position += 1
                if separator == 0x2C { continue }
                guard separator == 0x5D else { return nil }
                break
            }
        }
        guard nextByte() == nil, !failed else { return nil }
        return Result(entries: entries, end: end, sha256: hasher.finish())
    }

    /// The next byte that is not white space, reading more as needed; nil at the end.
    private mutating func nextByte() -> UInt8? {
        while true {
            while position < count {
                let byte = buffer[position]
                guard byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 else { return byte }
                position += 1
            }
            guard ensure(1), position < count else { return nil }
        }
    }

    /// Makes at least `wanted` bytes available from `position`, unless the text ends sooner.
    private mutating func ensure(_ wanted: Int) -> Bool {
        if count - position >= wanted || atEOF { return !failed }
        // Keep the unread tail, then read until the buffer is full or the text ends.
        let tail = count - position
        if buffer.count < 2 * wanted { buffer += [UInt8](repeating: 0, count: 2 * wanted - buffer.count) }
        buffer.withUnsafeMutableBytes { raw in
            if position > 0, tail > 0 { memmove(raw.baseAddress!, raw.baseAddress! + position, tail) }
        }
        base += position
        count = tail
        position = 0
        while count < buffer.count {
            let n = buffer.withUnsafeMutableBytes { raw in
                read(UnsafeMutableRawBufferPointer(rebasing: raw[count...]), base + count)
            }
            if n < 0 {
                failed = true
                return false
            }
            if n == 0 {
                atEOF = true
                break
            }
            buffer.withUnsafeBytes { hasher.update(UnsafeRawBufferPointer(rebasing: $0[count..<(count + n)])) }
            count += n
        }
        return true
    }
}
