import Foundation
import XCTest
@testable import ArchiverCore

final class PNGValidatorTests: XCTestCase {
    private let modes = ValidationMode.allCases

    func testValidImagesReportTheirSizeInBothModes() throws {
        for mode in modes {
            let validator = PNGValidator(mode: mode)
            for (width, height) in [(1, 1), (8, 8), (150, 150), (600, 600), (600, 150), (3, 1000)] {
                let info = try validator.validate(PNGFixtures.solid(width: width, height: height))
                XCTAssertEqual(info, ImageInfo(width: width, height: height), "\(mode)")
            }
        }
    }

    func testEmptyBodyIsNotPNG() {
        assertNotPNG(Data(), containing: "empty")
    }

    func testHTMLIsNotPNG() {
        assertNotPNG(PNGFixtures.html, containing: "HTML")
    }

    func testJPEGIsNotPNG() {
        assertNotPNG(PNGFixtures.jpeg, containing: "JPEG")
    }

    func testArbitraryTextIsNotPNG() {
        assertNotPNG(Data("hello, world".utf8), containing: "no PNG signature")
    }

    func testBodyShorterThanTheSignatureIsTruncated() {
        assertInvalid(Data(PNGFixtures.signature.prefix(5)), containing: "truncated")
    }

    func testFlippedIDATByteIsACRCMismatch() {
        let png = PNGFixtures.solid()
        let idat = PNGFixtures.chunk("IDAT", in: png)
        let broken = PNGFixtures.flipping(png, at: idat.dataOffset + 1)
        assertInvalid(broken, containing: "CRC mismatch in IDAT chunk at offset \(idat.offset)")
    }

    func testTruncationAtEveryKindOfBoundaryIsInvalid() {
        let png = PNGFixtures.solid(width: 64, height: 64)
        let idat = PNGFixtures.chunk("IDAT", in: png)
        let cuts = [8, 12, 20, 33, idat.offset + 4, idat.dataOffset + idat.length / 2, idat.end - 1,
                    idat.end, png.count - 12, png.count - 4, png.count - 1]
        for cut in cuts {
            assertInvalid(png.prefix(cut), containing: "truncated", "cut at \(cut) of \(png.count)")
        }
    }

    func testTruncatedIDATNamesTheChunk() {
        let png = PNGFixtures.solid(width: 64, height: 64)
        let idat = PNGFixtures.chunk("IDAT", in: png)
        assertInvalid(png.prefix(idat.end - 1), containing: "truncated: chunk IDAT at offset \(idat.offset) runs past end of data")
    }

    func testDataAfterIENDIsInvalid() {
        let png = PNGFixtures.solid()
        assertInvalid(png + Data([0]), containing: "data after IEND")
        assertInvalid(png + Data("junk".utf8), containing: "data after IEND (4 bytes")
        assertInvalid(png + png, containing: "data after IEND")
    }

    func testOversizedHeaderFailsFromTheHeaderAlone() {
        let huge = PNGFixtures.withHeaderSize(PNGFixtures.solid(), width: 60000, height: 60000)
        assertInvalid(huge, containing: "image 60000x60000 exceeds limit 16384")
        let wide = PNGFixtures.withHeaderSize(PNGFixtures.solid(), width: 16385, height: 8)
        assertInvalid(wide, containing: "exceeds limit 16384")
    }

    func testMaxDimensionIsConfigurable() throws {
        let png = PNGFixtures.solid(width: 600, height: 150)
        for mode in modes {
            XCTAssertEqual(try PNGValidator(mode: mode, maxDimension: 600).validate(png), ImageInfo(width: 600, height: 150))
            XCTAssertThrowsError(try PNGValidator(mode: mode, maxDimension: 599).validate(png)) { error in
                XCTAssertEqual((error as? ItemError)?.kind, "invalid-png")
                XCTAssertTrue("\(error)".contains("600x150 exceeds limit 599"), "\(error)")
            }
        }
    }

    func testHeaderPatchedToASizeThatDoesNotMatchTheDataFailsOnlyWhenDecoded() throws {
        // The CRCs are all right, so only decoding notices the rows are missing.
        let png = PNGFixtures.withHeaderSize(PNGFixtures.solid(), width: 8, height: 9)
        XCTAssertEqual(try PNGValidator(mode: .structure).validate(png), ImageInfo(width: 8, height: 9))
        XCTAssertThrowsError(try PNGValidator(mode: .full).validate(png)) { error in
            XCTAssertEqual((error as? ItemError)?.kind, "invalid-png")
        }
    }

    func testBadCRCInAncillaryChunkBeforeIDATIsInvalid() {
        let text = PNGFixtures.chunkBytes("tEXt", Array("Comment\0hello".utf8), crc: 0xDEAD_BEEF)
        let png = PNGFixtures.inserting(text, before: "IDAT", in: PNGFixtures.solid())
        assertInvalid(png, containing: "CRC")
    }

    func testBadCRCInAncillaryChunkAfterIDATIsInvalid() {
        let text = PNGFixtures.chunkBytes("tEXt", Array("Comment\0hello".utf8), crc: 0xDEAD_BEEF)
        let png = PNGFixtures.inserting(text, before: "IEND", in: PNGFixtures.solid())
        assertInvalid(png, containing: "CRC mismatch in tEXt chunk")
    }

    func testValidAncillaryChunksAreAccepted() throws {
        let text = PNGFixtures.chunkBytes("tEXt", Array("Comment\0hello".utf8))
        var png = PNGFixtures.inserting(text, before: "IDAT", in: PNGFixtures.solid())
        png = PNGFixtures.inserting(text, before: "IEND", in: png)
        for mode in modes {
            XCTAssertEqual(try PNGValidator(mode: mode).validate(png), ImageInfo(width: 8, height: 8))
        }
    }

    func testMissingIENDIsTruncated() {
        let png = PNGFixtures.solid()
        assertInvalid(png.prefix(png.count - 12), containing: "no IEND")
    }

    func testSplitIDATIsRejected() {
        let text = PNGFixtures.chunkBytes("tEXt", Array("Comment\0x".utf8))
        let idat = PNGFixtures.chunkBytes("IDAT", [])
        var png = PNGFixtures.inserting(text, before: "IEND", in: PNGFixtures.solid())
        png = PNGFixtures.inserting(idat, before: "IEND", in: png)
        assertInvalid(png, containing: "IDAT chunks not consecutive")
    }

    func testCorruptDeflateWithValidCRCsPassesStructureButFailsFull() throws {
        // The documented trade-off: the structural check trusts CRCs; only decoding reads the stream.
        let png = PNGFixtures.withCorruptDeflate(PNGFixtures.solid(width: 64, height: 64))
        XCTAssertEqual(try PNGValidator(mode: .structure).validate(png), ImageInfo(width: 64, height: 64))
        assertInvalid(png, modes: [.full], containing: "IDAT")
    }

    func testInterlacedPaletteAndGrayImagesAreAcceptedInBothModes() throws {
        let interlacedRGB = PNGFixtures.build(width: 13, height: 11, colorType: 2, channels: 3, interlaced: true) { x, y in
            [UInt8(x * 10), UInt8(y * 10), 7]
        }
        let palette = PNGFixtures.build(width: 5, height: 4, colorType: 3, channels: 1, palette: [255, 0, 0, 0, 255, 0]) { x, y in
            [UInt8((x + y) % 2)]
        }
        let interlacedGray = PNGFixtures.build(width: 1, height: 1, colorType: 0, channels: 1, interlaced: true) { _, _ in [128] }
        for mode in modes {
            let validator = PNGValidator(mode: mode)
            XCTAssertEqual(try validator.validate(interlacedRGB), ImageInfo(width: 13, height: 11), "\(mode)")
            XCTAssertEqual(try validator.validate(palette), ImageInfo(width: 5, height: 4), "\(mode)")
            XCTAssertEqual(try validator.validate(interlacedGray), ImageInfo(width: 1, height: 1), "\(mode)")
        }
    }

    func testPaletteImageWithoutPLTEIsInvalid() {
        let png = PNGFixtures.build(width: 2, height: 2, colorType: 3, channels: 1) { _, _ in [0] }
        assertInvalid(png, containing: "PLTE")
    }

    func testEverySingleByteFlipIsRejectedInStructureMode() {
        let png = PNGFixtures.solid(width: 4, height: 3)
        let validator = PNGValidator(mode: .structure)
        for offset in 0..<png.count {
            for mask: UInt8 in [0xFF, 0x01, 0x80] {
                let broken = PNGFixtures.flipping(png, at: offset, mask: mask)
                let expected = offset < 8 ? "not-image" : "invalid-png"
                do {
                    _ = try validator.validate(broken)
                    XCTFail("flip \(mask) at offset \(offset) of \(png.count) was accepted")
                } catch {
                    XCTAssertEqual(error.kind, expected, "flip \(mask) at offset \(offset): \(error)")
                }
            }
        }
    }

    func testRandomDamageNeverCrashesEitherMode() {
        // Deterministic mutations; the assertion that matters is that the process survives
        // (and, under --sanitize=address, that nothing leaks or overflows).
        var generator = SeededGenerator(seed: 0x5EED)
        let sources = [PNGFixtures.solid(width: 16, height: 16),
                       PNGFixtures.build(width: 9, height: 7, colorType: 2, channels: 3, interlaced: true) { x, y in
                           [UInt8(x), UInt8(y), UInt8(x ^ y)]
                       }]
        var accepted = 0
        for iteration in 0..<3000 {
            var bytes = [UInt8](sources[iteration % sources.count])
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
                case 1: bytes.removeLast(Int.random(in: 0..<bytes.count, using: &generator))
                default: bytes.insert(UInt8.random(in: 0...255, using: &generator), at: Int.random(in: 0...bytes.count, using: &generator))
                }
                if bytes.isEmpty { break }
            }
            for mode in modes {
                if (try? PNGValidator(mode: mode).validate(Data(bytes))) != nil { accepted += 1 }
            }
        }
        XCTAssertLessThan(accepted, 60, "random damage is almost always caught")
    }

    private func assertNotPNG(_ data: Data, containing fragment: String, file: StaticString = #filePath, line: UInt = #line) {
        for mode in modes {
            XCTAssertThrowsError(try PNGValidator(mode: mode).validate(data), file: file, line: line) { error in
                guard case .notImage(let message) = error as? ItemError else {
                    return XCTFail("\(mode): expected notImage, got \(error)", file: file, line: line)
                }
                XCTAssertTrue(message.contains(fragment), "\(mode): \(message)", file: file, line: line)
            }
        }
    }

    private func assertInvalid(
        _ data: Data, modes: [ValidationMode] = ValidationMode.allCases, containing fragment: String,
        _ context: String = "", file: StaticString = #filePath, line: UInt = #line
    ) {
        for mode in modes {
            XCTAssertThrowsError(try PNGValidator(mode: mode).validate(data), file: file, line: line) { error in
                guard case .invalidImage(.png, let message) = error as? ItemError else {
                    return XCTFail("\(mode) \(context): expected invalidImage(.png), got \(error)", file: file, line: line)
                }
                XCTAssertFalse(message.isEmpty, file: file, line: line)
                XCTAssertTrue(message.contains(fragment), "\(mode) \(context): \(message)", file: file, line: line)
            }
        }
    }
}
