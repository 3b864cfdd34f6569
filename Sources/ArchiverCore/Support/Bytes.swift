/// Appending text and numbers to a byte buffer without a String or an Array per piece: the
/// manifest, page and journal lines are built this way, thousands of pieces per run.
extension Array where Element == UInt8 {
    /// `text`'s UTF-8, copied in one piece from its contiguous storage.
    mutating func appendUTF8(_ text: String) {
        var text = text
        text.withUTF8 { append(contentsOf: $0) }
    }

    /// A literal's bytes.
    mutating func appendLiteral(_ text: StaticString) {
        append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// `value` in decimal, with a leading minus sign if negative.
    mutating func appendDecimal(_ value: some BinaryInteger) {
        if value < 0 { append(0x2D) }
        var magnitude = UInt64(value.magnitude)
        let start = count
        repeat {
            append(UInt8(truncatingIfNeeded: magnitude % 10) + 0x30)
            magnitude /= 10
        } while magnitude > 0
        // Swapped in place: `self[start...].reverse()` mutates a slice that shares the array's
        // storage, which copies it (an allocation for every number written).
        var low = start, high = count - 1
        while low < high {
            swapAt(low, high)
            low += 1
            high -= 1
        }
    }
}

extension String {
    /// Whether any of the text's UTF-8 bytes satisfies `predicate`, read from its contiguous
    /// storage (a native string has it): `utf8.contains(where:)` steps through string indices,
    /// several times slower on the URLs and titles every item passes through.
    func containsUTF8Byte(where predicate: (UInt8) -> Bool) -> Bool {
        if let found = utf8.withContiguousStorageIfAvailable({ $0.contains(where: predicate) }) { return found }
        return utf8.contains(where: predicate)
    }
}
