#if canImport(Glibc)
import Glibc
#endif

/// An unnamed file for bytes that must be written before the file they belong in can be: a run
/// writes the page's rows as their items finish, while the head that counts them comes last.
/// It has no name (`O_TMPFILE`, or a name removed as soon as it is made), so a killed run
/// leaves nothing behind, and it is gone when closed.
final class ScratchFile {
    private var output: ChunkedWrites

    init(directory: String) throws(ItemError) {
        var fd = open(directory, POSIXFileSystem.tmpfile | O_RDWR | O_CLOEXEC, 0o600)
        if fd < 0 {
            let path = "\(directory)/.scratch-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
            fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            if fd >= 0 { unlink(path) }
        }
        guard fd >= 0 else { throw .io("cannot create a scratch file in \(directory): \(errnoText())") }
        output = ChunkedWrites(descriptor: fd, path: "a scratch file in \(directory)")
    }

    deinit {
        close(output.descriptor)
    }

    var descriptor: Int32 { output.descriptor }
    /// Bytes written to the file (after `flush`, all that was appended).
    var size: Int { output.written }
    /// Why a write failed, for whoever reads the file back.
    var failure: String? { output.failure }

    func append(_ bytes: [UInt8]) {
        output.append(bytes)
    }

    func flush() {
        output.flush()
    }
}
