import Foundation
import XCTest
@testable import ArchiverCore
@testable import ArchiverServer

/// The built `archiver` binary: usage errors, catalog errors and exit statuses, as a user sees them.
final class CommandLineTests: XCTestCase {
    private func assertUsageError(_ arguments: [String], mentions words: [String], file: StaticString = #filePath, line: UInt = #line) throws {
        assertOneLineError(try CommandRunner.run(arguments), mentions: words, file: file, line: line)
    }

    func testUsageErrorsExitTwoWithOneLineNamingTheProblem() throws {
        let dir = Fixtures.temporaryDirectory(self)
        let catalog = try Fixtures.writeCatalog(Fixtures.records(1), to: dir.appendingPathComponent("c.json"))
        let out = dir.appendingPathComponent("out").path
        try assertUsageError([], mentions: ["no command"])
        try assertUsageError(["frobnicate"], mentions: ["unknown command", "frobnicate"])
        try assertUsageError(["run", "--catalog", catalog, "--out", out, "--bogus"], mentions: ["unknown option", "--bogus"])
        try assertUsageError(["run", "--catalog", catalog, "--concurrency", "0"], mentions: ["--concurrency", "1 to 1024"])
        try assertUsageError(["run", "--catalog", catalog, "--concurrency", "1025"], mentions: ["--concurrency"])
        try assertUsageError(["run", "--catalog", catalog, "--concurrency", "many"], mentions: ["--concurrency", "many"])
        try assertUsageError(["run", "--catalog", catalog, "--field", ""], mentions: ["--field", "KEY", "empty"])
        try assertUsageError(["run", "--catalog", catalog, "--format", "xml"], mentions: ["--format", "json, jsonl, csv or tsv"])
        try assertUsageError(["run", "--catalog", catalog, "--records", "data"], mentions: ["--records", "JSON Pointer"])
        try assertUsageError(["run", "--catalog", catalog, "--mirror", "nothing"], mentions: ["--mirror", "FROM=TO"])
        try assertUsageError(["run", "--catalog", catalog, "--validate", "maybe"], mentions: ["--validate"])
        try assertUsageError(["run", "--catalog", catalog, "--timeout", "-1"], mentions: ["--timeout"])
        try assertUsageError(["run", "--catalog"], mentions: ["--catalog needs a value"])
        try assertUsageError(["run", "stray"], mentions: ["unexpected argument", "stray"])
        try assertUsageError(["serve", "--port", "70000"], mentions: ["--port"])
        try assertUsageError(["status", "--nope"], mentions: ["--nope"])
        XCTAssertTrue(FileManager.default.fileExists(atPath: out) == false, "a usage error writes nothing")
    }

    func testStatusOfAMissingDirectorySaysItDoesNotExist() throws {
        let missing = Fixtures.temporaryDirectory(self).appendingPathComponent("nope").path
        try assertUsageError(["status", missing], mentions: ["\(missing) does not exist"])
    }

    func testVerifyHelpNamesEveryFormatItChecks() throws {
        let help = try CommandRunner.run(["verify", "--help"])
        XCTAssertEqual(help.status, 0)
        XCTAssertTrue(help.stdout.contains("a sound PNG, JPEG, WebP or GIF"), help.stdout)
    }

    /// `--catalog -` with nothing on standard input and no copy of an earlier run's to reuse:
    /// said as that, and, as for any bad catalog, nothing is left behind (no `DIR/.archiver/`).
    func testAnEmptyStandardInputWithNothingToReuseIsSaidAndWritesNothing() throws {
        let out = Fixtures.temporaryDirectory(self).appendingPathComponent("fresh/out")
        try assertUsageError(["run", "--catalog", "-", "--out", out.path], mentions: ["standard input is empty", "no copy"])
        XCTAssertFalse(FileManager.default.fileExists(atPath: out.deletingLastPathComponent().path), "a refused catalog writes nothing")
    }

    func testCatalogErrorsExitTwoNamingWhereTheProblemIs() throws {
        let dir = Fixtures.temporaryDirectory(self)
        func catalog(_ name: String, _ text: String) throws -> String {
            let url = dir.appendingPathComponent(name)
            try Data(text.utf8).write(to: url)
            return url.path
        }
        let record = #"{"albumId": 1, "id": 1, "title": "t", "url": "http://x/1", "thumbnailUrl": "http://x/2"}"#
        try assertUsageError(["run", "--catalog", dir.appendingPathComponent("missing.json").path], mentions: ["missing.json", "no such file"])
        try assertUsageError(["run", "--catalog", try catalog("broken.json", "[\n" + record + ",\n  {\"id\": }\n]")], mentions: ["broken.json", "line 3"])
        try assertUsageError(["run", "--catalog", try catalog("object.json", "{}")], mentions: ["has no \"id\"", "--records"])
        try assertUsageError(["run", "--catalog", try catalog("number.json", "7")], mentions: ["not an array"])
        try assertUsageError(
            ["run", "--catalog", try catalog("noid.json", "[" + record + #", {"albumId": 1, "title": "t", "url": "u"}]"#)],
            mentions: ["record 2", "has no \"id\"", "line 1, column 92"])
        try assertUsageError(
            ["run", "--catalog", try catalog("type.json", #"[{"albumId": 1, "id": true, "title": "t", "url": "u", "thumbnailUrl": "u"}]"#)],
            mentions: ["record 1", "\"id\" is not an integer or a string"])
        try assertUsageError(["run", "--catalog", try catalog("dup.json", "[" + record + "," + record + "]")], mentions: ["duplicate ids", "1"])
    }

    /// Issue #16: a 150 KB catalog of nested `[` used to kill `run` with a stack overflow.
    func testADeeplyNestedCatalogExitsTwoNamingLineAndColumn() throws {
        let dir = Fixtures.temporaryDirectory(self)
        let url = dir.appendingPathComponent("deep.json")
        let head = #"[{"albumId": 1, "id": 1, "title": "t", "url": "http://x/1", "thumbnailUrl": "t", "extra": "#
        try Data((head + String(repeating: "[", count: 150_000) + "}]").utf8).write(to: url)
        try assertUsageError(["run", "--catalog", url.path, "--out", dir.appendingPathComponent("out").path], mentions: ["deep.json", "line 1, column", "nested"])
    }

    func testExitStatusIsZeroWhenAllDoneAndOneWhenSomeFailed() throws {
        let server = try Fixtures.placeholderServer()
        server.route("/600/000404", .text(404, "gone"))
        let dir = Fixtures.temporaryDirectory(self)
        let good = try Fixtures.writeCatalog(Fixtures.records(3), to: dir.appendingPathComponent("good.json"))
        let mirror = "\(Fixtures.host)=\(server.baseURL)"
        let ok = try CommandRunner.run(["run", "--catalog", good, "--out", dir.appendingPathComponent("a").path, "--mirror", mirror])
        XCTAssertEqual(ok.status, 0, ok.stderr)
        XCTAssertTrue(ok.stderr.contains("3 done, 0 failed"), ok.stderr)

        let bad = try Fixtures.writeCatalog(
            Fixtures.records(2) + [Fixtures.record(3, colour: "000404")], to: dir.appendingPathComponent("bad.json"))
        let partly = try CommandRunner.run(["run", "--catalog", bad, "--out", dir.appendingPathComponent("b").path, "--mirror", mirror])
        XCTAssertEqual(partly.status, 1, partly.stderr)
        XCTAssertTrue(partly.stderr.contains("2 done, 1 failed"), partly.stderr)

        let again = try CommandRunner.run(["run", "--catalog", bad, "--out", dir.appendingPathComponent("b").path, "--mirror", mirror])
        XCTAssertEqual(again.status, 1)
        XCTAssertTrue(again.stderr.hasPrefix("resuming: 2 done, 1 failed (trying again), 1 to go\n"), again.stderr)
        let kept = try CommandRunner.run(["run", "--catalog", bad, "--out", dir.appendingPathComponent("b").path, "--mirror", mirror, "--skip-failed"])
        XCTAssertTrue(kept.stderr.hasPrefix("resuming: 2 done, 1 failed (kept: --skip-failed), 0 to go\n"), kept.stderr)
    }

    func testServePrintsItsURLAndAnswersPlaceholderPaths() throws {
        let out = Pipe()
        let process = try CommandRunner.start(["serve", "--port", "0"], stdout: out)
        defer { process.terminate(); process.waitUntilExit() }
        var text = ""
        while !text.contains("\n") {
            let chunk = out.fileHandleForReading.availableData
            XCTAssertFalse(chunk.isEmpty, "serve exited before printing its URL")
            if chunk.isEmpty { return }
            text += String(decoding: chunk, as: UTF8.self)
        }
        let base = try XCTUnwrap(text.firstMatch(of: /http:\/\/127\.0\.0\.1:\d+/)).output
        let data = try Data(contentsOf: URL(string: "\(base)/150/61a65")!)
        XCTAssertEqual(try PNGValidator(mode: .full).validate(data), ImageInfo(width: 150, height: 150))
        XCTAssertEqual(data, Fixtures.served("/150/061a65"))
    }

    func testACatalogURLIsFetchedAndOnlyA2xxAnswerIsUsed() throws {
        let server = try Fixtures.placeholderServer()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        server.route("/photos", HTTPResponse(status: 200, headers: [("Content-Type", "application/json")], body: .data(try encoder.encode(Fixtures.records(3)))))
        server.route("/missing", .text(404, "no catalog here"))
        let dir = Fixtures.temporaryDirectory(self)
        let mirror = "\(Fixtures.host)=\(server.baseURL)"
        let ok = try CommandRunner.run(["run", "--catalog", server.baseURL + "/photos", "--out", dir.appendingPathComponent("a").path, "--mirror", mirror])
        XCTAssertEqual(ok.status, 0, ok.stderr)
        XCTAssertEqual(try Fixtures.manifest(in: dir.appendingPathComponent("a")).catalog.source, server.baseURL + "/photos")

        let missing = try CommandRunner.run(["run", "--catalog", server.baseURL + "/missing", "--out", dir.appendingPathComponent("b").path])
        XCTAssertEqual(missing.status, 2)
        XCTAssertTrue(missing.stderr.contains("HTTP 404"), missing.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.appendingPathComponent("b").path))
    }
}

/// The README's `archiver run` options table and `archiver run --help` come from one
/// declaration; this holds them to each other, both ways: every option and its default.
final class OptionsTableTests: XCTestCase {
    /// Option name to default, from `| `--name VALUE` | default | meaning |` rows of the table
    /// under `### `archiver run``.
    private func readmeOptions() throws -> [String: String] {
        let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("README.md")
        let text = try String(contentsOf: readme, encoding: .utf8)
        let section = try XCTUnwrap(text.components(separatedBy: "### `archiver run`").dropFirst().first)
        var options: [String: String] = [:]
        for line in section.split(separator: "\n").prefix(while: { !$0.hasPrefix("#") }) where line.hasPrefix("| `--") {
            let cells = line.replacingOccurrences(of: "\\|", with: "/").split(separator: "|")
                .map { $0.trimmingCharacters(in: .whitespaces) }
            let name = String(cells[0].dropFirst().prefix { $0 != " " && $0 != "`" })
            options[name] = cells[1].replacingOccurrences(of: "`", with: "")
        }
        return options
    }

    /// Option name to default, from the help's option lines (no default shown: `none`, or `off`
    /// for a flag).
    private func helpOptions() throws -> [String: String] {
        let result = try CommandRunner.run(["run", "--help"])
        XCTAssertEqual(result.status, 0)
        var options: [String: String] = [:]
        for line in result.stdout.split(separator: "\n") where line.hasPrefix("  --") {
            // The usage column ends at the first two spaces: `--out DIR`, `--quiet, -q`.
            let usage = line.dropFirst(2).components(separatedBy: "  ")[0].components(separatedBy: ", ")[0]
            let name = String(usage.prefix { $0 != " " })
            let takesValue = usage.contains(" ")
            if let range = line.range(of: "(default ", options: .backwards) {
                options[name] = String(line[range.upperBound...].dropLast())
            } else {
                options[name] = takesValue ? "none" : "off"
            }
        }
        return options
    }

    func testReadmeOptionsTableMatchesRunHelpBothWays() throws {
        let readme = try readmeOptions(), help = try helpOptions()
        XCTAssertGreaterThan(help.count, 15)
        for (name, value) in help {
            XCTAssertEqual(readme[name], value, "\(name): README says \(readme[name] ?? "nothing"), help says \(value)")
        }
        for name in readme.keys where help[name] == nil {
            XCTFail("README lists \(name), which 'archiver run --help' does not")
        }
    }

    func testEachCommandHasItsOwnHelp() throws {
        for (command, option) in [("run", "--concurrency"), ("serve", "--port"), ("status", "--json"), ("pack", "--output"), ("verify", "--json")] {
            for arguments in [[command, "--help"], ["help", command]] {
                let result = try CommandRunner.run(arguments)
                XCTAssertEqual(result.status, 0, "\(arguments)")
                XCTAssertTrue(result.stdout.hasPrefix("usage: archiver \(command)"), "\(arguments): \(result.stdout)")
                XCTAssertTrue(result.stdout.contains(option), "\(arguments)")
            }
        }
        let run = try CommandRunner.run(["run", "--help"]).stdout
        XCTAssertFalse(run.contains("--faults") || run.contains("--output"), "run's help shows run's options only")
    }
}
