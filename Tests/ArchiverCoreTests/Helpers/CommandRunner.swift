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
