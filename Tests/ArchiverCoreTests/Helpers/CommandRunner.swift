import Foundation
import XCTest
@testable import ArchiverCore

/// Runs the built `archiver` binary, the way users and CI do.
struct CommandResult {
    var status: Int32
    var stdout: String
    var stderr: String
}

enum CommandRunner {
    /// The `archiver` executable built next to the test bundle.
    static var executable: URL {
        var directory = Bundle.main.bundleURL
        if directory.pathExtension == "xctest" { directory.deleteLastPathComponent() }
        return directory.appendingPathComponent("archiver")
    }

    /// Starts the binary; the caller waits or signals it.
    static func start(
        _ arguments: [String], stdout: Pipe = Pipe(), stderr: Pipe = Pipe(), currentDirectory: URL? = nil,
        environment: [String: String]? = nil
    ) throws -> Process {
        let process = Process()
        process.executableURL = executable
        if let currentDirectory { process.currentDirectoryURL = currentDirectory }
        if let environment { process.environment = environment }
        process.arguments = arguments
        process.standardOutput = stdout
        process.standardError = stderr
        process.standardInput = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// Runs the binary to the end and collects its output.
    /// `environment` replaces the inherited one when given.
    static func run(_ arguments: [String], currentDirectory: URL? = nil, environment: [String: String]? = nil) throws -> CommandResult {
        let out = Pipe(), err = Pipe()
        let process = try start(arguments, stdout: out, stderr: err, currentDirectory: currentDirectory, environment: environment)
        let errData = Locked(Data())
        let errDone = DispatchSemaphore(value: 0)
        Thread {
            let data = err.fileHandleForReading.readDataToEndOfFile()
            errData.withLock { $0 = data }
            errDone.signal()
        }.start()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        errDone.wait()
        let errText = errData.withLock { String(decoding: $0, as: UTF8.self) }
        return CommandResult(
            status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self), stderr: errText)
    }
}

extension XCTestCase {
    /// The binary's failure as a user should see it: exit 2 and one line, `archiver: ...`,
    /// naming each of `words` (and no Foundation error domain).
    func assertOneLineError(_ result: CommandResult, mentions words: [String], file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(result.status, 2, result.stderr, file: file, line: line)
        XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, "one line, got: \(result.stderr)", file: file, line: line)
        XCTAssertTrue(result.stderr.hasPrefix("archiver: "), result.stderr, file: file, line: line)
        XCTAssertFalse(result.stderr.contains("NSCocoaErrorDomain"), result.stderr, file: file, line: line)
        for word in words {
            XCTAssertTrue(result.stderr.contains(word), "'\(word)' not in: \(result.stderr)", file: file, line: line)
        }
    }
}

extension CommandRunner {
    /// Runs the binary to the end under GNU time (Debian's `time`, installed by `make deps`),
    /// which writes the peak resident memory to a file. Not the `rusage` of a child spawned from
    /// here: exec keeps the high-water mark of the memory it replaces, and a child of
    /// `posix_spawn` (or fork) starts from this test process's, which may hold hundreds of MiB
    /// after other tests. `time` is a small process, so its child starts small. Output goes
    /// through temporary files, read after the exit.
    static func runMeasuringPeakMemory(_ arguments: [String]) throws -> (result: CommandResult, peakKiB: Int) {
        let time = "/usr/bin/time"
        guard FileManager.default.isExecutableFile(atPath: time) else {
            XCTFail("\(time) is missing: make deps installs Debian's time")
            return (CommandResult(status: -1, stdout: "", stderr: ""), 0)
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("peak-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let outPath = directory.appendingPathComponent("stdout").path
        let errPath = directory.appendingPathComponent("stderr").path
        let peakPath = directory.appendingPathComponent("peak").path
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let argv = ([time, "-o", peakPath, "-f", "%M", executable.path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, time, &actions, nil, argv, environ)
        guard spawned == 0 else { throw POSIXError(POSIXErrorCode(rawValue: spawned) ?? .EIO) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        }
        // WIFEXITED / WEXITSTATUS, which Swift does not import: the low 7 bits are the signal.
        // GNU time exits with its child's status (128 + the signal when it was killed).
        let exitStatus = status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        let text = { (path: String) in String(decoding: FileManager.default.contents(atPath: path) ?? Data(), as: UTF8.self) }
        // The last line: time says "Command exited with non-zero status N" first when it is not 0.
        let peak = text(peakPath).split(separator: "\n").last.flatMap { Int($0) }
        let result = CommandResult(status: exitStatus, stdout: text(outPath), stderr: text(errPath))
        return (result, try XCTUnwrap(peak, "no peak from \(time): \(text(peakPath))"))
    }
}
