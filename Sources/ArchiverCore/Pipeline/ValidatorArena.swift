/// The `ETag` and `Last-Modified` strings of a run's done outcomes, for the ledger: their bytes
/// in blocks of 64 KiB that never move, and an 8-byte span per outcome saying where they are.
///
/// A Swift string per validator cost two heap objects per record and made the manifest writer
/// build strings while holding the ledger's lock. Here bytes are appended under the ledger's
/// lock, and a span, once handed out under that lock, names bytes that are never written again,
/// so they are read (`validators(_:)`) without it.
///
/// A `Last-Modified` in the form servers send (`Tue, 01 Dec 2026 02:24:08 GMT`, RFC 9110's
/// IMF-fixdate) is kept as 5 bytes of seconds rather than its 29 characters, when writing the
/// seconds back gives exactly the text the server sent; any other text is kept as it came.
final class ValidatorArena: @unchecked Sendable {
    // @unchecked: `append` runs under the ledger's lock only; `validators(_:)` reads bytes that
    // `append` wrote before it published their span under that lock, and the table of blocks is
    // allocated whole at the start, so no pointer a reader follows ever moves.
    /// Where a pair is: offset << 16 | etag length << 8 | last-modified length; 0 for none.
    /// The top bit says the last-modified bytes are `HTTPDate` seconds (offsets stay under 2^30).
    typealias Span = UInt64

    private static let compactDate: Span = 1 << 63

    private static let blockSize = 1 << 16
    /// 16384 blocks of 64 KiB: 1 GiB of validators (over 2 million records at their longest).
    /// Past it, outcomes keep no validators (their refresh is a plain GET).
    private static let blockLimit = 1 << 14

    private let blocks: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    private var used = 0  // blocks in use
    private var fill = blockSize  // bytes used in the last block

    init() {
        blocks = .allocate(capacity: Self.blockLimit)
        blocks.initialize(repeating: nil, count: Self.blockLimit)
    }

    deinit {
        for index in 0..<used { blocks[index]?.deallocate() }
        blocks.deallocate()
    }

    /// Stores `validators` (under the ledger's lock); returns their span, 0 for none.
    func append(_ validators: Validators) -> Span {
        guard !validators.isEmpty else { return 0 }
        var etag = validators.etag ?? "", lastModified = validators.lastModified ?? ""
        let etagCount = etag.utf8.count
        let seconds = HTTPDate.seconds(lastModified)
        let lastModifiedCount = seconds == nil ? lastModified.utf8.count : HTTPDate.storedCount
        // `Validators` keeps only values of 1 to 255 bytes; a longer one is not stored.
        guard etagCount <= 255, lastModifiedCount <= 255 else { return 0 }
        if fill + etagCount + lastModifiedCount > Self.blockSize {
            guard used < Self.blockLimit else { return 0 }
            blocks[used] = .allocate(byteCount: Self.blockSize, alignment: 8)
            used += 1
            fill = 0
        }
        let block = blocks[used - 1]!
        let offset = (used - 1) * Self.blockSize + fill
        etag.withUTF8 { bytes in
            if let base = bytes.baseAddress { (block + fill).copyMemory(from: base, byteCount: etagCount) }
        }
        if let seconds {
            HTTPDate.store(seconds, at: block + fill + etagCount)
        } else {
            lastModified.withUTF8 { bytes in
                if let base = bytes.baseAddress { (block + fill + etagCount).copyMemory(from: base, byteCount: lastModifiedCount) }
            }
        }
        fill += etagCount + lastModifiedCount
        let span = Span(offset) << 16 | Span(etagCount) << 8 | Span(lastModifiedCount)
        return seconds == nil ? span : span | Self.compactDate
    }

    /// The validators a span names; needs no lock (see the type's comment).
    func validators(_ span: Span) -> Validators {
        guard span != 0 else { return Validators() }
        let offset = Int((span & ~Self.compactDate) >> 16), etagCount = Int(span >> 8 & 0xFF), lastModifiedCount = Int(span & 0xFF)
        let start = UnsafeRawPointer(blocks[offset / Self.blockSize]!) + offset % Self.blockSize
        func text(_ at: UnsafeRawPointer, _ count: Int) -> String? {
            count == 0 ? nil : String(decoding: UnsafeRawBufferPointer(start: at, count: count), as: UTF8.self)
        }
        let lastModified = span & Self.compactDate != 0
            ? HTTPDate.text(HTTPDate.load(at: start + etagCount))
            : text(start + etagCount, lastModifiedCount)
        return Validators(etag: text(start, etagCount), lastModified: lastModified)
    }
}
