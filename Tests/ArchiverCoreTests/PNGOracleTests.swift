import Foundation
import XCTest
@testable import ArchiverCore
@testable import ArchiverServer

/// Every PNG the tests and the fuzz seeds use has its verdict written here, and pngcheck (an
/// implementation that is not ours; `make test` installs it) must agree with that verdict, as
/// must `--validate full`. Without it a fixture made by our encoder and passed by our validator
/// proves only that the two agree with each other: `interlaced-3x3.png` carried extra image data
/// for months, and only pngcheck said so.
final class PNGOracleTests: XCTestCase {
    private static let pngcheck = "/usr/bin/pngcheck"
    private static let corpus = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz")

    /// The seeds of Fuzz/corpus/png and every input in Fuzz/crashes/png, by name: true for a
    /// valid PNG. A file missing from this table fails the test, so a new seed gets a verdict.
    private static let seeds: [String: Bool] = [
        "rgb-1x1.png": true, "rgb-4x3.png": true, "gray16-2x2.png": true, "rgba-2x2.png": true,
        "palette-2x2.png": true, "gray1-9x1.png": true, "interlaced-3x3.png": true, "text-chunks.png": true,
        "interlaced-extra-data.png": false, "bad-crc.png": false, "truncated.png": false, "after-iend.png": false,
        "huge-ihdr.png": false, "bomb-zTXt.png": false, "bomb-tEXt.png": false, "bomb-iTXt.png": false,
        "bomb-sPLT.png": false,
    ]

    /// Where the archiver is stricter than pngcheck, on purpose or past what pngcheck reads.
    private enum Stricter {
        /// A sound PNG larger than --validate's 16384 x 16384 limit: refused by policy in both
        /// modes, accepted by pngcheck and by a validator whose limit admits it.
        case beyondLimit
        /// Fewer rows than IHDR declares: pngcheck inflates the data but does not count rows,
        /// so it passes; only --validate full, which decodes every row, refuses it.
        case missingRows
    }

    /// The PNGs the Swift tests make (PNGFixtures, PNGEncoder, the placeholder server, the fault
    /// routes), with their verdicts.
    private static var fixtures: [(name: String, data: Data, valid: Bool)] {
        let solid = PNGFixtures.solid(width: 64, height: 64)
        var fixtures: [(String, Data, Bool)] = [(1, 1), (8, 8), (150, 150), (600, 150), (3, 1000)].map {
            ("PNGFixtures.solid \($0)x\($1)", PNGFixtures.solid(width: $0, height: $1), true)
        }
        fixtures += [
            ("PNGEncoder.solid 600x600", PNGEncoder.solid(width: 600, height: 600, red: 0x92, green: 0xC9, blue: 0x52), true),
            ("PNGEncoder.solid 2x2", PNGEncoder.solid(width: 2, height: 2, red: 1, green: 2, blue: 3), true),
            ("interlaced RGB 13x11", PNGFixtures.build(width: 13, height: 11, colorType: 2, channels: 3, interlaced: true) { x, y in
                [UInt8(x * 10), UInt8(y * 10), 7]
            }, true),
            ("interlaced RGB 9x7", PNGFixtures.build(width: 9, height: 7, colorType: 2, channels: 3, interlaced: true) { x, y in
                [UInt8(x), UInt8(y), UInt8(x ^ y)]
            }, true),
            ("palette 5x4", PNGFixtures.build(width: 5, height: 4, colorType: 3, channels: 1, palette: [255, 0, 0, 0, 255, 0]) { x, y in
                [UInt8((x + y) % 2)]
            }, true),
            ("interlaced gray 1x1", PNGFixtures.build(width: 1, height: 1, colorType: 0, channels: 1, interlaced: true) { _, _ in [128] }, true),
            ("tEXt before IDAT and IEND", PNGFixtures.inserting(PNGFixtures.chunkBytes("tEXt", Array("Comment\0hello".utf8)), before: "IDAT", in: solid), true),
            ("palette without PLTE", PNGFixtures.build(width: 2, height: 2, colorType: 3, channels: 1) { _, _ in [0] }, false),
            ("flipped IDAT byte", PNGFixtures.flipping(solid, at: PNGFixtures.chunk("IDAT", in: solid).dataOffset + 1), false),
            ("corrupt deflate, CRCs fixed", PNGFixtures.withCorruptDeflate(solid), false),
            ("data after IEND", solid + Data("junk".utf8), false),
            ("cut in IDAT", solid.prefix(PNGFixtures.chunk("IDAT", in: solid).end - 1), false),
            ("no IEND", solid.prefix(solid.count - 12), false),
            ("bad tEXt CRC", PNGFixtures.inserting(PNGFixtures.chunkBytes("tEXt", Array("Comment\0hello".utf8), crc: 0xDEAD_BEEF), before: "IEND", in: solid), false),
            ("FaultRoutes giant (60000x60000, an empty IDAT)", FaultRoutes.giantHeader(), false),
            ("FaultRoutes corrupt-idat", FaultRoutes.corruptIDAT(PNGEncoder.solid(width: 600, height: 600, red: 0x92, green: 0xC9, blue: 0x52)), false),
        ]
        for path in ["/600/92c952", "/150/771796", "/600/0ab", "/3/fff"] {
            if case .data(let data) = Fixtures.images.respond(to: HTTPRequest(method: "GET", path: path, headers: [:])).body {
                fixtures.append(("the placeholder server's \(path)", data, true))
            }
        }
        return fixtures.map { (name: $0.0, data: $0.1, valid: $0.2) }
    }

    /// pngcheck's verdict: exit 0 is a PNG without errors.
    private func pngcheckAccepts(_ data: Data, name: String) throws -> Bool {
        let file = Fixtures.temporaryDirectory(self).appendingPathComponent("check.png")
        try data.write(to: file)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.pngcheck)
        process.arguments = ["-q", file.path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus == 0
    }

    private func assertVerdicts(_ name: String, _ data: Data, valid: Bool, file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(try pngcheckAccepts(data, name: name), valid, "pngcheck on \(name)", file: file, line: line)
        let full = Result { () throws(ItemError) in try PNGValidator(mode: .full).validate(data) }
        XCTAssertEqual((try? full.get()) != nil, valid, "--validate full on \(name): \(full)", file: file, line: line)
        if valid {
            // structure checks less than full, so what is whole passes it too.
            XCTAssertNoThrow(try PNGValidator(mode: .structure).validate(data), "--validate structure on \(name)", file: file, line: line)
        }
    }

    override func setUpWithError() throws {
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: Self.pngcheck), "no \(Self.pngcheck): make test installs it (apt-get install pngcheck)")
        guard FileManager.default.isExecutableFile(atPath: Self.pngcheck) else { throw CocoaError(.fileNoSuchFile) }
    }

    func testEverySeedHasAVerdictThatPngcheckAndFullValidationShare() throws {
        var seen = 0
        for folder in ["corpus/png", "crashes/png"] {
            let directory = Self.corpus.appendingPathComponent(folder)
            let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter { !$0.hasPrefix(".") }
            for name in names.sorted() {
                guard let valid = Self.seeds[name] else {
                    XCTFail("\(folder)/\(name) has no verdict in PNGOracleTests.seeds")
                    continue
                }
                try assertVerdicts("\(folder)/\(name)", Data(contentsOf: directory.appendingPathComponent(name)), valid: valid)
                seen += 1
            }
        }
        XCTAssertEqual(seen, Self.seeds.count, "every seed in the table is in Fuzz/")
    }

    private static var stricter: [(name: String, data: Data, why: Stricter)] {
        let solid = PNGFixtures.solid(width: 64, height: 64)
        return [
            ("header 64x65 over 64x64 rows", PNGFixtures.withHeaderSize(solid, width: 64, height: 65), .missingRows),
            ("header 60000x60000 over 64x64 rows", PNGFixtures.withHeaderSize(solid, width: 60000, height: 60000), .beyondLimit),
        ]
    }

    func testWhereTheArchiverIsStricterThanPngcheckItSaysWhy() throws {
        for fixture in Self.stricter {
            XCTAssertTrue(try pngcheckAccepts(fixture.data, name: fixture.name), "pngcheck on \(fixture.name)")
            XCTAssertThrowsError(try PNGValidator(mode: .full).validate(fixture.data), fixture.name)
            switch fixture.why {
            case .beyondLimit:
                XCTAssertThrowsError(try PNGValidator(mode: .structure).validate(fixture.data), fixture.name) { error in
                    XCTAssertTrue("\(error)".contains("exceeds limit 16384"), "\(fixture.name): \(error)")
                }
                XCTAssertNoThrow(try PNGValidator(mode: .structure, maxDimension: 65536).validate(fixture.data), fixture.name)
            case .missingRows:
                XCTAssertNoThrow(try PNGValidator(mode: .structure).validate(fixture.data), fixture.name)
            }
        }
    }

    func testEveryTestFixtureHasAVerdictThatPngcheckAndFullValidationShare() throws {
        let fixtures = Self.fixtures
        XCTAssertEqual(fixtures.count, 25)
        for fixture in fixtures {
            try assertVerdicts(fixture.name, fixture.data, valid: fixture.valid)
        }
    }
}
