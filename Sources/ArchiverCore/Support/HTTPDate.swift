#if canImport(Glibc)
import Glibc
#endif

/// RFC 9110's IMF-fixdate (`Tue, 01 Dec 2026 02:24:08 GMT`), the form servers send
/// `Last-Modified` in, to and from seconds since 1970, without Foundation's date formatter.
enum HTTPDate {
    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"].map { Array($0.utf8) }
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        .map { Array($0.utf8) }
    /// Seconds are stored in 5 bytes: up to 2^40 - 1 (the year 36812).
    static let storedCount = 5

    /// The seconds `text` names, if it is an IMF-fixdate that `text(_:)` writes back exactly
    /// (right weekday, two-digit day, `GMT`) and the seconds fit in `storedCount` bytes.
    static func seconds(_ text: String) -> Int64? {
        var text = text
        return text.withUTF8 { bytes -> Int64? in
            guard bytes.count == 29 else { return nil }
            func number(_ start: Int, _ count: Int) -> Int32? {
                var value: Int32 = 0
                for byte in bytes[start..<(start + count)] {
                    guard (0x30...0x39).contains(byte) else { return nil }
                    value = value * 10 + Int32(byte - 0x30)
                }
                return value
            }
            guard let month = months.firstIndex(where: { $0.elementsEqual(bytes[8..<11]) }),
                let day = number(5, 2), let year = number(12, 4), let hour = number(17, 2),
                let minute = number(20, 2), let second = number(23, 2)
            else { return nil }
            var parts = tm()
            parts.tm_year = year - 1900
            parts.tm_mon = Int32(month)
            parts.tm_mday = day
            parts.tm_hour = hour
            parts.tm_min = minute
            parts.tm_sec = second
            let seconds = Int64(timegm(&parts))
            guard seconds >= 0, seconds < 1 << 40, utf8(seconds).elementsEqual(bytes) else { return nil }
            return seconds
        }
    }

    /// `seconds` as an IMF-fixdate.
    static func text(_ seconds: Int64) -> String {
        String(decoding: utf8(seconds), as: UTF8.self)
    }

    /// `text(seconds)`'s bytes, made in one array (the ledger checks every `Last-Modified` it
    /// keeps against them, under its lock).
    private static func utf8(_ seconds: Int64) -> [UInt8] {
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        var out: [UInt8] = []
        out.reserveCapacity(32)
        func two(_ value: Int32) {
            out.append(UInt8(0x30 + value / 10))
            out.append(UInt8(0x30 + value % 10))
        }
        out += days[Int(parts.tm_wday)]
        out.appendLiteral(", ")
        two(parts.tm_mday)
        out.append(0x20)
        out += months[Int(parts.tm_mon)]
        out.append(0x20)
        out.appendDecimal(Int(parts.tm_year) + 1900)
        out.append(0x20)
        two(parts.tm_hour)
        out.append(0x3A)
        two(parts.tm_min)
        out.append(0x3A)
        two(parts.tm_sec)
        out.appendLiteral(" GMT")
        return out
    }

    static func store(_ seconds: Int64, at pointer: UnsafeMutableRawPointer) {
        for index in 0..<storedCount { pointer.storeBytes(of: UInt8(truncatingIfNeeded: seconds >> (8 * index)), toByteOffset: index, as: UInt8.self) }
    }

    static func load(at pointer: UnsafeRawPointer) -> Int64 {
        (0..<storedCount).reduce(0) { $0 | Int64(pointer.load(fromByteOffset: $1, as: UInt8.self)) << (8 * $1) }
    }
}
