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
        _ arguments: [String], stdout: Pipe = Pipe(), stderr: Pipe = Pipe(), currentDirectory: URL? = nil
    ) throws -> Process {
        let process = Process()
        process.executableURL = executable
        if let currentDirectory { process.currentDirectoryURL = currentDirectory }
        process.arguments = arguments
        process.standardOutput = stdout
        process.standardError = stderr
        process.standardInput = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// Runs the binary to the end and collects its output.
    static func run(_ arguments: [String], currentDirectory: URL? = nil) throws -> CommandResult {
        let out = Pipe(), err = Pipe()
        let process = try start(arguments, stdout: out, stderr: err, currentDirectory: currentDirectory)
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
