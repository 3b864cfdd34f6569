#if canImport(Glibc)
import Glibc
#endif
import Foundation
import XCTest
@testable import ArchiverCore

/// The corpus of `scripts/make-image-corpus.sh` (`Fixtures/images/`), every file through the
/// dispatcher `ImageValidator` in both modes, against the verdicts its `expected.tsv` states.
final class ImageFormatValidatorTests: XCTestCase {
    private static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/images")

    /// One line of `expected.tsv`: a file and its verdict in each mode.
    private struct Expectation {
        var file: String
        var verdicts: [ValidationMode: String]
    }

    private func expectations() throws -> [Expectation] {
        let text = try String(contentsOf: Self.folder.appendingPathComponent("expected.tsv"), encoding: .utf8)
        return text.split(separator: "\n").filter { !$0.hasPrefix("#") }.map { line in
            let fields = line.split(separator: "\t").map(String.init)
            return Expectation(file: fields[0], verdicts: [.structure: fields[1], .full: fields[2]])
        }
    }

    private func data(_ file: String) throws -> Data {
        try Data(contentsOf: Self.folder.appendingPathComponent(file))
    }

    /// `jpeg 64x48 1` for an image, the failure's kind otherwise.
    private func verdict(_ validator: ImageValidator, _ data: Data) -> String {
        do {
            let info = try validator.validate(data)
            return "\(info.format.rawValue) \(info.width)x\(info.height) \(info.frames)"
        } catch {
            return error.kind
        }
    }

    func testEveryCorpusFileGetsItsExpectedVerdictInBothModes() throws {
        let expected = try expectations()
        XCTAssertGreaterThanOrEqual(expected.count, 45)
        for mode in ValidationMode.allCases {
            let validator = ImageValidator(mode: mode)
            for item in expected {
                XCTAssertEqual(verdict(validator, try data(item.file)), item.verdicts[mode], "\(item.file), \(mode)")
            }
        }
    }

    func testEveryCorpusFileIsListedWithItsVerdict() throws {
        let listed = Set(try expectations().map(\.file))
        let present = Set(try FileManager.default.contentsOfDirectory(atPath: Self.folder.path)).subtracting(["expected.tsv"])
        XCTAssertEqual(listed, present)
    }

    func testBrokenFilesSayWhatIsWrong() throws {
        let cases: [(file: String, mode: ValidationMode, fragment: String)] = [
            ("jpeg-bomb-65500.jpg", .structure, "broken JPEG: image 65500x65500 exceeds limit 16384"),
            ("jpeg-bomb-210-scans.jpg", .structure, "more than 100 scans"),
            ("jpeg-bomb-memory-6144.jpg", .full, "more than the 64 MiB memory limit"),
            ("jpeg-corrupt-scan.jpg", .full, "Corrupt JPEG data: premature end of data segment"),
            ("jpeg-no-eoi.jpg", .structure, "truncated: data ends inside scan 1"),
            ("jpeg-segment-past-end.jpg", .structure, "truncated: segment 0xFFE0 at offset 2 runs past end of data"),
            ("jpeg-trailing-junk.jpg", .structure, "data after EOI (17 bytes"),
            ("webp-riff-size-lies.webp", .structure, "broken WebP: truncated: RIFF size says 254 bytes, data has 154"),
            ("webp-trailing-junk.webp", .structure, "data after the RIFF end (4 bytes"),
            ("webp-bomb-100000.webp", .structure, "image 100000x100000 exceeds limit 16384"),
            ("webp-bomb-memory-4500.webp", .full, "decoding needs about 77 MiB, over the 64 MiB limit"),
            ("webp-corrupt-data.webp", .full, "image data does not decode"),
            ("gif-header-alone.gif", .structure, "broken GIF: truncated: 6 bytes"),
            ("gif-bomb-65535.gif", .structure, "image 65535x65535 exceeds limit 16384"),
            ("gif-bomb-frame-65535.gif", .structure, "frame 65535x65535 exceeds limit 16384"),
            ("gif-trailing-junk.gif", .structure, "data after the trailer (4 bytes"),
            ("gif-corrupt-lzw.gif", .full, "frame 1 does not decode"),
            ("html-named-as.jpg", .structure, "not an image: body looks like HTML or XML"),
        ]
        for item in cases {
            XCTAssertThrowsError(try ImageValidator(mode: item.mode).validate(data(item.file))) { error in
                XCTAssertTrue("\(error)".contains(item.fragment), "\(item.file), \(item.mode): \(error)")
            }
        }
    }

    func testAcceptingOnlyPNGRefusesEveryOtherImageAsUnacceptedFormat() throws {
        let validator = ImageValidator(accepted: AcceptedFormats(parsing: "png")!)
        var refused = 0
        for item in try expectations() {
            let format = item.verdicts[.structure]!.split(separator: " ").first.map(String.init)
            let body = try data(item.file)
            switch format {
            case "png":
                XCTAssertEqual(verdict(validator, body), item.verdicts[.structure], item.file)
            case "not-image":
                XCTAssertEqual(verdict(validator, body), "not-image", item.file)
            default:
                // Broken or not, a JPEG, WebP or GIF is refused for its format before it is checked.
                XCTAssertThrowsError(try validator.validate(body), item.file) { error in
                    XCTAssertEqual((error as? ItemError)?.kind, "unaccepted-format", item.file)
                    XCTAssertTrue("\(error)".contains("--accept png leaves out"), "\(error)")
                }
                refused += 1
            }
        }
        XCTAssertGreaterThanOrEqual(refused, 40)
    }

    func testHTMLAndEmptyBodiesAreNotImages() {
        for mode in ValidationMode.allCases {
            let validator = ImageValidator(mode: mode)
            XCTAssertEqual(verdict(validator, Data("<!doctype html><html><body>404</body></html>".utf8)), "not-image")
            XCTAssertEqual(verdict(validator, Data()), "not-image")
            XCTAssertThrowsError(try validator.validate(Data())) { error in
                XCTAssertEqual("\(error)", "not an image: empty body")
            }
        }
    }

    func testEachFormatsValidatorCalledDirectlyCallsOtherBodiesNotImages() {
        let html = Data("<html></html>".utf8)
        let validators: [any ImageValidating] = [ShimValidator(.jpeg), ShimValidator(.webp), ShimValidator(.gif)]
        for validator in validators {
            for body in [Data(), html, PNGFixtures.solid()] {
                XCTAssertThrowsError(try validator.validate(body)) { error in
                    XCTAssertEqual((error as? ItemError)?.kind, "not-image", "\(validator): \(error)")
                }
            }
        }
    }

    /// A body cut anywhere is never accepted: no EOI, no trailer, or a RIFF size that lies.
    func testEveryTruncationOfAGoodFileFailsInBothModes() throws {
        for (file, kind) in [("jpeg-progressive.jpg", "invalid-jpeg"), ("jpeg-restart.jpg", "invalid-jpeg"),
                             ("webp-alpha.webp", "invalid-webp"), ("webp-animated.webp", "invalid-webp"),
                             ("gif-animated.gif", "invalid-gif")] {
            let whole = try data(file)
            for mode in ValidationMode.allCases {
                let validator = ImageValidator(mode: mode)
                for cut in 0..<whole.count {
                    let got = verdict(validator, whole.prefix(cut))
                    XCTAssertTrue(got == kind || got == "not-image", "\(file) cut at \(cut), \(mode): \(got)")
                }
            }
        }
    }

    func testMaxDimensionIsConfigurableForEveryFormat() throws {
        for file in ["jpeg-large-progressive.jpg", "webp-large-lossless.webp"] {
            for mode in ValidationMode.allCases {
                XCTAssertNoThrow(try ImageValidator(mode: mode, maxDimension: 1024).validate(data(file)), file)
                XCTAssertThrowsError(try ImageValidator(mode: mode, maxDimension: 1023).validate(data(file))) { error in
                    XCTAssertTrue("\(error)".contains("1024x768 exceeds limit 1023"), "\(file): \(error)")
                }
            }
        }
        XCTAssertThrowsError(try ImageValidator(maxDimension: 4095).validate(data("gif-large-4096.gif"))) { error in
            XCTAssertTrue("\(error)".contains("4096x4096 exceeds limit 4095"), "\(error)")
        }
    }

    /// Deterministic damage to every good file; what matters is that the process survives (and,
    /// under AddressSanitizer, that nothing overflows or leaks).
    func testRandomDamageNeverCrashesEitherMode() throws {
        var generator = SeededGenerator(seed: 0xC0FFEE)
        let good = try expectations().filter { $0.verdicts[.full]?.contains("x") == true && !$0.file.contains("large") }
        for item in good {
            let source = [UInt8](try data(item.file))
            for _ in 0..<60 {
                var bytes = source
                for _ in 0..<Int.random(in: 1...4, using: &generator) {
                    bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
                }
                for mode in ValidationMode.allCases {
                    _ = verdict(ImageValidator(mode: mode), Data(bytes))
                }
            }
        }
    }

    /// A long animation of large frames is a CPU bomb of few bytes: full mode refuses to decode
    /// more than 2^30 pixels over all frames (GIF) or composited canvases (WebP), from the headers.
    func testFullModeRefusesAnimationsOverItsPixelBudgetBeforeDecoding() throws {
        let gif = Self.repeatingFrames(ofGIF: try data("gif-large-4096.gif"), times: 70)
        let webp = Self.repeatingFrames(ofWebP: try data("webp-animated.webp"), canvas: 2048, times: 100)
        XCTAssertEqual(try ImageValidator(mode: .structure).validate(gif), ImageInfo(format: .gif, width: 4096, height: 4096, frames: 70))
        XCTAssertEqual(try ImageValidator(mode: .structure).validate(webp), ImageInfo(format: .webp, width: 2048, height: 2048, frames: 300))
        XCTAssertThrowsError(try ImageValidator(mode: .full).validate(gif)) { error in
            XCTAssertTrue("\(error)".contains("70 frames of 1174405120 pixels in all, over full mode's limit of 1073741824"), "\(error)")
        }
        XCTAssertThrowsError(try ImageValidator(mode: .full).validate(webp)) { error in
            XCTAssertTrue("\(error)".contains("300 frames of a 2048x2048 canvas, over full mode's limit of 1073741824 pixels"), "\(error)")
        }
        // Under the budget, the same construction decodes.
        let shorter = Self.repeatingFrames(ofWebP: try data("webp-animated.webp"), canvas: 2048, times: 2)
        XCTAssertEqual(try ImageValidator(mode: .full).validate(shorter), ImageInfo(format: .webp, width: 2048, height: 2048, frames: 6))
    }

    /// The GIF with its blocks (extensions and frames) repeated `times` times before the trailer.
    private static func repeatingFrames(ofGIF gif: Data, times: Int) -> Data {
        let bytes = [UInt8](gif)
        let start = 13 + (bytes[10] & 0x80 != 0 ? 3 << (Int(bytes[10] & 7) + 1) : 0)
        let blocks = Array(bytes[start..<(bytes.count - 1)])
        return Data(bytes[..<start] + (0..<times).flatMap { _ in blocks } + [0x3B])
    }

    /// The animated WebP with its canvas made `canvas` square and its ANMF chunks repeated.
    private static func repeatingFrames(ofWebP webp: Data, canvas: Int, times: Int) -> Data {
        let bytes = [UInt8](webp)
        var head: [UInt8] = [], frames: [UInt8] = []
        var pos = 12
        while pos < bytes.count {
            let size = Int(bytes[pos + 4]) | Int(bytes[pos + 5]) << 8 | Int(bytes[pos + 6]) << 16 | Int(bytes[pos + 7]) << 24
            let chunk = Array(bytes[pos..<(pos + 8 + size + (size & 1))])
            if chunk.starts(with: Array("ANMF".utf8)) { frames += chunk } else { head += chunk }
            pos += chunk.count
        }
        precondition(head.starts(with: Array("VP8X".utf8)))
        let side = [UInt8(truncatingIfNeeded: canvas - 1), UInt8(truncatingIfNeeded: (canvas - 1) >> 8), UInt8(truncatingIfNeeded: (canvas - 1) >> 16)]
        head.replaceSubrange(12..<18, with: side + side)
        let body = Array("WEBP".utf8) + head + (0..<times).flatMap { _ in frames }
        let size = UInt32(body.count)
        return Data(Array("RIFF".utf8) + [UInt8(size & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size >> 16 & 0xFF), UInt8(size >> 24)] + body)
    }

    /// Prints what each mode costs per format (no assertion on speed: the machine is shared).
    func testStructureVersusFullCostPerFormat() throws {
        let files = ["jpeg-baseline.jpg", "jpeg-large-progressive.jpg", "webp-lossy.webp", "webp-large-lossless.webp",
                     "webp-animated.webp", "gif-static.gif", "gif-large-4096.gif"]
        for file in files {
            let body = try data(file)
            var micros: [ValidationMode: Double] = [:]
            for mode in ValidationMode.allCases {
                let validator = ImageValidator(mode: mode)
                XCTAssertNoThrow(try validator.validate(body), file)
                let first = ContinuousClock().measure { _ = try? validator.validate(body) }
                // About 50 ms a file and mode: one run of the 4096 x 4096 GIF's full decode is more.
                let runs = first > .milliseconds(5) ? 1 : 20
                let elapsed = ContinuousClock().measure {
                    for _ in 0..<runs { _ = try? validator.validate(body) }
                }
                let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                micros[mode] = seconds / Double(runs) * 1e6
            }
            print(String(format: "validation cost of %@ (%d bytes): structure %.1f us, full %.1f us",
                         file, body.count, micros[.structure] ?? 0, micros[.full] ?? 0))
        }
    }

    /// The bombs and the largest good files, validated in full mode in a child process (this test
    /// run again with `IMAGE_RSS_CHILD=1`) so that its peak resident memory is theirs alone.
    func testPeakMemoryOfBombsAndLargeFilesStaysBounded() throws {
        let files = ["jpeg-bomb-65500.jpg", "jpeg-bomb-210-scans.jpg", "jpeg-bomb-memory-6144.jpg", "jpeg-large-progressive.jpg",
                     "webp-bomb-100000.webp", "webp-bomb-memory-4500.webp", "webp-large-lossless.webp",
                     "gif-bomb-65535.gif", "gif-bomb-frame-65535.gif", "gif-large-4096.gif"]
        if ProcessInfo.processInfo.environment["IMAGE_RSS_CHILD"] == "1" {
            let before = Self.peakRSS()
            for _ in 0..<3 {
                for file in files {
                    for mode in ValidationMode.allCases { _ = verdict(ImageValidator(mode: mode), try data(file)) }
                }
            }
            print("IMAGE_RSS before=\(before) after=\(Self.peakRSS())")
            return
        }
        let child = Process()
        child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        child.arguments = ["ArchiverCoreTests.ImageFormatValidatorTests/testPeakMemoryOfBombsAndLargeFilesStaysBounded"]
        child.environment = ProcessInfo.processInfo.environment.merging(["IMAGE_RSS_CHILD": "1"]) { $1 }
        let pipe = Pipe()
        child.standardOutput = pipe
        child.standardError = FileHandle.nullDevice
        try child.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        child.waitUntilExit()
        guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix("IMAGE_RSS ") }) else {
            throw XCTSkip("could not run this test binary as a child: \(output.suffix(300))")
        }
        let values = line.split(separator: " ").dropFirst().compactMap { $0.split(separator: "=").last.flatMap { Int($0) } }
        XCTAssertEqual(values.count, 2, String(line))
        let (before, after) = (values[0], values[1])
        print(String(format: "peak RSS validating image bombs and large files in full mode: %.1f MiB (%.1f MiB before)",
                     Double(after) / 1_048_576, Double(before) / 1_048_576))
        // ThreadSanitizer and AddressSanitizer keep shadow memory for every byte (`make sanitize`):
        // there only the growth is held to its bound.
        if !Sanitizers.active { XCTAssertLessThan(after, 200 << 20, "peak RSS of the child") }
        XCTAssertLessThan(after - before, 64 << 20, "peak RSS growth of the child")
    }

    /// The process's peak resident memory so far, in bytes.
    private static func peakRSS() -> Int {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        return usage.ru_maxrss * 1024
    }
}
