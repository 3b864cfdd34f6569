import Foundation
import XCTest
@testable import ArchiverCore
@testable import ArchiverServer

#if canImport(Glibc)
import Glibc
#endif

/// The image corpus of `Fixtures/images/` (made by `scripts/make-image-corpus.sh` with the
/// reference encoders) run through the built binary from a loopback server: every file ends as
/// `expected.tsv` says, in both `--validate` modes, kept in its own format under its own
/// extension, whatever its URL or `Content-Type` say.
final class FormatRunTests: XCTestCase {
    struct Expectation {
        var file: String
        /// `jpeg 64x48 1` (format, size, frames) or a failure kind, per mode.
        var structure: String
        var full: String
    }

    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/images")

    static func expectations() throws -> [Expectation] {
        let text = try String(contentsOf: corpus.appendingPathComponent("expected.tsv"), encoding: .utf8)
        return text.split(separator: "\n").filter { !$0.hasPrefix("#") }.map { line in
            let fields = line.split(separator: "\t").map(String.init)
            return Expectation(file: fields[0], structure: fields[1], full: fields[2])
        }
    }

    /// Serves every corpus file at `/c/<n>` (no extension, always `image/png`: the archiver
    /// must not care) and returns the catalog of them, record n + 1 for file n.
    private func serveCorpus(_ expectations: [Expectation]) throws -> (TestServer, String) {
        let server = try TestServer()
        var records: [CatalogRecord] = []
        for (index, expectation) in expectations.enumerated() {
            let body = try Data(contentsOf: Self.corpus.appendingPathComponent(expectation.file))
            server.route("/c/\(index)", HTTPResponse(status: 200, headers: [("Content-Type", "image/png")], body: .data(body)))
            records.append(CatalogRecord(albumId: 1, id: RecordID(index + 1), title: expectation.file, url: "\(server.baseURL)/c/\(index)", thumbnailUrl: ""))
        }
        let catalog = try Fixtures.writeCatalog(records, to: Fixtures.temporaryDirectory(self).appendingPathComponent("corpus.json"))
        return (server, catalog)
    }

    /// The largest resident set of any child this process has waited for, in MiB.
    private func childrenPeakMiB() -> Double {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_CHILDREN.rawValue), &usage)
        return Double(usage.ru_maxrss) / 1024
    }

    func testEveryCorpusFileEndsAsExpectedInBothModesAndTheBundleVerifies() throws {
        let expectations = try Self.expectations()
        XCTAssertGreaterThan(expectations.count, 40)
        let (server, catalog) = try serveCorpus(expectations)
        _ = server
        for mode in ValidationMode.allCases {
            let out = Fixtures.temporaryDirectory(self).appendingPathComponent("out-\(mode)")
            let result = try CommandRunner.run(["run", "--catalog", catalog, "--out", out.path, "--validate", mode.rawValue, "--retries", "0"])
            XCTAssertEqual(result.status, 1, "some corpus files are broken: \(result.stderr)")
            let items = try Fixtures.manifest(in: out).items
            XCTAssertEqual(items.count, expectations.count)
            var names: Set<String> = []
            for (index, expectation) in expectations.enumerated() {
                let item = items[index]
                let want = mode == .full ? expectation.full : expectation.structure
                let context = "\(expectation.file) --validate \(mode): \(item.error?.message ?? "done")"
                let parts = want.split(separator: " ")
                if parts.count == 3, let format = ImageFormat(rawValue: String(parts[0])) {
                    let size = parts[1].split(separator: "x").compactMap { Int($0) }
                    XCTAssertEqual(item.status, .done, context)
                    XCTAssertEqual(item.format, format, context)
                    XCTAssertEqual(item.path, "images/\(index + 1).\(format.fileExtension)", context)
                    XCTAssertEqual([item.width ?? 0, item.height ?? 0], size, context)
                    XCTAssertEqual(item.frames ?? 1, Int(parts[2]), context)
                    names.insert("\(index + 1).\(format.fileExtension)")
                } else {
                    XCTAssertEqual(item.status, .failed, context)
                    XCTAssertEqual(item.error?.kind, want, context)
                }
            }
            XCTAssertEqual(Set(Fixtures.imageNames(in: out)), names, "one file per done item, none for a failure")
            let verify = try CommandRunner.run(["verify", out.path])
            XCTAssertEqual(verify.status, 0, verify.stdout + verify.stderr)
        }
        if !Sanitizers.active { XCTAssertLessThan(childrenPeakMiB(), 200, "peak RSS of the runs (bombs included)") }
    }

    func testAcceptPNGRefusesEveryOtherFormatAsUnaccepted() throws {
        let expectations = try Self.expectations()
        let (server, catalog) = try serveCorpus(expectations)
        _ = server
        let out = Fixtures.temporaryDirectory(self).appendingPathComponent("out")
        let result = try CommandRunner.run(["run", "--catalog", catalog, "--out", out.path, "--accept", "png", "--retries", "0"])
        XCTAssertEqual(result.status, 1, result.stderr)
        let items = try Fixtures.manifest(in: out).items
        var unaccepted = 0
        for (index, expectation) in expectations.enumerated() {
            let item = items[index]
            let body = try Data(contentsOf: Self.corpus.appendingPathComponent(expectation.file))
            let format = ImageFormat.sniff(body)
            if let format, format != .png {
                XCTAssertEqual(item.error?.kind, "unaccepted-format", expectation.file)
                XCTAssertTrue(item.error?.message.contains(format.displayName) ?? false, item.error?.message ?? "")
                unaccepted += 1
            } else if item.status == .done {
                XCTAssertEqual(item.format, .png, expectation.file)
            }
        }
        XCTAssertGreaterThan(unaccepted, 30)
        XCTAssertTrue(Fixtures.imageNames(in: out).allSatisfy { $0.hasSuffix(".png") }, "\(Fixtures.imageNames(in: out))")
    }

    /// A URL that served a PNG and now serves a JPEG: `--refresh` replaces `images/1.png` by
    /// `images/1.jpg`, leaves no orphan, and the bundle verifies; a prune run keeps it.
    func testRefreshReplacesAPNGByTheJPEGTheURLNowServesWithNoOrphan() throws {
        let server = try Fixtures.placeholderServer()
        let png = Fixtures.served("/600/112233")
        let jpeg = try Data(contentsOf: Self.corpus.appendingPathComponent("jpeg-baseline.jpg"))
        server.route("/photo", HTTPResponse(status: 200, headers: [("Content-Type", "image/png")], body: .data(png)))
        let dir = Fixtures.temporaryDirectory(self)
        let records = [
            CatalogRecord(albumId: 1, id: 1, title: "changes", url: "\(server.baseURL)/photo", thumbnailUrl: ""),
            CatalogRecord(albumId: 1, id: 2, title: "stays", url: "\(server.baseURL)/600/445566", thumbnailUrl: ""),
        ]
        let catalog = try Fixtures.writeCatalog(records, to: dir.appendingPathComponent("c.json"))
        let out = dir.appendingPathComponent("out")
        let first = try CommandRunner.run(["run", "--catalog", catalog, "--out", out.path])
        XCTAssertEqual(first.status, 0, first.stderr)
        XCTAssertEqual(Fixtures.imageNames(in: out), ["1.png", "2.png"])

        server.route("/photo", HTTPResponse(status: 200, headers: [("Content-Type", "image/png")], body: .data(jpeg)))
        let refresh = try CommandRunner.run(["run", "--catalog", catalog, "--out", out.path, "--refresh", "--prune"])
        XCTAssertEqual(refresh.status, 0, refresh.stderr)
        XCTAssertEqual(Fixtures.imageNames(in: out), ["1.jpg", "2.png"])
        let item = try XCTUnwrap(Fixtures.manifest(in: out).items.first)
        XCTAssertEqual(item.format, .jpeg)
        XCTAssertEqual(item.path, "images/1.jpg")
        XCTAssertEqual(try Data(contentsOf: out.appendingPathComponent("images/1.jpg")), jpeg)
        let verify = try CommandRunner.run(["verify", out.path])
        XCTAssertEqual(verify.status, 0, verify.stdout + verify.stderr)

        // A plain rerun resumes the JPEG without a request.
        let before = server.count("/photo")
        let again = try CommandRunner.run(["run", "--catalog", catalog, "--out", out.path])
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertEqual(server.count("/photo"), before)
    }

    /// A file of another format left beside a done image (a run killed between its journal line
    /// and the old file's removal) is called unexpected by `verify` and removed by `--prune`.
    func testAStaleFileInAnotherFormatIsUnexpectedAndPruned() throws {
        let server = try Fixtures.placeholderServer()
        let dir = Fixtures.temporaryDirectory(self)
        let catalog = try Fixtures.writeCatalog(Fixtures.records(2), to: dir.appendingPathComponent("c.json"))
        let out = dir.appendingPathComponent("out")
        let mirror = "\(Fixtures.host)=\(server.baseURL)"
        XCTAssertEqual(try CommandRunner.run(["run", "--catalog", catalog, "--out", out.path, "--mirror", mirror]).status, 0)
        let stale = out.appendingPathComponent("images/1.gif")
        try Data(contentsOf: Self.corpus.appendingPathComponent("gif-static.gif")).write(to: stale)
        let verify = try CommandRunner.run(["verify", out.path])
        XCTAssertEqual(verify.status, 1, verify.stdout)
        XCTAssertTrue(verify.stdout.contains("images/1.gif"), verify.stdout)
        let pruned = try CommandRunner.run(["run", "--catalog", catalog, "--out", out.path, "--mirror", mirror, "--prune"])
        XCTAssertEqual(pruned.status, 0, pruned.stderr)
        XCTAssertEqual(Fixtures.imageNames(in: out), ["1.png", "2.png"])
    }
}
