#if canImport(Glibc)
import Glibc
#endif

/// A shard's manifest items as `merge` decoded them, kept in a file in a compact binary form for
/// the pass that writes the merged bundle, so that each shard's `manifest.json` is decoded once.
///
/// Each item is its length (4 bytes), a bit per optional field (2 bytes), then the fields of
/// `Manifest.Item`: integers as 8 bytes, strings as a length and their UTF-8 bytes. The file is
/// written and read by the same merge, so it has no version; a field added to `Manifest.Item`
/// must be added here too (`ItemSpoolTests` round-trips an item with every field set).
enum ItemSpool {
    /// The optional fields, one bit each in the item's mask.
    private enum Field: UInt16 {
        case path = 1, format = 2, frames = 4, bytes = 8, sha256 = 16, width = 32, height = 64
        case error = 128, errorStatus = 256, etag = 512, lastModified = 1024
    }

    /// Appends items to a new file, 64 KiB at a time.
    final class Writer {
        let path: String
        private let fd: FileDescriptor
        private var bytes: [UInt8] = []
        /// The first write that failed; what comes after it is dropped, and `finish` throws it.
        private var failure: FileSystemError?

        init(path: String) throws(FileSystemError) {
            do throws(Errno) {
                fd = try .open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode: 0o600)
            } catch {
                throw FileSystemError(.create, path: path, errno: error)
            }
            self.path = path
            bytes.reserveCapacity(1 << 17)
        }

        deinit {
            fd.close()
        }

        func add(_ item: Manifest.Item) {
            let start = bytes.count
            bytes += [0, 0, 0, 0]
            encode(item)
            let length = UInt32(bytes.count - start - 4)
            for shift in 0..<4 { bytes[start + shift] = UInt8(truncatingIfNeeded: length >> (8 * UInt32(shift))) }
            if bytes.count >= 1 << 16 { flush() }
        }

        /// Writes what is left; throws the first write that failed.
        func finish() throws(FileSystemError) {
            flush()
            if let failure { throw failure }
        }

        private func flush() {
            if failure == nil, !bytes.isEmpty {
                do throws(Errno) { try fd.write(all: bytes) } catch { failure = FileSystemError(.write, path: path, errno: error) }
            }
            bytes.removeAll(keepingCapacity: true)
        }

        private func encode(_ item: Manifest.Item) {
            var mask: UInt16 = 0
            func note(_ field: Field, _ present: Bool) { if present { mask |= field.rawValue } }
            note(.path, item.path != nil)
            note(.format, item.format != nil)
            note(.frames, item.frames != nil)
            note(.bytes, item.bytes != nil)
            note(.sha256, item.sha256 != nil)
            note(.width, item.width != nil)
            note(.height, item.height != nil)
            note(.error, item.error != nil)
            note(.errorStatus, item.error?.status != nil)
            note(.etag, item.etag != nil)
            note(.lastModified, item.lastModified != nil)
            bytes += [UInt8(truncatingIfNeeded: mask), UInt8(truncatingIfNeeded: mask >> 8)]
            switch item.id.value {
            case .integer(let id):
                bytes.append(0)
                integer(id)
            case .string(let id):
                bytes.append(1)
                string(id)
            }
            integer(item.albumId)
            string(item.title)
            string(item.url)
            string(item.source)
            string(item.status.rawValue)
            integer(item.attempts)
            if let path = item.path { string(path) }
            if let format = item.format { string(format.rawValue) }
            if let frames = item.frames { integer(frames) }
            if let size = item.bytes { integer(Int(size)) }
            if let sha256 = item.sha256 { string(sha256) }
            if let width = item.width { integer(width) }
            if let height = item.height { integer(height) }
            if let error = item.error {
                string(error.kind)
                string(error.message)
                if let status = error.status { integer(status) }
            }
            if let etag = item.etag { string(etag) }
            if let lastModified = item.lastModified { string(lastModified) }
        }

        private func integer(_ value: Int) {
            let word = UInt64(bitPattern: Int64(value))
            for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: word >> UInt64(shift))) }
        }

        private func string(_ value: String) {
            integer(value.utf8.count)
            bytes.appendUTF8(value)
        }
    }

    /// Reads back what a `Writer` wrote, an item at a time.
    final class Reader {
        let path: String
        private let fd: FileDescriptor
        private var buffer = [UInt8](repeating: 0, count: 1 << 16)
        /// The unread bytes are `buffer[start..<end]`.
        private var start = 0
        private var end = 0

        init(path: String) throws(BundleError) {
            do throws(Errno) { fd = try .open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC) } catch {
                throw .unreadableFile(path: path, reason: error.description)
            }
            self.path = path
        }

        deinit {
            fd.close()
        }

        /// The next item; nil after the last.
        func next() throws(BundleError) -> Manifest.Item? {
            guard try fill(4) else { return nil }
            var length = 0
            for shift in 0..<4 { length |= Int(buffer[start + shift]) << (8 * shift) }
            guard try fill(4 + length) else { throw damaged() }
            let item = buffer.withUnsafeBytes { raw in
                var cursor = Cursor(raw: UnsafeRawBufferPointer(rebasing: raw[(start + 4)..<(start + 4 + length)]))
                return cursor.item()
            }
            start += 4 + length
            guard let item else { throw damaged() }
            return item
        }

        private func damaged() -> BundleError {
            .unreadableFile(path: path, reason: "merge's spool of a shard's items is damaged")
        }

        /// Whether `count` unread bytes are there, reading more as needed; false at the end of
        /// the file with nothing unread, an error if it ends inside an item.
        private func fill(_ count: Int) throws(BundleError) -> Bool {
            guard end - start < count else { return true }
            if start > 0 {
                buffer.withUnsafeMutableBytes { raw in
                    _ = memmove(raw.baseAddress!, raw.baseAddress! + start, end - start)
                }
                end -= start
                start = 0
            }
            if buffer.count < count { buffer += [UInt8](repeating: 0, count: count - buffer.count) }
            while end < count {
                let read = buffer.withUnsafeMutableBytes { raw in
                    Result { () throws(Errno) in try fd.read(into: UnsafeMutableRawBufferPointer(rebasing: raw[end...])) }
                }
                let n: Int
                switch read {
                case .success(let count): n = count
                case .failure(let error): throw .unreadableFile(path: path, reason: error.description)
                }
                if n == 0 {
                    if end == 0 { return false }
                    throw damaged()
                }
                end += n
            }
            return true
        }
    }

    /// Decodes one item's bytes; nil if they do not hold one.
    private struct Cursor {
        let raw: UnsafeRawBufferPointer
        var at = 0
        var damaged = false

        mutating func item() -> Manifest.Item? {
            guard raw.count >= 2 else { return nil }
            let mask = UInt16(raw[0]) | UInt16(raw[1]) << 8
            at = 2
            func has(_ field: Field) -> Bool { mask & field.rawValue != 0 }
            let id: RecordID
            switch byte() {
            case 0: id = RecordID(integer())
            case 1: id = RecordID(string())
            default: return nil
            }
            let albumId = integer()
            let title = string()
            let url = string()
            let source = string()
            guard let status = ItemRecord.Status(rawValue: string()) else { return nil }
            var item = Manifest.Item(
                id: id, albumId: albumId, title: title, url: url, source: source, status: status, attempts: integer())
            if has(.path) { item.path = string() }
            if has(.format) {
                guard let format = ImageFormat(rawValue: string()) else { return nil }
                item.format = format
            }
            if has(.frames) { item.frames = integer() }
            if has(.bytes) { item.bytes = Int64(integer()) }
            if has(.sha256) { item.sha256 = string() }
            if has(.width) { item.width = integer() }
            if has(.height) { item.height = integer() }
            if has(.error) {
                let kind = string()
                let message = string()
                item.error = RecordedError(kind: kind, status: has(.errorStatus) ? integer() : nil, message: message)
            }
            if has(.etag) { item.etag = string() }
            if has(.lastModified) { item.lastModified = string() }
            return damaged || at != raw.count ? nil : item
        }

        private mutating func take(_ count: Int) -> UnsafeRawBufferPointer? {
            guard count >= 0, count <= raw.count - at else {
                damaged = true
                return nil
            }
            defer { at += count }
            return UnsafeRawBufferPointer(rebasing: raw[at..<(at + count)])
        }

        private mutating func byte() -> UInt8 {
            take(1)?.first ?? 0xFF
        }

        private mutating func integer() -> Int {
            guard let bytes = take(8) else { return 0 }
            return Int(Int64(littleEndian: bytes.loadUnaligned(as: Int64.self)))
        }

        private mutating func string() -> String {
            guard let bytes = take(integer()) else { return "" }
            return String(decoding: bytes, as: UTF8.self)
        }
    }
}
