#if canImport(Glibc)
import Glibc
#endif
import XCTest

@testable import ArchiverCore

/// The ledger keeps every done outcome of a run in memory; these hold its compact forms to the
/// values they stand for.
final class ValidatorStorageTests: XCTestCase {
    func testAnOutcomeIsSixtyFourBytesAndKeepsEveryValueItCanHold() {
        XCTAssertEqual(MemoryLayout<Ledger.Outcome>.stride, 64)
        var outcome = Ledger.Outcome()
        outcome.bytes = RunConfiguration.largestMaxBytes  // --max-bytes at its largest
        outcome.attempts = 11
        outcome.code = .revalidating
        XCTAssertEqual(outcome.bytes, RunConfiguration.largestMaxBytes, "the largest file a run keeps keeps its size")
        XCTAssertEqual(outcome.attempts, 11)
        XCTAssertEqual(outcome.code, .revalidating)
        outcome.bytes = 139
        outcome.code = .done
        XCTAssertEqual(outcome.bytes, 139)
        XCTAssertEqual(outcome.attempts, 11, "setting one packed field leaves the others")
        XCTAssertEqual(outcome.code, .done)
    }

    func testHTTPDatesRoundTripAndOnlyExactOnesAreCompacted() {
        XCTAssertEqual(HTTPDate.seconds("Thu, 01 Jan 1970 00:00:00 GMT"), 0)
        XCTAssertEqual(HTTPDate.seconds("Tue, 01 Dec 2026 02:24:08 GMT"), 1_796_091_848)
        XCTAssertEqual(HTTPDate.text(1_796_091_848), "Tue, 01 Dec 2026 02:24:08 GMT")
        XCTAssertEqual(HTTPDate.seconds("Sun, 06 Nov 1994 08:49:37 GMT"), 784_111_777)
        for kept in [
            "Mon, 01 Dec 2026 02:24:08 GMT",  // wrong weekday
            "Tue,  1 Dec 2026 02:24:08 GMT", "Tue, 01 dec 2026 02:24:08 GMT", "Tue, 01 Dec 2026 02:24:08 UTC",
            "Tue, 31 Feb 2026 02:24:08 GMT", "Tue, 01 Dec 2026 24:00:00 GMT", "Sunday, 06-Nov-94 08:49:37 GMT",
            "Sun Nov  6 08:49:37 1994", "", "Tue, 01 Dec 2026 02:24:08 GMT ",
        ] {
            XCTAssertNil(HTTPDate.seconds(kept), kept)
        }
    }

    /// The calendar arithmetic agrees with libc's `gmtime_r` and `timegm` from 1970 to 9999.
    func testHTTPDatesAgreeWithLibcOverTheirWholeRange() {
        var generator = SeededGenerator()
        let last: Int64 = 253_402_300_799  // Fri, 31 Dec 9999 23:59:59 GMT
        var samples: [Int64] = [0, 86399, 86400, 951_782_400, 951_868_800, 4_107_542_400, last]  // 2000-02-29, 2000-03-01, 2100-03-01
        for _ in 0..<20_000 { samples.append(Int64.random(in: 0...last, using: &generator)) }
        for seconds in samples {
            var time = time_t(seconds)
            var parts = tm()
            gmtime_r(&time, &parts)
            var buffer = [CChar](repeating: 0, count: 64)
            let count = strftime(&buffer, buffer.count, "%a, %d %b %Y %H:%M:%S GMT", &parts)
            let expected = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            XCTAssertEqual(HTTPDate.text(seconds), expected)
            XCTAssertEqual(HTTPDate.seconds(expected), seconds, expected)
        }
    }

    func testTheArenaGivesBackWhatItWasGiven() {
        let arena = ValidatorArena()
        let values = [
            Validators(etag: "\"6b0e2fc8-8b\"", lastModified: "Tue, 01 Dec 2026 02:24:08 GMT"),
            Validators(etag: nil, lastModified: "Sun, 06 Nov 1994 08:49:37 GMT"),
            Validators(etag: "W/\"x\"", lastModified: "Mon, 01 Dec 2026 02:24:08 GMT"),  // kept as text
            Validators(etag: "\"only\"", lastModified: nil),
            Validators(etag: nil, lastModified: "yesterday"),
        ]
        var spans: [ValidatorArena.Span] = []
        for _ in 0..<3000 {  // past one 64 KiB block
            for value in values { spans.append(arena.append(value)) }
        }
        for (index, span) in spans.enumerated() {
            XCTAssertEqual(arena.validators(span), values[index % values.count])
        }
        XCTAssertEqual(arena.append(Validators()), 0)
    }
}
