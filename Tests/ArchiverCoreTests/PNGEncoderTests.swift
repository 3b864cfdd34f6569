import Foundation
import XCTest
@testable import ArchiverCore
@testable import ArchiverServer

final class PNGEncoderTests: XCTestCase {
    func testSameArgumentsGiveTheSameBytes() {
        let first = PNGEncoder.solid(width: 600, height: 600, red: 200, green: 200, blue: 200)
        let second = PNGEncoder.solid(width: 600, height: 600, red: 200, green: 200, blue: 200)
        XCTAssertEqual(first, second)
    }

    func testDifferentColoursOrSizesGiveDifferentBytes() {
        let grey = PNGEncoder.solid(width: 150, height: 150, red: 200, green: 200, blue: 200)
        XCTAssertNotEqual(grey, PNGEncoder.solid(width: 150, height: 150, red: 200, green: 200, blue: 201))
        XCTAssertNotEqual(grey, PNGEncoder.solid(width: 150, height: 151, red: 200, green: 200, blue: 200))
    }

    func testOutputIsAOneBitPalettePNGWithoutATimeChunk() throws {
        let png = PNGEncoder.solid(width: 600, height: 150, red: 1, green: 2, blue: 3)
        XCTAssertEqual(Array(png.prefix(8)), PNGFixtures.signature)
        let chunks = PNGFixtures.chunks(in: png)
        XCTAssertEqual(chunks.first?.type, "IHDR")
        XCTAssertEqual(chunks.last?.type, "IEND")
        XCTAssertEqual(chunks.last?.end, png.count)
        XCTAssertFalse(chunks.contains { $0.type == "tIME" })
        let ihdr = Array(png[(chunks[0].dataOffset)..<(chunks[0].dataOffset + 13)])
        XCTAssertEqual(Array(ihdr[0..<8]), [0, 0, 0x02, 0x58, 0, 0, 0, 0x96], "600x150")
        XCTAssertEqual(ihdr[8], 1, "bit depth")
        XCTAssertEqual(ihdr[9], 3, "colour type palette")
        let plte = try XCTUnwrap(chunks.first { $0.type == "PLTE" })
        XCTAssertEqual(Array(png[plte.dataOffset..<(plte.dataOffset + 3)]), [1, 2, 3], "the one palette entry is the colour")
        XCTAssertEqual(ihdr[12], 0, "not interlaced")
    }

    func testOutputPassesFullValidationAtCatalogSizes() throws {
        for (width, height) in [(600, 600), (150, 150), (1, 1), (1, 600), (4000, 2)] {
            let png = PNGEncoder.solid(width: width, height: height, red: 0xCC, green: 0xCC, blue: 0xCC)
            XCTAssertEqual(try PNGValidator(mode: .full).validate(png), ImageInfo(width: width, height: height))
        }
    }

    func testSolidColourCompressesWell() {
        let png = PNGEncoder.solid(width: 600, height: 600, red: 0xCC, green: 0xCC, blue: 0xCC)
        XCTAssertLessThan(png.count, 10_000, "600x600 solid colour is \(png.count) bytes")
    }
}
