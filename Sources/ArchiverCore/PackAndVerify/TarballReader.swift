internal import CLibArchive
import Foundation

/// Streams the entries of a tar file (gzip or not) with libarchive, in memory, one at a time.
final class TarballReader {
    /// One entry: its path with any leading `./` removed, its type and header fields, its data.
    struct Entry {
        var path: String
        var isRegularFile: Bool
        var isDirectory: Bool
        var permissions: UInt32
        var modificationTime: Int64
        var owner: String
        /// The size the entry's header declares (its data is never longer); 0 when it declares none.
        var size: Int64 = 0
        var data: Data
    }

    private let archive: OpaquePointer
    private let path: String

    /// Opens `path` for reading.
    init(path: String) throws(BundleError) {
        guard let archive = archive_read_new() else {
            throw .unreadableTarball(path: path, reason: "libarchive could not allocate a reader")
        }
        self.archive = archive
        self.path = path
        guard archive_read_support_filter_all(archive) == ARCHIVE_OK,
            archive_read_support_format_tar(archive) == ARCHIVE_OK,
            archive_read_open_filename(archive, path, 1 << 16) == ARCHIVE_OK
        else {
            let reason = TarballWriter.message(archive)
            // deinit frees the archive
            throw .unreadableTarball(path: path, reason: reason)
        }
    }

    deinit {
        archive_read_free(archive)
    }

    /// The next entry, with its whole data unless `readingData` is false (then `readData(_:)`
    /// streams it), or nil at the end of the archive.
    func next(readingData: Bool = true) throws(BundleError) -> Entry? {
        var header: OpaquePointer?
        let status = archive_read_next_header(archive, &header)
        if status == ARCHIVE_EOF { return nil }
        guard status == ARCHIVE_OK || status == ARCHIVE_WARN, let header else {
            throw .unreadableTarball(path: path, reason: TarballReader.message(archive))
        }
        var name = archive_entry_pathname_utf8(header).map { String(cString: $0) }
            ?? archive_entry_pathname(header).map { String(cString: $0) } ?? ""
        while name.hasPrefix("./") { name.removeFirst(2) }
        let type = archive_entry_filetype(header)
        let uname = archive_entry_uname(header).map { String(cString: $0) } ?? ""
        let gname = archive_entry_gname(header).map { String(cString: $0) } ?? ""
        var entry = Entry(
            path: name, isRegularFile: type == UInt32(Glibc.S_IFREG), isDirectory: type == UInt32(Glibc.S_IFDIR),
            permissions: UInt32(archive_entry_perm(header)), modificationTime: Int64(archive_entry_mtime(header)),
            owner: "\(archive_entry_uid(header)):\(archive_entry_gid(header)) \(uname):\(gname)",
            size: archive_entry_size_is_set(header) != 0 ? Int64(archive_entry_size(header)) : 0, data: Data())
        if entry.isRegularFile, readingData {
            var data = Data()
            try readData { data.append(contentsOf: $0) }
            entry.data = data
        }
        return entry
    }

    /// Hands `body` the current entry's data a piece at a time (64 KiB at most).
    func readData(_ body: (UnsafeRawBufferPointer) -> Void) throws(BundleError) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 16)
        defer { buffer.deallocate() }
        try read(into: buffer) { body($0) }
    }

    /// Hands the current entry's data to `body`, a block of at most `buffer.count` bytes at a
    /// time; an error `body` throws (a failed write) ends it as `cannotWrite`.
    func read(into buffer: UnsafeMutableRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws(ItemError) -> Void)
        throws(BundleError)
    {
        while true {
            let count = archive_read_data(archive, buffer.baseAddress, buffer.count)
            if count == 0 { return }
            guard count > 0 else { throw .unreadableTarball(path: path, reason: TarballReader.message(archive)) }
            do throws(ItemError) {
                try body(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
            } catch {
                throw .cannotWrite(path: path, reason: error.description)
            }
        }
    }

    /// The current entry's whole data (for `manifest.json`, which grows with the catalog, not the images).
    func readAll() throws(BundleError) -> Data {
        var data = Data()
        try readData { data.append(contentsOf: $0) }
        return data
    }

    static func message(_ archive: OpaquePointer) -> String {
        TarballWriter.message(archive)
    }
}
