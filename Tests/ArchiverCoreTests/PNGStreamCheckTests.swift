import Foundation
import XCTest
@testable import ArchiverCore

/// The streamed PNG check (what `verify` uses for files of any size) agrees with the check of a
/// body held whole, in both modes, however the body is cut into pieces.
final class PNGStreamCheckTests: XCTestCase {
    private func streamed(_ data: Data, _ validator: PNGValidator, piece: Int) -> Result<ImageInfo, ItemError> {
        let check = PNGStreamCheck(validator)
        data.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let end = min(raw.count, offset + piece)
                check.feed(UnsafeRawBufferPointer(rebasing: raw[offset..<end]))
                offset = end
            }
        }
        return check.result()
    }

    func testEveryVerdictMatchesTheWholeBodyCheckWhateverThePieces() {
        let png = PNGFixtures.solid(width: 40, height: 30)
        let idat = PNGFixtures.chunk("IDAT", in: png)
        var truncated = png
        truncated.removeLast(5)
        let bodies: [String: Data] = [
            "good": png,
            "interlaced": PNGFixtures.build(width: 9, height: 9, colorType: 2, channels: 3, interlaced: true) { x, y in [UInt8(x), UInt8(y), 0] },
            "empty": Data(), "html": PNGFixtures.html, "jpeg": PNGFixtures.jpeg,
            "short signature": Data(PNGFixtures.signature.prefix(5)),
            "truncated": truncated, "no IEND": png.prefix(idat.dataOffset + idat.length + 4),
            "flipped": PNGFixtures.flipping(png, at: idat.dataOffset + 1),
            "trailing": png + Data("junk".utf8),
            "too wide": PNGFixtures.withHeaderSize(png, width: 70000, height: 30),
            "corrupt deflate": PNGFixtures.withCorruptDeflate(png),
            "text chunk": PNGFixtures.inserting(PNGFixtures.chunkBytes("tEXt", Array("a\0b".utf8)), before: "IDAT", in: png),
        ]
        for mode in ValidationMode.allCases {
            let validator = PNGValidator(mode: mode)
            for (name, body) in bodies.sorted(by: { $0.key < $1.key }) {
                let whole = Result { () throws(ItemError) in try validator.validate(body) }
                for piece in [1, 7, 1 << 16] {
                    let verdict = streamed(body, validator, piece: piece)
                    switch (whole, verdict) {
                    case (.success(let a), .success(let b)): XCTAssertEqual(a, b, "\(name) \(mode) \(piece)")
                    case (.failure(let a), .failure(let b)): XCTAssertEqual(a.kind, b.kind, "\(name) \(mode) \(piece): \(a) / \(b)")
                    default: XCTFail("\(name) \(mode) \(piece): whole \(whole), streamed \(verdict)")
                    }
                }
            }
        }
    }
}
