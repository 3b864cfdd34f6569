import XCTest

@testable import ArchiverCore

/// The byte appenders the manifest, pages and journal lines are built with.
final class BytesTests: XCTestCase {
    func testDecimalsAppendAfterWhatIsThereInEveryRange() {
        let values: [Int64] = [0, 7, 10, 99, 100, 12345, -1, -10, -12345, .min, .max]
        for value in values {
            var bytes = Array("x=".utf8)
            bytes.appendDecimal(value)
            XCTAssertEqual(String(decoding: bytes, as: UTF8.self), "x=\(value)")
        }
        var bytes: [UInt8] = []
        bytes.appendDecimal(UInt64.max)
        bytes.appendDecimal(Int32(-42))
        XCTAssertEqual(String(decoding: bytes, as: UTF8.self), "\(UInt64.max)-42")
    }
}
