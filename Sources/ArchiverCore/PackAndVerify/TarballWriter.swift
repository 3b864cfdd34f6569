internal import CLibArchive
import Foundation

/// A gzip-compressed tar file written with libarchive, with every field that could vary from
/// run to run fixed: owner 0/root, the given mtime, no atime/ctime, no gzip timestamp or name.
final class TarballWriter {
    private let archive: OpaquePointer
    private let path: String
    private let modificationTime: Int64

    /// Opens `path` for writing (creating or truncating it).
    init(path: String, modificationTime: Int64) throws(BundleError) {
        guard let archive = archive_write_new() else {
            throw .cannotWrite(path: path, reason: "libarchive could not allocate a writer")
        }
        self.archive = archive
        self.path = path
        self.modificationTime = modificationTime
        // pax_restricted writes plain ustar headers and adds a pax header only for a name or
        // size ustar cannot hold.
        guard archive_write_set_format_pax_restricted(archive) == ARCHIVE_OK,
            archive_write_add_filter_gzip(archive) == ARCHIVE_OK,
            // A NULL value means "!timestamp": zero in the gzip header's MTIME field.
            archive_write_set_filter_option(archive, "gzip", "timestamp", nil) == ARCHIVE_OK,
            archive_write_open_filename(archive, path) == ARCHIVE_OK
        else {
            // An open that failed says the system's reason (libarchive's own words name the path again).
            let reason = archive_errno(archive) > 0 ? String(cString: strerror(archive_errno(archive))) : Self.message(archive)
            // deinit frees the archive
            throw .cannotWrite(path: path, reason: reason)
        }
    }

    deinit {
        archive_write_free(archive)
    }

    /// Adds a directory entry (mode 0755).
    func addDirectory(_ name: String) throws(BundleError) {
        try writeHeader(name, type: UInt32(Glibc.S_IFDIR), permissions: 0o755, size: 0)
    }

    /// Adds a regular file entry (mode 0644) holding `data`.
    func addFile(_ name: String, data: Data) throws(BundleError) {
        try writeHeader(name, type: UInt32(Glibc.S_IFREG), permissions: 0o644, size: Int64(data.count))
        let written = data.withUnsafeBytes { raw in
            raw.isEmpty ? 0 : archive_write_data(archive, raw.baseAddress, raw.count)
        }
        guard written == data.count else {
            throw .cannotWrite(path: path, reason: "\(name): \(Self.message(archive))")
        }
    }

    /// Adds a regular file entry (mode 0644) of `size` bytes read from `fd` a piece at a time;
    /// a file that is not `size` bytes long by the time it is read fails (its header is written).
    func addFile(_ name: String, size: Int64, from fd: FileDescriptor) throws(BundleError) {
        try writeHeader(name, type: UInt32(Glibc.S_IFREG), permissions: 0o644, size: size)
        var failure: String?
        let read = FileChunks.read(fd, limit: size) { piece in
            guard failure == nil else { return }
            let written = archive_write_data(archive, piece.baseAddress, piece.count)
            if written != piece.count { failure = "\(name): \(Self.message(archive))" }
        }
        switch read {
        case .failure(let error): throw .unreadableFile(path: name, reason: error.reason)
        case .success(let count) where count != size:
            throw .unreadableFile(path: name, reason: "changed while it was packed (\(count) bytes, expected \(size))")
        case .success: break
        }
        if let failure { throw .cannotWrite(path: path, reason: failure) }
    }

    /// Writes the end of the archive and flushes the gzip stream.
    func close() throws(BundleError) {
        guard archive_write_close(archive) == ARCHIVE_OK else {
            throw .cannotWrite(path: path, reason: Self.message(archive))
        }
    }

    private func writeHeader(_ name: String, type: UInt32, permissions: UInt32, size: Int64) throws(BundleError) {
        guard let entry = archive_entry_new() else {
            throw .cannotWrite(path: path, reason: "libarchive could not allocate an entry")
        }
        defer { archive_entry_free(entry) }
        archive_entry_set_pathname_utf8(entry, name)
        archive_entry_set_filetype(entry, type)
        archive_entry_set_perm(entry, permissions)
        archive_entry_set_size(entry, size)
        archive_entry_set_mtime(entry, time_t(modificationTime), 0)
        archive_entry_set_uid(entry, 0)
        archive_entry_set_gid(entry, 0)
        archive_entry_set_uname_utf8(entry, "root")
        archive_entry_set_gname_utf8(entry, "root")
        guard archive_write_header(archive, entry) == ARCHIVE_OK else {
            throw .cannotWrite(path: path, reason: "\(name): \(Self.message(archive))")
        }
    }

    static func message(_ archive: OpaquePointer) -> String {
        archive_error_string(archive).map { String(cString: $0) } ?? "libarchive error \(archive_errno(archive))"
    }
}
