#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Reads `manifest.json` a window at a time and hands over its items one by one, so `verify`,
/// `status` and `pack` of a 100,000-item bundle hold one item, not the 38 MB file and its
/// objects. The structure (object, keys, the items array) is walked here, iteratively; each
/// item and each other member's value is cut out as bytes (at most `maxValue`) and decoded on
/// its own, so a syntax error inside it is still JSONDecoder's to report, with its byte offset.
struct ManifestReader {
    /// The members of the manifest other than its items.
    struct Header {
        var catalog: Manifest.CatalogInfo?
        var field: ImageField?
        var version: Int?
    }

    /// The largest item or member value read: twice the largest catalog record (4 MiB), so far
    /// above any item the archiver writes, and small enough that a hostile manifest (a title of
    /// 60 MiB) is refused before decoding it costs hundreds of MiB.
    static let maxValue = 8 << 20

    /// Reads more of the manifest into the buffer: the bytes read, 0 at the end.
    private let pull: (UnsafeMutableRawBufferPointer) throws(Errno) -> Int
    private var buffer = [UInt8](repeating: 0, count: 1 << 16)
    private var count = 0
    private var position = 0
    private var offset = 0  // file offset of buffer[0]
    private var readError: String?
    /// One decoder for every item: making one per item was a tenth of reading a manifest.
    private let decoder = JSONDecoder()

    private init(pull: @escaping (UnsafeMutableRawBufferPointer) throws(Errno) -> Int) {
        self.pull = pull
    }

    /// Opens the manifest at `path` (through `openInBundle`), or says why not; `source` names
    /// the bundle in the message.
    static func open(_ path: String, source: String) throws(BundleError) -> FileDescriptor {
        do {
            return try openInBundle(path, O_RDONLY)
        } catch {
            throw .unreadableManifest(path: source, reason: FileSystemError(.open, path: path, errno: error).reason)
        }
    }

    /// Reads the manifest from `descriptor` (from where it stands) to its end, calling `item` for
    /// each item in order; returns the other members. Errors name `source`.
    static func read(
        descriptor: FileDescriptor, source: String, item: (Manifest.Item) throws(BundleError) -> Void
    ) throws(BundleError) -> Header {
        try read(source: source, pull: { (buffer) throws(Errno) in try descriptor.read(into: buffer) }, item: item)
    }

    /// Reads the manifest from what `pull` hands over (a tarball entry as it is decompressed);
    /// `catalog` is called when the catalog member is read (before the items, as archiver writes it).
    static func read(
        source: String, pull: @escaping (UnsafeMutableRawBufferPointer) throws(Errno) -> Int,
        catalog: (Manifest.CatalogInfo) -> Void = { _ in }, item: (Manifest.Item) throws(BundleError) -> Void
    ) throws(BundleError) -> Header {
        var reader = ManifestReader(pull: pull)
        do throws(ManifestReaderError) {
            return try reader.object(catalog, item)
        } catch {
            if let failure = error.bundle { throw failure }
            throw .unreadableManifest(path: source, reason: "not a valid manifest.json: \(error.message)")
        }
    }

    private mutating func object(
        _ catalog: (Manifest.CatalogInfo) -> Void, _ item: (Manifest.Item) throws(BundleError) -> Void
    ) throws(ManifestReaderError) -> Header {
        var header = Header()
        var sawItems = false
        try expect(0x7B)  // {
        var first = true
        while true {
            skipSpace()
            if first, peek() == 0x7D { break }
            let at = offset + position
            let key = try value()
            guard key.first == 0x22 else { throw fail("a key must be a string", at: at) }
            skipSpace()
            try expect(0x3A)  // :
            skipSpace()
            switch key {
            case Array("\"items\"".utf8):
                sawItems = true
                try items(item)
            case Array("\"catalog\"".utf8):
                let info = try decode(Manifest.CatalogInfo.self)
                header.catalog = info
                catalog(info)
            case Array("\"field\"".utf8): header.field = try decode(ImageField.self)
            case Array("\"version\"".utf8): header.version = try decode(Int.self)
            default: _ = try value()
            }
            first = false
            skipSpace()
            if peek() == 0x2C {  // ,
                position += 1
                continue
            }
            break
        }
        try expect(0x7D)  // }
        skipSpace()
        guard peek() == nil else { throw fail("data after the manifest's object", at: offset + position) }
        if let readError { throw ManifestReaderError(message: readError) }
        guard sawItems, header.catalog != nil, header.field != nil, header.version != nil else {
            throw ManifestReaderError(message: "missing one of catalog, field, items, version")
        }
        return header
    }

    private mutating func items(_ item: (Manifest.Item) throws(BundleError) -> Void) throws(ManifestReaderError) {
        try expect(0x5B)  // [
        skipSpace()
        if peek() == 0x5D {
            position += 1
            return
        }
        while true {
            skipSpace()
            let decoded = try decode(Manifest.Item.self)
            do { try item(decoded) } catch { throw ManifestReaderError(message: "\(error)", bundle: error) }
            skipSpace()
            let at = offset + position
            switch peek() {
            case 0x2C: position += 1
            case 0x5D:
                position += 1
                return
            default: throw fail("expected , or ] after an item", at: at)
            }
        }
    }

    private mutating func decode<T: Decodable>(_ type: T.Type) throws(ManifestReaderError) -> T {
        let at = offset + position
        let bytes = try value()
        do {
            return try decoder.decode(T.self, from: Data(bytes))
        } catch {
            throw fail("\(BundleLayout.summary(of: error))", at: at)
        }
    }

    /// The bytes of the JSON value that starts here, walked iteratively; a string, number or
    /// literal ends before the `,` `}` `]` or space that follows it.
    private mutating func value() throws(ManifestReaderError) -> [UInt8] {
        let at = offset + position
        var out: [UInt8] = []
        var depth = 0
        var inString = false
        var escaped = false
        while let byte = peek() {
            if inString {
                out.append(byte)
                position += 1
                if escaped {
                    escaped = false
                } else if byte == 0x5C {
                    escaped = true
                } else if byte == 0x22 {
                    inString = false
                    if depth == 0 { return out }
                }
            } else {
                switch byte {
                case 0x22: inString = true
                case 0x7B, 0x5B: depth += 1
                case 0x7D, 0x5D:
                    if depth == 0 { return out }
                    depth -= 1
                case 0x2C, 0x20, 0x0A, 0x0D, 0x09:
                    if depth == 0 { return out }
                default: break
                }
                out.append(byte)
                position += 1
                if depth == 0, byte == 0x7D || byte == 0x5D { return out }
            }
            guard out.count <= Self.maxValue else { throw fail("a value over \(Self.maxValue) bytes", at: at) }
        }
        if depth == 0, !inString, !out.isEmpty { return out }
        throw fail("the file ends inside a value", at: at)
    }

    private mutating func expect(_ byte: UInt8) throws(ManifestReaderError) {
        skipSpace()
        guard peek() == byte else {
            throw fail("expected \(Character(Unicode.Scalar(byte)))", at: offset + position)
        }
        position += 1
    }

    private mutating func skipSpace() {
        while let byte = peek(), byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { position += 1 }
    }

    /// The next byte, reading the next window when this one is used up; nil at the end.
    private mutating func peek() -> UInt8? {
        if position < count { return buffer[position] }
        guard readError == nil else { return nil }
        offset += count
        position = 0
        count = 0
        switch buffer.withUnsafeMutableBytes({ raw in Result { () throws(Errno) in try pull(raw) } }) {
        case .success(let n): count = n
        case .failure(let error): readError = "cannot read: \(error)"
        }
        return count > 0 ? buffer[0] : nil
    }

    private func fail(_ message: String, at byte: Int) -> ManifestReaderError {
        ManifestReaderError(message: readError ?? "\(message) at byte \(byte)")
    }
}

/// Why the manifest did not read; `bundle` when the item handler itself failed.
struct ManifestReaderError: Error {
    var message: String
    var bundle: BundleError?
}
