import Foundation
import XCTest

/// The examples run as written: what they name (make targets, files, commands and their options,
/// the Swift image, the package and the image they push) exists in this repository.
final class ExamplesTests: XCTestCase {
    private let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    private func read(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    private func examples() throws -> [(path: String, text: String)] {
        let files = ["examples/kubernetes/Dockerfile", "examples/kubernetes/shards-job.yaml", "examples/kubernetes/merge-job.yaml",
                     "examples/github-actions/archive.yml", "examples/ray/archive_shards.py"]
        return try files.map { ($0, try read($0)) }
    }

    /// Every match of `pattern`'s first group in `text`.
    private func matches(_ pattern: String, in text: String) throws -> [String] {
        let regex = try NSRegularExpression(pattern: pattern, options: [.anchorsMatchLines])
        return regex.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap {
            Range($0.range(at: 1), in: text).map { String(text[$0]) }
        }
    }

    func testTheMakeTargetsTheExamplesRunExist() throws {
        let makefile = try read("Makefile")
        let targets = Set(try matches(#"^([a-z][a-z-]*):"#, in: makefile))
        var named = 0
        for (path, text) in try examples() where !path.hasSuffix(".py") {
            // As a command: a line's first word, or after `RUN`, `run:` or `&&` (not prose's "make it").
            for target in try matches(#"(?:^\s*|RUN |run: |&& )make ([a-z][a-z-]*)"#, in: text) {
                named += 1
                XCTAssertTrue(targets.contains(target), "\(path) runs 'make \(target)', which the Makefile lacks")
            }
        }
        XCTAssertGreaterThanOrEqual(named, 2, "the Dockerfile and the workflow build the package")
    }

    func testEveryArchiverOptionTheExamplesUseExists() throws {
        var options: [String: Set<String>] = [:]
        var checked = 0
        for (path, text) in try examples() {
            // `archiver run --catalog "$CATALOG" ... --shard "$I/$SHARDS"`, to the end of its line.
            for line in text.split(separator: "\n") {
                for call in try matches(#"\barchiver (\w+(?: .*)?)$"#, in: String(line)) {
                    let command = String(call.prefix { $0 != " " })
                    let help = try CommandRunner.run(["help", command])
                    guard help.status == 0 else { continue }  // prose: "archiver is", "archiver's"
                    let names = try matches(#"^  (--?[a-z0-9-]+)"#, in: help.stdout)
                    let aliases = try matches(#"^  --[a-z0-9-]+(?: \S+)?, (-[a-z])"#, in: help.stdout)
                    let known = options[command] ?? Set(names + aliases)
                    options[command] = known
                    for option in try matches(#"(?:^| )(--?[a-z][a-z0-9-]*)"#, in: String(call.dropFirst(command.count))) {
                        checked += 1
                        XCTAssertTrue(known.contains(option), "\(path): 'archiver \(command) \(option)' is no option of \(command)")
                    }
                }
            }
        }
        XCTAssertGreaterThan(checked, 10)
    }

    /// The container build and the workflow build on the toolchain the project uses and install
    /// the package `make deb` writes.
    func testTheContainerAndTheWorkflowUseThePackageAndThisToolchain() throws {
        let dockerfile = try read("examples/kubernetes/Dockerfile"), workflow = try read("examples/github-actions/archive.yml")
        let swift = Process()
        swift.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        swift.arguments = ["swift", "--version"]
        let out = Pipe()
        swift.standardOutput = out
        swift.standardError = FileHandle.nullDevice
        try swift.run()
        let version = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        swift.waitUntilExit()
        let minor = try XCTUnwrap(try matches(#"Swift version (\d+\.\d+)"#, in: version).first, version)
        XCTAssertEqual(try matches(#"^FROM (swift:\S+)"#, in: dockerfile), ["swift:\(minor)-bookworm"])
        XCTAssertEqual(try matches(#"container: (swift:\S+)"#, in: workflow), ["swift:\(minor)-bookworm"])

        // One build stage makes the package; the slim image installs it.
        XCTAssertEqual(try matches(#"^(FROM .*)$"#, in: dockerfile).count, 2)
        XCTAssertTrue(dockerfile.contains("RUN make deb"))
        XCTAssertTrue(dockerfile.contains("apt-get install -y --no-install-recommends /tmp/deb/archiver_*.deb"))
        let ignored = try read(".dockerignore").split(separator: "\n").map(String.init)
        XCTAssertTrue(ignored.contains(".build"), "the .dockerignore keeps .build out of the build context")

        // Built once, handed to every job as an artifact, installed with apt-get.
        XCTAssertEqual(try matches(#"^ +(make deb)$"#, in: workflow), ["make deb"])
        XCTAssertEqual(try matches(#"^          path: (archiver_\*\.deb)$"#, in: workflow), ["archiver_*.deb"])
        let downloads = try matches(#"download-artifact@v4\n        with:\n          name: (\S+)"#, in: workflow)
        XCTAssertEqual(downloads, ["archiver-deb", "archiver-deb"], "the shard and merge jobs download the package")
        XCTAssertTrue(workflow.contains("name: archiver-deb\n          path: archiver_*.deb"))
        XCTAssertEqual(workflow.components(separatedBy: "apt-get install -y --no-install-recommends ./archiver_*.deb").count - 1, 2)
        XCTAssertFalse(workflow.contains("make install"), "the jobs install the package, not a build")
    }

    /// The image the Dockerfile builds is the one the Jobs pull, on a registry named as a placeholder.
    func testTheJobsPullTheImageTheDockerfileBuilds() throws {
        let dockerfile = try read("examples/kubernetes/Dockerfile")
        let built = try matches(#"docker build -f (\S+) -t (?:\S+) \.$"#, in: dockerfile)
        XCTAssertEqual(built, ["examples/kubernetes/Dockerfile"])
        let tag = try XCTUnwrap(try matches(#"docker build -f \S+ -t (\S+) \.$"#, in: dockerfile).first)
        XCTAssertTrue(tag.hasPrefix("registry.example.com/your-team/archiver:"), tag)
        XCTAssertEqual(try matches(#"docker push (\S+)$"#, in: dockerfile), [tag])
        for job in ["examples/kubernetes/shards-job.yaml", "examples/kubernetes/merge-job.yaml"] {
            XCTAssertEqual(try matches(#"^ +image: (\S+)$"#, in: try read(job)), [tag], job)
        }
    }
}
