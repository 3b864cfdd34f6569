#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// An open file or socket: where ArchiverCore calls `open`, `read`, `write` and `close`, retries
/// a call a signal interrupted (EINTR), and turns a `-1` into the `Errno` it left.
///
/// Modelled on swift-system's `FileDescriptor`: a plain value, so it cannot close itself; whoever
/// opened it calls `close()` once (or uses `closeAfter`). Callers turn an `Errno` into their
/// own error (`FileSystemError`, `CatalogError`...), which knows the path and what it was for.
package struct FileDescriptor: Sendable, Hashable {
    package let rawValue: Int32

    package init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// Opens `path`, always with `O_CLOEXEC`; `mode` applies to a file the open creates.
    static func open(_ path: String, _ flags: Int32, mode: mode_t = 0o644) throws(Errno) -> FileDescriptor {
        FileDescriptor(rawValue: try retryingInterrupts { Glibc.open(path, flags | O_CLOEXEC, mode) })
    }

    /// Opens `name` relative to this directory, always with `O_CLOEXEC`.
    func open(at name: String, _ flags: Int32, mode: mode_t = 0o644) throws(Errno) -> FileDescriptor {
        FileDescriptor(rawValue: try retryingInterrupts { openat(rawValue, name, flags | O_CLOEXEC, mode) })
    }

    /// Reads up to `buffer.count` bytes from where the file stands; 0 at its end.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int {
        try retryingInterrupts { Glibc.read(rawValue, buffer.baseAddress, buffer.count) }
    }

    /// Reads up to `buffer.count` bytes from `offset`, leaving the file's position alone.
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(Errno) -> Int {
        try retryingInterrupts { pread(rawValue, buffer.baseAddress, buffer.count, off_t(offset)) }
    }

    /// Writes every byte of `bytes`, however many calls it takes.
    func write(all bytes: UnsafeRawBufferPointer) throws(Errno) {
        var offset = 0
        while offset < bytes.count {
            offset += try retryingInterrupts { Glibc.write(rawValue, bytes.baseAddress! + offset, bytes.count - offset) }
        }
    }

    /// Writes every byte of `bytes`, however many calls it takes.
    func write(all bytes: some ContiguousBytes) throws(Errno) {
        // `withUnsafeBytes` rethrows untyped: carry the error out as a value.
        try bytes.withUnsafeBytes { raw in Result { () throws(Errno) in try write(all: raw) } }.get()
    }

    /// Flushes the file's data (or a directory's entries) to the device.
    func sync() throws(Errno) {
        _ = try retryingInterrupts { fsync(rawValue) }
    }

    /// What `fstat` says of the open file.
    func status() throws(Errno) -> stat {
        var info = stat()
        _ = try retryingInterrupts { fstat(rawValue, &info) }
        return info
    }

    /// Cuts the file (or extends it with zeros) to `size` bytes.
    func truncate(to size: Int64) throws(Errno) {
        _ = try retryingInterrupts { ftruncate(rawValue, off_t(size)) }
    }

    /// Closes the descriptor. Never retried: Linux frees the descriptor even when `close` reports
    /// EINTR, and a second call could close one another thread has just opened.
    func close() {
        _ = Glibc.close(rawValue)
    }

    /// Runs `body`, then closes the descriptor however `body` ends.
    func closeAfter<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        defer { close() }
        return try body()
    }
}

extension FileDescriptor {
    /// Accepts a connection on this listening socket.
    package func accept() throws(Errno) -> FileDescriptor {
        FileDescriptor(rawValue: try retryingInterrupts { Glibc.accept(rawValue, nil, nil) })
    }

    /// Receives up to `buffer.count` bytes from this socket; 0 when the peer has closed.
    package func receive(into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int {
        try retryingInterrupts { recv(rawValue, buffer.baseAddress, buffer.count, 0) }
    }

    /// Sends every byte of `bytes` on this socket, with no SIGPIPE when the peer has gone.
    package func send(all bytes: UnsafeRawBufferPointer) throws(Errno) {
        var offset = 0
        while offset < bytes.count {
            offset += try retryingInterrupts {
                Glibc.send(rawValue, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            }
        }
    }

    /// Waits up to `milliseconds` for this descriptor to become readable (or closed). False when
    /// the time ran out or a signal cut the wait short: the caller checks its own deadline again,
    /// where a retry here would wait the whole time once more.
    package func waitReadable(milliseconds: Int32) throws(Errno) -> Bool {
        var request = pollfd(fd: rawValue, events: Int16(POLLIN), revents: 0)
        let ready = poll(&request, 1, milliseconds)
        if ready < 0 {
            let code = errno
            if code == EINTR { return false }
            throw Errno(rawValue: code)
        }
        return ready > 0
    }
}

/// Calls `call` until a signal does not interrupt it; its result, or the `Errno` of a `-1`.
@inline(__always)
private func retryingInterrupts<I: FixedWidthInteger>(_ call: () -> I) throws(Errno) -> I {
    while true {
        let result = call()
        if result != -1 { return result }
        let code = errno
        if code != EINTR { throw Errno(rawValue: code) }
    }
}
