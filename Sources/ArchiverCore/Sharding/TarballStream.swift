internal import CLibArchive
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The entries of a tar file (gzip or not), read with libarchive one header at a time, each
/// entry's data handed over a block at a time: memory does not grow with the files' size.
final class TarballStream {
    struct Header {
        /// The path with any leading `./` removed.
        var path: String
        var isRegularFile: Bool
        var isDirectory: Bool
    }

    private let archive: OpaquePointer
    let path: String

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
            throw .unreadableTarball(path: path, reason: TarballWriter.message(archive))
        }
    }

    deinit {
        archive_read_free(archive)
    }

    /// The next entry's header, or nil at the end; the data of the one before is skipped if unread.
    func next() throws(BundleError) -> Header? {
        var entry: OpaquePointer?
        let status = archive_read_next_header(archive, &entry)
        if status == ARCHIVE_EOF { return nil }
        guard status == ARCHIVE_OK || status == ARCHIVE_WARN, let entry else {
            throw .unreadableTarball(path: path, reason: TarballWriter.message(archive))
        }
        var name = archive_entry_pathname_utf8(entry).map { String(cString: $0) }
            ?? archive_entry_pathname(entry).map { String(cString: $0) } ?? ""
        while name.hasPrefix("./") { name.removeFirst(2) }
        let type = archive_entry_filetype(entry)
        return Header(path: name, isRegularFile: type == UInt32(Glibc.S_IFREG), isDirectory: type == UInt32(Glibc.S_IFDIR))
    }

    /// Hands the current entry's data to `body`, a block of at most `buffer.count` bytes at a time.
    func read(into buffer: UnsafeMutableRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws(ItemError) -> Void)
        throws(BundleError)
    {
        while true {
            let count = archive_read_data(archive, buffer.baseAddress, buffer.count)
            if count == 0 { return }
            guard count > 0 else { throw .unreadableTarball(path: path, reason: TarballWriter.message(archive)) }
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
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 16)
        defer { buffer.deallocate() }
        try read(into: buffer) { data.append(contentsOf: $0) }
        return data
    }
}
