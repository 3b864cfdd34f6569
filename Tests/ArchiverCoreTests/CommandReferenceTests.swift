import Foundation
import XCTest
@testable import ArchiverCore

/// The man page and the three completion scripts come from the option table the parser reads;
/// these hold each of them to every command's `--help` (the table as the parser prints it).
final class CommandReferenceTests: XCTestCase {
    /// Command names from `archiver --help`, and each one's option spellings from its help.
    private func table() throws -> [(command: String, options: [String])] {
        let usage = try CommandRunner.run(["--help"]).stdout
        let names = usage.split(separator: "\n").compactMap { line -> String? in
            let words = line.split(separator: " ")
            guard words.count >= 2, words[0] == "archiver", !words[1].hasPrefix("-"), words[1] != "help" else { return nil }
            return String(words[1])
        }
        XCTAssertGreaterThanOrEqual(names.count, 8, usage)
        return try names.map { name in
            let help = try CommandRunner.run(["help", name])
            XCTAssertEqual(help.status, 0, name)
            let options = help.stdout.split(separator: "\n").filter { $0.hasPrefix("  -") }.flatMap { line in
                // `  --out DIR   help`, `  --quiet, -q   help`: the spellings before the help column.
                line.dropFirst(2).components(separatedBy: "  ")[0].components(separatedBy: ", ").map { $0.components(separatedBy: " ")[0] }
            }
            return (name, options)
        }
    }

    private func script(_ shell: String) throws -> String {
        let result = try CommandRunner.run(["completions", shell])
        XCTAssertEqual(result.status, 0, result.stderr)
        return result.stdout
    }

    /// What bash offers for the words typed so far, the last one being completed.
    private func bashComplete(_ words: [String]) throws -> [String] {
        let file = Fixtures.temporaryDirectory(self).appendingPathComponent("archiver.bash")
        try script("bash").write(to: file, atomically: true, encoding: .utf8)
        let quoted = words.map { "'\($0)'" }.joined(separator: " ")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["-c", "source \(file.path); COMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1); _archiver; printf '%s\\n' \"${COMPREPLY[@]}\""]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    func testTheManPageDescribesEveryOptionOfEveryCommand() throws {
        let result = try CommandRunner.run(["man"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stdout.contains(".TH ARCHIVER 1 "), result.stdout)
        let page = result.stdout.replacingOccurrences(of: "\\-", with: "-")
        for (command, options) in try table() {
            let sections = page.components(separatedBy: ".SS \"archiver \(command)\"")
            XCTAssertEqual(sections.count, 2, "one section for \(command)")
            let section = try XCTUnwrap(sections.last).components(separatedBy: ".SS ")[0]
            for option in options {
                XCTAssertTrue(section.contains("\\fB\(option)\\fR"), "man page, \(command): no \(option)")
            }
        }
    }

    func testBashCompletesEveryOptionOfEveryCommand() throws {
        for (command, options) in try table() {
            XCTAssertEqual(Set(try bashComplete(["archiver", command, "-"])), Set(options + ["--help"]), command)
        }
        XCTAssertEqual(try bashComplete(["archiver", "run", "--conc"]), ["--concurrency"])
        XCTAssertEqual(try bashComplete(["archiver", "run", "--format", "js"]), ["json", "jsonl"])
        // bash splits `--validate=f` at the `=` (COMP_WORDBREAKS).
        XCTAssertEqual(try bashComplete(["archiver", "run", "--validate", "=", "f"]), ["full"])
        XCTAssertEqual(try bashComplete(["archiver", "completions", "z"]), ["zsh"])
        XCTAssertTrue(try bashComplete(["archiver", "ve"]) == ["verify"])
    }

    func testZshAndFishScriptsNameEveryOptionOfEveryCommand() throws {
        let zsh = try script("zsh"), fish = try script("fish")
        XCTAssertTrue(zsh.hasPrefix("#compdef archiver\n"))
        for (command, options) in try table() {
            let arm = try XCTUnwrap(zsh.components(separatedBy: "    (\(command))\n").dropFirst().first, "zsh: no \(command)")
                .components(separatedBy: " ;;")[0]
            let fishLines = fish.split(separator: "\n").filter { $0.contains("'__fish_seen_subcommand_from \(command)'") }
            for option in options {
                XCTAssertTrue(["'\(option)[", "'\(option)=[", "{\(option)", ",\(option)}"].contains { arm.contains($0) }, "zsh, \(command): no \(option)")
                let spelling = option.hasPrefix("--") ? "-l \(option.dropFirst(2)) " : "-s \(option.dropFirst()) "
                XCTAssertTrue(fishLines.contains { $0.contains(spelling) }, "fish, \(command): no \(option)")
            }
        }
    }

    /// Syntax only where the shell is installed (the machine image has bash; zsh and fish are optional).
    func testTheScriptsParseInTheirShells() throws {
        for (shell, path, check) in [("bash", "/bin/bash", "-n"), ("zsh", "/usr/bin/zsh", "-n"), ("fish", "/usr/bin/fish", "--no-execute")] {
            guard FileManager.default.isExecutableFile(atPath: path) else { continue }
            let file = Fixtures.temporaryDirectory(self).appendingPathComponent("archiver.\(shell)")
            try script(shell).write(to: file, atomically: true, encoding: .utf8)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: path)
            process.arguments = [check, file.path]
            try process.run()
            process.waitUntilExit()
            XCTAssertEqual(process.terminationStatus, 0, "\(shell) \(check) refuses the script")
        }
    }

    func testCompletionsRefuseAnUnknownShell() throws {
        assertOneLineError(try CommandRunner.run(["completions", "tcsh"]), mentions: ["bash, zsh or fish"])
        assertOneLineError(try CommandRunner.run(["man", "extra"]), mentions: ["extra"])
    }

    /// `--version` names the version and the commit: the Makefile passes it, a plain
    /// `swift build` (as the tests' build may be) says `unknown`.
    func testVersionNamesTheVersionAndTheCommit() throws {
        let result = try CommandRunner.run(["--version"])
        XCTAssertEqual(result.status, 0)
        let line = result.stdout.trimmingCharacters(in: .newlines)
        let prefix = "archiver \(ArchiverVersion.current) (commit "
        XCTAssertTrue(line.hasPrefix(prefix) && line.hasSuffix(")"), line)
        let commit = line.dropFirst(prefix.count).dropLast()
        XCTAssertTrue(commit == "unknown" || commit.allSatisfy { $0.isHexDigit || "-dirty".contains($0) } && commit.count >= 7, line)
    }
}
