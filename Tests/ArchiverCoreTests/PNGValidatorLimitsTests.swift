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

    /// The process's resident memory now, and its peak since `resetPeak()`, in bytes (Linux).
    private func residentMemory() -> (now: Int, peak: Int) {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        func field(_ name: String) -> Int {
            let line = status.split(separator: "\n").first { $0.hasPrefix(name + ":") } ?? ""
            return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
        }
        return (field("VmRSS"), field("VmHWM"))
    }

    /// Sets the peak back to the resident memory now (`clear_refs` 5).
    private func resetPeak() throws {
        guard (try? Data("5".utf8).write(to: URL(fileURLWithPath: "/proc/self/clear_refs"))) != nil else {
            throw XCTSkip("cannot reset the peak resident memory here")
        }
    }

    /// A zlib stream of `count` bytes of `byte`, as deflate's fixed codes make it: the byte, then
    /// matches of 258 bytes at distance 1 (13 bits each), then the rest as literals.
    private func zlibOfRepeated(_ byte: UInt8, count: Int) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var bits: UInt64 = 0, used = 0
        func put(_ value: UInt64, _ width: Int) {  // LSB first
            bits |= value << UInt64(used)
            used += width
            while used >= 8 {
                out.append(UInt8(bits & 0xFF))
                bits >>= 8
                used -= 8
            }
        }
        func code(_ value: UInt64, _ width: Int) {  // a Huffman code, most significant bit first
            for shift in stride(from: width - 1, through: 0, by: -1) { put(value >> UInt64(shift) & 1, 1) }
        }
        put(1, 1)  // the last block
        put(1, 2)  // fixed codes
        code(0x30 + UInt64(byte), 8)
        var left = count - 1
        while left >= 258 {
            code(0b1100_0101, 8)  // length 258 (code 285)
            code(0, 5)  // distance 1
            left -= 258
        }
        for _ in 0..<left { code(0x30 + UInt64(byte), 8) }
        code(0, 7)  // end of block
        if used > 0 { put(0, 8 - used) }
        // Adler-32 of `count` bytes of `byte`: a = 1 + k*byte, b = the sum of a over k.
        let n = UInt64(count), v = UInt64(byte), m: UInt64 = 65521
        let a = (1 + n * v) % m
        let b = (n % m + v * ((n * (n + 1) / 2) % m)) % m
        for shift in [24, 16, 8, 0] { out.append(UInt8((b << 16 | a) >> UInt64(shift) & 0xFF)) }
        return out
    }

    /// A PNG's text chunks were read and kept whole by libpng (8 MiB each, up to 128): a 1 MB
    /// image of zTXt chunks held 1 GiB while it was checked, in either mode. libpng now skips
    /// text, ICC profiles and suggested palettes (their CRCs still checked), and the image is
    /// checked in about the memory of its bytes; a corrupt CRC in one is still refused.
    func testTextChunksThatInflateToGigabytesCostNoMemory() throws {
        let text = [UInt8]("Comment".utf8) + [0, 0] + zlibOfRepeated(0x41, count: 7 << 20)
        XCTAssertLessThan(text.count, 64 << 10, "a few KiB that inflate to 7 MiB")
        var png = PNGFixtures.solid()
        for _ in 0..<24 { png = PNGFixtures.inserting(PNGFixtures.chunkBytes("zTXt", text), before: "IDAT", in: png) }
        XCTAssertLessThan(png.count, 2 << 20)
        for mode in ValidationMode.allCases {
            try resetPeak()
            let before = residentMemory().now
            XCTAssertNoThrow(try PNGValidator(mode: mode).validate(png), "\(mode)")
            let check = PNGStreamCheck(PNGValidator(mode: mode))
            png.withUnsafeBytes { check.feed($0) }
            XCTAssertNoThrow(try check.result().get(), "\(mode), streamed")
            XCTAssertLessThan(residentMemory().peak - before, 32 << 20, "\(mode): 24 chunks of 7 MiB of text would be 168 MiB")
        }
        let bad = PNGFixtures.inserting(PNGFixtures.chunkBytes("zTXt", text, crc: 1), before: "IDAT", in: PNGFixtures.solid())
        XCTAssertThrowsError(try PNGValidator().validate(bad))
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
