#if canImport(Glibc)
import Glibc
#endif

/// A set of names (file names, paths) held as bytes in one arena, sorted by those bytes: what
/// `pack` and `verify` keep of a million files in `images/` at about 18 bytes a name, where a
/// `String` in a `Set` cost several times that.
///
/// Append every name, call `sort()` once, then look names up by index or by bytes. Byte order is
/// the tarball's order (`utf8.lexicographicallyPrecedes`).
struct NameTable {
    /// Where a name's bytes are in `bytes`.
    private struct Span {
        var start: UInt32
        var count: UInt32
    }

    private var bytes: [UInt8] = []
    private var spans: [Span] = []

    var count: Int { spans.count }
    var isEmpty: Bool { spans.isEmpty }

    /// The most bytes of names this table holds: at most 4 GiB, as spans are 32-bit.
    let capacity: Int

    init(capacity: Int = Int(UInt32.max)) {
        self.capacity = min(capacity, Int(UInt32.max))
    }

    /// Why a table refused a name, for the message of the error its caller throws.
    static let fullReason = "it names more than 4 GiB of files"

    /// Adds `name`; `sort()` must follow before any look-up. False, and nothing added, when the
    /// table would pass `capacity` (a hostile manifest or directory listing, never a real one).
    @discardableResult
    mutating func append(_ name: UnsafeRawBufferPointer) -> Bool {
        guard name.count <= capacity - bytes.count else { return false }
        spans.append(Span(start: UInt32(bytes.count), count: UInt32(name.count)))
        bytes.append(contentsOf: name)
        return true
    }

    /// Adds the UTF-8 bytes of `name`.
    @discardableResult
    mutating func append(_ name: Substring) -> Bool {
        var name = name
        return name.withUTF8 { append(UnsafeRawBufferPointer($0)) }
    }

    /// Sorts the names by their bytes and drops repeats.
    mutating func sort() {
        bytes.withUnsafeBytes { arena in
            spans.sort { Self.compare(arena, $0, arena, $1) < 0 }
            var kept = 0
            for index in spans.indices where kept == 0 || Self.compare(arena, spans[kept - 1], arena, spans[index]) != 0 {
                spans[kept] = spans[index]
                kept += 1
            }
            spans.removeLast(spans.count - kept)
        }
    }

    /// The name at `index` (in sorted order) as a `String` (bytes that are not UTF-8 repaired).
    subscript(index: Int) -> String {
        withName(at: index) { String(decoding: $0, as: UTF8.self) }
    }

    /// Calls `body` with the bytes of the name at `index`.
    func withName<T>(at index: Int, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        let span = spans[index]
        return try bytes.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[Int(span.start)..<Int(span.start + span.count)])) }
    }

    /// The index of `name` in sorted order, or nil when it is not in the table; `hint` (the
    /// index to try first) makes a walk in order cost one comparison a name.
    func index(of name: Substring, hint: Int? = nil) -> Int? {
        var name = name
        return name.withUTF8 { utf8 in
            let name = UnsafeRawBufferPointer(utf8)
            return bytes.withUnsafeBytes { arena in
                let whole = Span(start: 0, count: UInt32(name.count))
                if let hint, spans.indices.contains(hint), Self.compare(arena, spans[hint], name, whole) == 0 { return hint }
                var low = 0, high = spans.count
                while low < high {
                    let middle = (low + high) / 2
                    let order = Self.compare(arena, spans[middle], name, whole)
                    if order == 0 { return middle }
                    if order < 0 { low = middle + 1 } else { high = middle }
                }
                return nil
            }
        }
    }

    /// Compares the name at `index` with the name at `other` of `table`: negative, zero or
    /// positive as it sorts before, equal to or after it.
    func compare(_ index: Int, with other: Int, of table: NameTable) -> Int {
        bytes.withUnsafeBytes { arena in
            table.bytes.withUnsafeBytes { Self.compare(arena, spans[index], $0, table.spans[other]) }
        }
    }

    private static func compare(_ left: UnsafeRawBufferPointer, _ a: Span, _ right: UnsafeRawBufferPointer, _ b: Span) -> Int {
        let shorter = Int(min(a.count, b.count))
        if shorter > 0, let left = left.baseAddress, let right = right.baseAddress {
            let order = memcmp(left + Int(a.start), right + Int(b.start), shorter)
            if order != 0 { return Int(order) }
        }
        return Int(a.count) - Int(b.count)
    }
}
