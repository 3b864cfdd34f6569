import Foundation
import XCTest
@testable import ArchiverCore

/// Replays every file of `make fuzz`'s seed corpora (`Fuzz/corpus/<target>/`) and every input a
/// fuzzer found (`Fuzz/crashes/<target>/`) through the same entry points the fuzz targets call:
/// a crash there fails the suite, so a fixed finding stays fixed.
final class FuzzCorpusTests: XCTestCase {
    private static let fuzz = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz")

    private func inputs(_ target: FuzzTarget) -> [URL] {
        ["corpus", "crashes"].flatMap { folder -> [URL] in
            let directory = Self.fuzz.appendingPathComponent(folder).appendingPathComponent(target.rawValue)
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
            return names.filter { !$0.hasPrefix(".") }.sorted().map { directory.appendingPathComponent($0) }
        }
    }

    private func replay(_ target: FuzzTarget, atLeast seeds: Int) throws {
        let files = inputs(target)
        XCTAssertGreaterThanOrEqual(files.count, seeds, "seed corpus of \(target) in \(Self.fuzz.path)")
        for file in files {
            let data = try Data(contentsOf: file)
            data.withUnsafeBytes { target.run($0) }
        }
    }

    func testPNGCorpusReplaysWithoutACrash() throws {
        try replay(.png, atLeast: 17)
    }

    /// What the png target requires (it traps otherwise), asserted here seed by seed: the whole
    /// body and the same bytes streamed get one verdict in each mode. (PNGOracleTests holds each
    /// seed's verdict itself to pngcheck.)
    func testPNGCorpusWholeAndStreamedVerdictsAgree() throws {
        var compared = 0
        for file in inputs(.png) {
            let data = try Data(contentsOf: file)
            for verdicts in data.withUnsafeBytes(FuzzTarget.pngVerdicts) {
                XCTAssertTrue(verdicts.whole.agrees(with: verdicts.streamed),
                              "\(file.lastPathComponent), \(verdicts.mode): whole \(verdicts.whole), streamed \(verdicts.streamed)")
                compared += 1
            }
        }
        XCTAssertEqual(compared, inputs(.png).count * ValidationMode.allCases.count)
    }

    func testJPEGCorpusReplaysWithoutACrash() throws {
        try replay(.jpeg, atLeast: 20)
    }

    func testWebPCorpusReplaysWithoutACrash() throws {
        try replay(.webp, atLeast: 12)
    }

    func testGIFCorpusReplaysWithoutACrash() throws {
        try replay(.gif, atLeast: 10)
    }

    func testCatalogCorpusReplaysWithoutACrash() throws {
        try replay(.catalog, atLeast: 11)
    }

    func testJournalCorpusReplaysWithoutACrash() throws {
        try replay(.journal, atLeast: 7)
    }

    func testCSVCorpusReplaysWithoutACrash() throws {
        try replay(.csv, atLeast: 18)
    }

    func testManifestCorpusReplaysWithoutACrash() throws {
        try replay(.manifest, atLeast: 11)
    }

    /// The seeds are what they say: the real ones read (as CSV, and swapped as TSV; the
    /// manifests item by item, also handed over a byte at a time), the broken ones are refused.
    func testTheCSVAndManifestSeedsReadOrAreRefusedAsMeant() throws {
        var options = CatalogOptions()
        options.format = .csv
        for (name, count) in [("three.csv", 3), ("quotes.csv", 4), ("crlf.csv", 3), ("bom.csv", 1), ("empty-cells.csv", 3), ("string-ids.csv", 6), ("real-crlf-string-ids.csv", 4), ("real-five.csv", 5)] {
            let data = try Data(contentsOf: Self.fuzz.appendingPathComponent("corpus/csv/\(name)"))
            XCTAssertEqual(try Catalog(source: name, data: data, options: options).records.count, count, name)
        }
        for name in ["duplicate-ids.csv", "no-id-column.csv", "ragged.csv", "unclosed-quote.csv", "quote-in-field.csv", "lone-cr.csv", "bad-group.csv"] {
            let data = try Data(contentsOf: Self.fuzz.appendingPathComponent("corpus/csv/\(name)"))
            XCTAssertThrowsError(try Catalog(source: name, data: data, options: options), name)
        }
        for (name, count) in [("mixed.json", 4), ("empty.json", 0), ("string-ids.json", 4), ("animated.json", 1), ("shard.json", 2), ("negative.json", 1), ("compact.json", 1), ("real-failed-string-ids.json", 4), ("real-interrupted-pending.json", 5)] {
            let bytes = try Array(Data(contentsOf: Self.fuzz.appendingPathComponent("corpus/manifest/\(name)")))
            for piece in [1, 1 << 16] {
                var items = 0
                do {
                    _ = try FuzzTarget.readManifest(bytes, piece: piece) { _ in items += 1 }
                } catch {
                    XCTFail("\(name): \(error)")
                }
                XCTAssertEqual(items, count, name)
            }
        }
        for name in ["truncated.json", "missing-header.json"] {
            let bytes = try Array(Data(contentsOf: Self.fuzz.appendingPathComponent("corpus/manifest/\(name)")))
            XCTAssertThrowsError(try FuzzTarget.readManifest(bytes, piece: 7) { _ in }, name)
        }
    }

    /// The seeds are what they say: the 45-byte chunk bombs of issue #16 fail validation.
    func testTheChunkBombSeedsAreRejectedInBothModes() throws {
        for kind in ["zTXt", "tEXt", "iTXt", "sPLT"] {
            let data = try Data(contentsOf: Self.fuzz.appendingPathComponent("corpus/png/bomb-\(kind).png"))
            XCTAssertEqual(data.count, 45)
            for mode in ValidationMode.allCases {
                XCTAssertThrowsError(try PNGValidator(mode: mode).validate(data), "\(kind), \(mode)")
            }
        }
        XCTAssertNoThrow(try PNGValidator(mode: .full).validate(Data(contentsOf: Self.fuzz.appendingPathComponent("corpus/png/text-chunks.png"))))
    }
}
