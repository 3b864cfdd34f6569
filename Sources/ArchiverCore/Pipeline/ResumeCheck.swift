#if canImport(Glibc)
import Glibc
#endif

/// Decides, on resume, whether the file a journaled `done` line vouches for is still the file
/// that line recorded: there, the recorded size, and (for lines that carry them) the same inode
/// and modification time. A file replaced or rewritten in place since is fetched again; so is
/// one that fails `--recheck`, which also hashes every done file against its recorded sha256.
final class ResumeCheck {
    private let images: OpenDirectory?
    private let recheck: Bool
    /// Done files found changed or damaged (their records are fetched again).
    private(set) var changed = 0

    init(images: OpenDirectory?, recheck: Bool) {
        self.images = images
        self.recheck = recheck
    }

    /// Whether `record`'s file is intact; counts it in `changed` when it is there but is not.
    func isIntact(_ record: ItemRecord) -> Bool {
        guard let name = KeyedStore.fileName(for: record.id, format: record.format), let images, let facts = images.facts(of: name) else { return false }
        guard facts.size == record.bytes, record.file.map({ $0 == facts.stamp }) ?? true,
            !recheck || hashMatches(record, images: images, name: name)
        else {
            changed += 1
            return false
        }
        return true
    }

    private func hashMatches(_ record: ItemRecord, images: OpenDirectory, name: String) -> Bool {
        guard let fd = try? images.openFile(name) else { return false }
        defer { fd.close() }
        let hasher = SHA256Hasher()
        guard case .success(let count) = FileChunks.read(fd, limit: record.bytes, { hasher.update($0) }) else { return false }
        return count == record.bytes && hasher.digest() == record.sha256
    }
}
