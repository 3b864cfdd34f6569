#if canImport(Glibc)
import Glibc
#endif
import CSystem
import Foundation
import Synchronization
import XCTest
@testable import ArchiverCore

/// Signals the handler below has seen; a C handler cannot capture.
private let interruptions = Atomic(0)

/// `FileDescriptor`: every call retries a signal's interruption, throws the `errno` it left,
/// and writes whole buffers; the GNU constants are the kernel's.
final class FileDescriptorTests: XCTestCase {
    func testTheGNUConstantsComeFromTheHeadersWithLinuxsValues() {
        XCTAssertEqual(csystem_o_tmpfile, 0o20_000_000 | O_DIRECTORY)
        XCTAssertEqual(csystem_at_empty_path, 0x1000)
    }

    func testAnUnnamedTemporaryFileHoldsWhatIsWrittenAndLeavesNoName() throws {
        let directory = Fixtures.temporaryDirectory(self)
        let fd = try FileDescriptor.open(directory.path, csystem_o_tmpfile | O_RDWR, mode: 0o600)
        defer { fd.close() }
        try fd.write(all: Array("unnamed".utf8))
        var back = [UInt8](repeating: 0, count: 16)
        let count = try back.withUnsafeMutableBytes { try fd.read(into: $0, at: 0) }
        XCTAssertEqual(String(decoding: back[..<count], as: UTF8.self), "unnamed")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path), [])
    }

    func testAFailedCallThrowsTheErrnoItLeft() {
        let missing = Fixtures.temporaryDirectory(self).appendingPathComponent("missing").path
        XCTAssertThrowsError(try FileDescriptor.open(missing, O_RDONLY)) {
            XCTAssertEqual($0 as? Errno, Errno(rawValue: ENOENT))
            XCTAssertEqual("\($0)", "No such file or directory")
        }
        var byte: UInt8 = 0
        XCTAssertThrowsError(try withUnsafeMutableBytes(of: &byte) { try FileDescriptor(rawValue: -1).read(into: $0) }) {
            XCTAssertEqual($0 as? Errno, Errno(rawValue: EBADF))
        }
    }

    /// 4 MiB through a 64 KiB pipe: `write(all:)` goes on after each short write.
    func testWriteAllWritesEveryByteThroughShortWrites() throws {
        var ends: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&ends), 0)
        let (reader, writer) = (FileDescriptor(rawValue: ends[0]), FileDescriptor(rawValue: ends[1]))
        defer { reader.close() }
        let bytes = (0..<(4 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let thread = Thread { try? writer.closeAfter { () throws(Errno) in try writer.write(all: bytes) } }
        thread.start()
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while case let n = try chunk.withUnsafeMutableBytes({ try reader.read(into: $0) }), n > 0 {
            received += chunk[..<n]
        }
        XCTAssertEqual(received.count, bytes.count)
        XCTAssertTrue(received == bytes)
    }

    /// A read blocked on an empty pipe is interrupted by a signal whose handler has no
    /// SA_RESTART (the kernel returns EINTR); the read goes back to waiting and returns the
    /// bytes written after, instead of failing.
    func testAReadASignalInterruptsGoesOnAndReturnsTheBytes() throws {
        var ends: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&ends), 0)
        let (reader, writer) = (FileDescriptor(rawValue: ends[0]), FileDescriptor(rawValue: ends[1]))
        defer { reader.close(); writer.close() }
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in interruptions.add(1, ordering: .relaxed) }
        action.sa_flags = 0
        var previous = sigaction()
        XCTAssertEqual(sigaction(SIGUSR2, &action, &previous), 0)
        defer { sigaction(SIGUSR2, &previous, nil) }
        let before = interruptions.load(ordering: .relaxed)

        let outcome = Locked<(thread: pthread_t?, result: Result<[UInt8], Errno>?)>((nil, nil))
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            outcome.withLock { $0.thread = pthread_self() }
            var buffer = [UInt8](repeating: 0, count: 16)
            let result = buffer.withUnsafeMutableBytes { raw in Result { () throws(Errno) in try reader.read(into: raw) } }
            outcome.withLock { $0.result = result.map { Array(buffer[..<$0]) } }
            done.signal()
        }
        thread.start()
        // What the kernel says the thread is doing: "0 0x<fd> ..." while it waits in read(2).
        let inRead = "0 0x" + String(reader.rawValue, radix: 16) + " "
        func blockedInRead() -> Bool {
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
            return tasks.contains { task in
                (try? String(contentsOfFile: "/proc/self/task/\(task)/syscall", encoding: .utf8))?.hasPrefix(inRead) == true
            }
        }
        // Polled, not slept on: each state is reached in microseconds; the deadline only stops a hang.
        let deadline = Date().addingTimeInterval(30)
        func reached(_ condition: () -> Bool) -> Bool {
            while !condition() {
                guard Date() < deadline else { return false }
                sched_yield()
            }
            return true
        }
        guard reached(blockedInRead) else { return XCTFail("the reader never waited in read(2)") }
        let target = try XCTUnwrap(outcome.withLock { $0.thread })
        XCTAssertEqual(pthread_kill(target, SIGUSR2), 0)
        guard reached({ interruptions.load(ordering: .relaxed) > before }) else { return XCTFail("no signal was handled") }
        // After the handler, the thread either waits in read(2) again (retried) or has returned.
        guard reached({ blockedInRead() || outcome.withLock { $0.result != nil } }) else { return XCTFail("the reader hung") }
        try writer.write(all: Array("after".utf8))
        done.wait()
        XCTAssertEqual(interruptions.load(ordering: .relaxed), before + 1)
        XCTAssertEqual(try outcome.withLock { $0.result }?.get(), Array("after".utf8))
    }
}
