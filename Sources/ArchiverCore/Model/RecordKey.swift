import Foundation

/// How a string id becomes a file name under `images/`: safely, deterministically, reversibly,
/// and independently of every other id in the catalog (`RecordID.stem`, `KeyedStore`).
///
/// - `a-z`, `0-9`, `-` and `_` are kept; every other byte of the id's UTF-8 is `%XX`, with
///   uppercase hex. Uppercase letters are encoded too (`A` is `%41`), so the only uppercase
///   letters in a name are hex digits right after a `%`: two ids never give names that differ
///   only in case, and a case-insensitive file system (macOS, Windows) cannot merge two files.
///   Non-ASCII is encoded, so Unicode normalization (HFS+ stores NFD) cannot merge them either.
/// - `.` is kept except first (no `.`, `..`, hidden files, or the `.NAME.tmp-` temporaries that
///   `prepare()` removes). No `/` or NUL can appear, so no name leaves `images/`.
/// - A name Windows reserves (`con`, `nul`, `com1`, ... before any `.`) has its first letter encoded.
/// - A canonical decimal integer is the integer id (`"7"` is 7, `images/7.png`); other digit
///   strings (`007`) are encoded like any string, and cannot collide with an integer's name
///   because an integer's name never has a leading zero.
/// - An encoding over 200 bytes (ids of up to 66 bytes always fit) is cut at 180 bytes and ends
///   in `~` and 16 hex digits of the id's SHA-256: `~` never appears otherwise, so such names
///   cannot collide with reversible ones; they are reversed through the manifest, not the name.
/// - Empty ids and ids over 200 bytes cannot be made safe: `stem` is nil (`unsafe-key`).
enum RecordKey {
    /// Longest id accepted, in bytes.
    static let maxIDBytes = 200
    static let maxStemBytes = 200

    /// Why a string id can have no file name: it is empty, or over `maxIDBytes`; nil when it can.
    static func refusal(for id: String) -> String? {
        let count = id.utf8.count
        if count == 0 { return "an empty id" }
        if count > maxIDBytes { return "an id of \(count) bytes, over the limit of \(maxIDBytes)" }
        return nil
    }

    /// The file name without `.png` for a string id; nil if the id cannot be made safe (`refusal`).
    static func stem(for id: String) -> String? {
        guard refusal(for: id) == nil else { return nil }
        let bytes = Array(id.utf8)
        if let integer = Int(id), String(integer) == id { return id }
        let base = String(decoding: bytes.prefix { $0 != 0x2E }, as: UTF8.self).lowercased()
        let encodeFirst = reserved.contains(base)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 3)
        for (index, byte) in bytes.enumerated() {
            let kept: Bool
            switch byte {
            case 0x61...0x7A, 0x30...0x39, 0x2D, 0x5F: kept = !(index == 0 && encodeFirst)
            case 0x2E: kept = index > 0
            default: kept = false
            }
            if kept {
                out.append(byte)
            } else {
                out.append(0x25)
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0x0F)])
            }
        }
        guard out.count > maxStemBytes else { return String(decoding: out, as: UTF8.self) }
        var cut = 180
        // Do not split a %XX.
        while cut > 0, out[cut - 1] == 0x25 || (cut > 1 && out[cut - 2] == 0x25) { cut -= 1 }
        let digest = SHA256.hex(Data(bytes)).prefix(16)
        return String(decoding: out[..<cut], as: UTF8.self) + "~" + digest
    }

    /// The id a reversible stem was made from; nil for a hashed (`~`) stem or one `stem(for:)`
    /// cannot have made.
    static func id(fromStem name: String) -> String? {
        var bytes: [UInt8] = []
        var iterator = Array(name.utf8).makeIterator()
        while let byte = iterator.next() {
            if byte == 0x25 {
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else { return nil }
                bytes.append(high << 4 | low)
            } else {
                bytes.append(byte)
            }
        }
        let id = String(decoding: bytes, as: UTF8.self)
        return stem(for: id) == name ? id : nil
    }

    /// Whether `name` is a stem `stem(for:)` can make: one it reverses, or a hashed one.
    static func isStem(_ name: String) -> Bool {
        if id(fromStem: name) != nil { return true }
        let bytes = Array(name.utf8)
        guard bytes.count > 17, bytes.count <= maxStemBytes, bytes[bytes.count - 17] == 0x7E else { return false }
        guard bytes.suffix(16).allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else { return false }
        // What is before the `~` is a cut encoding: kept bytes and `%XX`, not starting with `.`.
        let head = bytes.prefix(bytes.count - 17)
        guard head.first != 0x2E else { return false }
        var index = head.startIndex
        while index < head.endIndex {
            switch head[index] {
            case 0x61...0x7A, 0x30...0x39, 0x2D, 0x5F, 0x2E: index += 1
            case 0x25:
                guard index + 2 < head.endIndex, hexValue(head[index + 1]) != nil, hexValue(head[index + 2]) != nil else {
                    return false
                }
                index += 3
            default: return false
            }
        }
        return true
    }

    private static let reserved = Set(["con", "prn", "aux", "nul"] + (1...9).flatMap { ["com\($0)", "lpt\($0)"] })
    private static let hex = Array("0123456789ABCDEF".utf8)

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x41...0x46: byte - 0x41 + 10
        default: nil
        }
    }
}
