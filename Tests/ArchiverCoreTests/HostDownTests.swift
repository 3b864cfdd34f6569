import Foundation
import XCTest
@testable import ArchiverCore

/// A host that does not resolve or refuses every connection is marked down after a few URLs,
/// and the rest of its items fail at once as `host-down` instead of each running its retries.
final class HostDownTests: XCTestCase {
    /// `count` records with distinct URLs under `base`.
    private func catalog(_ count: Int, base: String, in directory: URL) throws -> String {
        let records = (1...count).map { id in
            CatalogRecord(albumId: 1, id: RecordID(id), title: "photo \(id)", url: "\(base)/600/\(id)", thumbnailUrl: "")
        }
        return try Fixtures.writeCatalog(records, to: directory.appendingPathComponent("catalog.json"))
    }

    /// Runs the binary over 2000 records and checks what a dead host must end in.
    private func assertHostDown(
        catalogHost: String, extra: [String] = [], downHost: String, hintsMirror: Bool,
        file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let directory = Fixtures.temporaryDirectory(self)
        let out = directory.appendingPathComponent("out")
        let catalog = try catalog(2000, base: catalogHost, in: directory)
        let result = try CommandRunner.run(["run", "--catalog", catalog, "--out", out.path, "--json"] + extra)

        XCTAssertEqual(result.status, 1, result.stderr, file: file, line: line)
        let announcements = result.stderr.components(separatedBy: "host \(downHost) is down").count - 1
        XCTAssertEqual(announcements, 1, "said once: \(result.stderr)", file: file, line: line)
        XCTAssertEqual(result.stderr.contains("--mirror \(downHost)=URL"), hintsMirror, result.stderr, file: file, line: line)
        let report = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        let requests = try XCTUnwrap(report?["requests"] as? Int, result.stdout, file: file, line: line)
        // Before: every record ran its 4 attempts, 8000 requests (and 800 s over 5000 records).
        XCTAssertLessThan(requests, 100, file: file, line: line)

        let items = try Fixtures.manifest(in: out).items
        XCTAssertEqual(items.count, 2000, file: file, line: line)
        XCTAssertEqual(items.filter { $0.error?.kind == "host-down" }.count, 2000, file: file, line: line)
        let message = items.last?.error?.message ?? ""
        XCTAssertTrue(message.contains("host \(downHost) is down") && message.contains("/600/2000"), message, file: file, line: line)
    }

    func testAHostThatDoesNotResolveIsDownAndItsItemsFailAtOnce() throws {
        // RFC 6761: a name under .invalid never resolves, so nothing leaves the machine.
        try assertHostDown(catalogHost: "http://archiver-test.invalid", downHost: "http://archiver-test.invalid", hintsMirror: true)
    }

    func testAMirrorThatRefusesConnectionsIsDownAndNoMirrorHintIsGiven() throws {
        let server = try TestServer()
        let dead = server.baseURL
        server.stop()  // nothing listens on its port now: every connection is refused
        try assertHostDown(
            catalogHost: Fixtures.host, extra: ["--mirror", "\(Fixtures.host)=\(dead)"], downHost: dead, hintsMirror: false)
    }

    func testAHostIsDownOnlyAfterDistinctURLsFailWithNoAnswer() {
        var health = HostHealth()
        for _ in 0..<10 {
            XCTAssertFalse(health.unreachable("http://a", url: "http://a/1", reason: "refused"), "one URL's retries")
        }
        for n in 2..<HostHealth.threshold {
            XCTAssertFalse(health.unreachable("http://a", url: "http://a/\(n)", reason: "refused"))
        }
        XCTAssertNil(health.down("http://a"))
        XCTAssertTrue(health.unreachable("http://a", url: "http://a/last", reason: "refused"))
        XCTAssertEqual(health.down("http://a"), "refused")
        XCTAssertFalse(health.unreachable("http://a", url: "http://a/more", reason: "refused"), "said once")
        XCTAssertNil(health.down("http://b"))
    }

    func testAHostThatAnsweredOnceIsNeverDown() {
        var health = HostHealth()
        health.answered("http://a")
        for n in 0..<(3 * HostHealth.threshold) {
            XCTAssertFalse(health.unreachable("http://a", url: "http://a/\(n)", reason: "refused"))
        }
        XCTAssertNil(health.down("http://a"))
    }

    func testTheDownLineHintsAtMirrorOnlyForTheCatalogsOwnHost() {
        let own = HostWatch.line(host: "http://x.invalid", reason: "Could not resolve host: x.invalid", mirrored: false)
        XCTAssertTrue(own.contains("--mirror http://x.invalid=URL"), own)
        XCTAssertTrue(own.contains("Could not resolve host"), own)
        let mirror = HostWatch.line(host: "http://127.0.0.1:9", reason: "refused", mirrored: true)
        XCTAssertFalse(mirror.contains("--mirror"), mirror)
    }
}
