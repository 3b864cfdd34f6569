#if canImport(Glibc)
import Glibc
#endif
import Foundation
import XCTest
@testable import ArchiverCore

/// What a chunk claims never costs more than the bytes it has, and libpng's limits are errors.
final class PNGValidatorLimitsTests: XCTestCase {
    /// The process's peak resident memory so far, in bytes.
    private func peakRSS() -> Int {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        return usage.ru_maxrss * 1024
    }

    /// Issue #16: signature and IHDR, then a chunk that claims 0x7ffffff0 bytes and has 4: 45 bytes
    /// that made libpng allocate and zero 2 GiB (its size limit was a warning) before the walk.
    func testAChunkClaimingTwoGiBIsRejectedWithoutAllocatingIt() {
        let head = [UInt8](PNGFixtures.solid().prefix(33))
        let before = peakRSS()
        for type in ["zTXt", "tEXt", "iTXt", "sPLT"] {
            let png = Data(head + [0x7F, 0xFF, 0xFF, 0xF0] + Array(type.utf8) + [0, 0, 0, 0])
            XCTAssertEqual(png.count, 45)
            for mode in ValidationMode.allCases {
                XCTAssertThrowsError(try PNGValidator(mode: mode).validate(png)) { error in
                    XCTAssertEqual((error as? ItemError)?.kind, "invalid-png", "\(type) \(mode): \(error)")
                    XCTAssertTrue("\(error)".contains("truncated: chunk \(type) at offset 33"), "\(type) \(mode): \(error)")
                }
            }
        }
        let grown = peakRSS() - before
        XCTAssertLessThan(grown, 64 << 20, "peak RSS grew by \(grown >> 20) MiB validating 45-byte files")
    }

    /// Refused for its size before its CRC is even computed (so the test need not compute it either).
    func testAnAncillaryChunkOverTheLimitIsAnError() {
        let text = PNGFixtures.chunkBytes("tEXt", Array("Comment\0".utf8) + [UInt8](repeating: 0x61, count: 9 << 20), crc: 0)
        let png = PNGFixtures.inserting(text, before: "IEND", in: PNGFixtures.solid())
        let offset = PNGFixtures.chunk("tEXt", in: png).offset
        for mode in ValidationMode.allCases {
            XCTAssertThrowsError(try PNGValidator(mode: mode).validate(png)) { error in
                XCTAssertEqual((error as? ItemError)?.kind, "invalid-png", "\(mode)")
                XCTAssertTrue("\(error)".contains("chunk tEXt at offset \(offset) is 9437192 bytes, over the 8388608-byte limit"), "\(mode): \(error)")
            }
        }
    }

    func testWhatLibpngCallsABenignErrorIsAnError() {
        let gamma = PNGFixtures.chunkBytes("gAMA", [0, 1, 2])
        let png = PNGFixtures.inserting(gamma, before: "IDAT", in: PNGFixtures.solid())
        for mode in ValidationMode.allCases {
            XCTAssertThrowsError(try PNGValidator(mode: mode).validate(png)) { error in
                XCTAssertEqual((error as? ItemError)?.kind, "invalid-png", "\(mode)")
                XCTAssertTrue("\(error)".contains("gAMA"), "\(mode): \(error)")
            }
        }
    }
}
