import Foundation
import XCTest
@testable import ArchiverCore

/// `--cacert` against a real TLS server (`openssl s_server`), and the open-file limit a high
/// `--concurrency` needs, through the built binary.
final class ConnectionOptionsTests: XCTestCase {
    /// A test CA, a certificate for 127.0.0.1 signed by it, and `openssl s_server -WWW` serving
    /// `dir` over HTTPS. Stopped when the test ends.
    private func tlsServer(serving dir: URL) throws -> (base: String, ca: String) {
        func openssl(_ arguments: [String]) throws {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
            process.arguments = arguments
            process.currentDirectoryURL = dir
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            XCTAssertEqual(process.terminationStatus, 0, "openssl \(arguments.joined(separator: " "))")
        }
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try openssl(["req", "-x509"] + ec + ["-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=archiver test CA"])
        try openssl(["req"] + ec + ["-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1"])
        try Data("subjectAltName=IP:127.0.0.1\n".utf8).write(to: dir.appendingPathComponent("ext"))
        try openssl([
            "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
            "-out", "server.pem", "-days", "2", "-extfile", "ext",
        ])

        let server = Process()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        server.arguments = ["s_server", "-WWW", "-accept", "127.0.0.1:0", "-cert", "server.pem", "-key", "server.key"]
        server.currentDirectoryURL = dir
        let output = Pipe()
        server.standardOutput = output
        server.standardError = FileHandle.nullDevice
        server.standardInput = FileHandle.nullDevice
        try server.run()
        addTeardownBlock {
            server.terminate()
            server.waitUntilExit()
        }
        // s_server prints "ACCEPT 127.0.0.1:<port>" once it listens.
        var text = ""
        var port: Int?
        while port == nil {
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty else { break }
            text += String(decoding: chunk, as: UTF8.self)
            let complete = text.split(separator: "\n").dropLast(text.hasSuffix("\n") ? 0 : 1)
            port = complete.first { $0.hasPrefix("ACCEPT ") }.flatMap { $0.split(separator: ":").last }.flatMap { Int($0) }
        }
        let listening = try XCTUnwrap(port, "s_server said: \(text)")
        return ("https://127.0.0.1:\(listening)", dir.appendingPathComponent("ca.pem").path)
    }

    func testCACertTrustsAServerTheSystemDoesNotAndIsCheckedAtStart() throws {
        let dir = Fixtures.temporaryDirectory(self)
        let image = Fixtures.served("/600/92c952")
        try image.write(to: dir.appendingPathComponent("a.png"))
        let (base, ca) = try tlsServer(serving: dir)
        let record = CatalogRecord(albumId: 1, id: 1, title: "t", url: base + "/a.png", thumbnailUrl: "")
        let catalog = try Fixtures.writeCatalog([record], to: dir.appendingPathComponent("c.json"))

        let untrusted = dir.appendingPathComponent("untrusted").path
        let refused = try CommandRunner.run(["run", "--catalog", catalog, "--out", untrusted, "--retries", "3", "--quiet"])
        XCTAssertEqual(refused.status, 1, "an unknown CA fails the item: certificate checks are never off")
        let failed = try Fixtures.manifest(in: URL(fileURLWithPath: untrusted)).items.first
        XCTAssertEqual(failed?.error?.kind, "tls")
        XCTAssertEqual(failed?.attempts, 1, "a certificate that does not verify is not tried again")
        XCTAssertTrue(failed?.error?.message.contains("--cacert") ?? false, "\(String(describing: failed?.error))")
        XCTAssertTrue(failed?.error?.message.lowercased().contains("certificate") ?? false, "\(String(describing: failed?.error))")

        let trusted = dir.appendingPathComponent("trusted")
        let fetched = try CommandRunner.run(["run", "--catalog", catalog, "--out", trusted.path, "--cacert", ca, "--quiet"])
        XCTAssertEqual(fetched.status, 0, fetched.stderr)
        XCTAssertEqual(try Data(contentsOf: trusted.appendingPathComponent("images/1.png")), image)

        for (path, words) in [("/nonexistent/ca.pem", ["--cacert", "cannot read"]), (catalog, ["--cacert", "no PEM certificate"])] {
            let result = try CommandRunner.run(["run", "--catalog", catalog, "--out", dir.appendingPathComponent("x").path, "--cacert", path])
            XCTAssertEqual(result.status, 2, result.stderr)
            XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, result.stderr)
            for word in words { XCTAssertTrue(result.stderr.contains(word), result.stderr) }
        }
    }

    /// With --http2 the requests to a host wait for its first connection (to multiplex on it).
    /// When every handshake fails on the certificate, each of them must end as `tls` with the
    /// handshake's error, not wait its turn in libcurl's queue until --timeout ends it: before,
    /// requests woken from the queue lost their place to new ones and some ended as `timeout`.
    func testWithHTTP2EveryRequestToAnUntrustedServerEndsAsTLSNotTimeout() throws {
        let dir = Fixtures.temporaryDirectory(self)
        let (base, _) = try tlsServer(serving: dir)
        let records = (1...400).map { CatalogRecord(albumId: 1, id: RecordID($0), title: "t", url: "\(base)/\($0).png", thumbnailUrl: "") }
        let catalog = try Fixtures.writeCatalog(records, to: dir.appendingPathComponent("c.json"))
        let out = dir.appendingPathComponent("out")
        let result = try CommandRunner.run([
            "run", "--catalog", catalog, "--out", out.path, "--http2", "--concurrency", "64", "--timeout", "5", "--quiet",
        ])
        XCTAssertEqual(result.status, 1, result.stderr)
        let items = try Fixtures.manifest(in: out).items
        let kinds = Dictionary(grouping: items, by: { $0.error?.kind ?? "done" }).mapValues(\.count)
        XCTAssertEqual(kinds, ["tls": 400])
        XCTAssertTrue(items.allSatisfy { $0.error?.message.contains("certificate") ?? false }, "\(items.first?.error as Any)")
    }

    /// Runs the binary under `sh -c 'ulimit ...; exec archiver ...'`.
    private func runLimited(_ limits: String, _ arguments: [String]) throws -> CommandResult {
        let quoted = arguments.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "\(limits) && exec '\(CommandRunner.executable.path)' \(quoted)"]
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return CommandResult(status: process.terminationStatus, stdout: "", stderr: String(decoding: stderr, as: UTF8.self))
    }

    func testHighConcurrencyRaisesTheSoftOpenFileLimitOrRefusesAtStart() throws {
        let server = try Fixtures.placeholderServer()
        let dir = Fixtures.temporaryDirectory(self)
        let catalog = try Fixtures.writeCatalog(Fixtures.records(50), to: dir.appendingPathComponent("c.json"))
        let mirror = "\(Fixtures.host)=\(server.baseURL)"
        let raised = try runLimited(
            "ulimit -S -n 256",
            ["run", "--catalog", catalog, "--out", dir.appendingPathComponent("a").path, "--concurrency", "1024", "--mirror", mirror, "--quiet"])
        XCTAssertEqual(raised.status, 0, "a soft limit of 256 is raised for 1024 in flight: \(raised.stderr)")
        XCTAssertEqual(Fixtures.imageNames(in: dir.appendingPathComponent("a")).count, 50)

        let out = dir.appendingPathComponent("b")
        let refused = try runLimited(
            "ulimit -S -n 512 && ulimit -H -n 512",
            ["run", "--catalog", catalog, "--out", out.path, "--concurrency", "1024", "--mirror", mirror])
        XCTAssertEqual(refused.status, 2)
        XCTAssertEqual(refused.stderr.split(separator: "\n").count, 1, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("--concurrency 1024 needs at least 1088 open files"), refused.stderr)
        XCTAssertTrue(refused.stderr.contains("hard limit is 512"), refused.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: out.path), "refused before anything is written")
    }
}
