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
            func number(_ start: Int, _ count: Int) -> Int64? {
                var value: Int64 = 0
                for byte in bytes[start..<(start + count)] {
                    guard (0x30...0x39).contains(byte) else { return nil }
                    value = value * 10 + Int64(byte - 0x30)
                }
                return value
            }
            guard let month = months.firstIndex(where: { $0.elementsEqual(bytes[8..<11]) }),
                let day = number(5, 2), let year = number(12, 4), let hour = number(17, 2),
                let minute = number(20, 2), let second = number(23, 2),
                (1...31).contains(day), hour < 24, minute < 60, second < 60
            else { return nil }
            let seconds = daysSince1970(year: year, month: Int64(month) + 1, day: day) * 86400 + hour * 3600 + minute * 60 + second
            // Written back, it must be the same text (right weekday, no 31 Feb, year 1970 on).
            guard seconds >= 0, seconds < 1 << 40 else { return nil }
            return withText(seconds) { $0.elementsEqual(bytes) } ? seconds : nil
        }
    }

    /// `seconds` as an IMF-fixdate: from 0 to the end of 9999 (a four-digit year, as `seconds(_:)` reads).
    static func text(_ seconds: Int64) -> String {
        withText(seconds) { String(decoding: $0, as: UTF8.self) }
    }

    /// Calls `body` with `text(seconds)`'s 29 bytes, made on the stack by arithmetic: `gmtime_r`
    /// and `timegm` take glibc's time-zone lock, on every outcome stored and every item written.
    private static func withText<T>(_ seconds: Int64, _ body: (UnsafeBufferPointer<UInt8>) -> T) -> T {
        let days = seconds / 86400, within = seconds % 86400
        let (year, month, day) = civil(fromDaysSince1970: days)
        let weekday = Int((days + 4) % 7)  // 1 January 1970 was a Thursday
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 29) { out in
            var index = 0
            func put(_ byte: UInt8) {
                out[index] = byte
                index += 1
            }
            func two(_ value: Int64) {
                put(UInt8(0x30 + value / 10))
                put(UInt8(0x30 + value % 10))
            }
            for byte in Self.days[weekday] { put(byte) }
            put(0x2C)  // ,
            put(0x20)
            two(day)
            put(0x20)
            for byte in months[Int(month) - 1] { put(byte) }
            put(0x20)
            two(year / 100 % 100)
            two(year % 100)
            put(0x20)
            two(within / 3600)
            put(0x3A)
            two(within / 60 % 60)
            put(0x3A)
            two(within % 60)
            for byte in " GMT".utf8 { put(byte) }
            return body(UnsafeBufferPointer(out))
        }
    }

    /// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
    static func daysSince1970(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146097 + dayOfEra - 719468
    }

    /// The date `days` after 1970-01-01 (`civil_from_days`), for `days` >= 0.
    static func civil(fromDaysSince1970 days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719468
        let era = z / 146097
        let dayOfEra = z - era * 146097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    static func store(_ seconds: Int64, at pointer: UnsafeMutableRawPointer) {
        for index in 0..<storedCount { pointer.storeBytes(of: UInt8(truncatingIfNeeded: seconds >> (8 * index)), toByteOffset: index, as: UInt8.self) }
    }

    static func load(at pointer: UnsafeRawPointer) -> Int64 {
        (0..<storedCount).reduce(0) { $0 | Int64(pointer.load(fromByteOffset: $1, as: UInt8.self)) << (8 * $1) }
    }
}
