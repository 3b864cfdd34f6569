#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A parsed catalog: its records in file order, plus where it came from.
public struct Catalog: Sendable {
    /// The source as the user gave it (path or URL).
    public var source: String
    /// SHA-256 of the catalog bytes.
    public var sha256: String
    public let records: CatalogRecords
    /// Set on a shard's view of a catalog (`shard(_:field:)`): which shard, of how many records.
    public internal(set) var sharding: Sharding?

    /// Parses catalog bytes, refusing malformed JSON, bad records and duplicate ids.
    public init(source: String, data: Data) throws(CatalogError) {
        try self.init(source: source, storage: CatalogStorage(.bytes(data)), scanned: CatalogScanner.scan(data)) { data }
    }

    /// Reads the catalog file at `path` a window at a time; it stays open, and records are read
    /// back from it when needed, so the file must not be edited in place during a run.
    public init(source: String, path: String) throws(CatalogError) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        var info = stat()
        guard descriptor >= 0, fstat(descriptor, &info) == 0 else {
            let reason = errno == ENOENT ? "no such file" : errnoText()
            if descriptor >= 0 { close(descriptor) }
            throw .unreadable(source: source, reason: reason)
        }
        if (info.st_mode & S_IFMT) == S_IFDIR {
            close(descriptor)
            throw .unreadable(source: source, reason: "it is a directory")
        }
        let storage = CatalogStorage(.file(descriptor: descriptor, size: Int64(info.st_size), modified: info.st_mtim))
        var scanner = CatalogScanner { into, offset in
            while true {
                let n = pread(descriptor, into.baseAddress, into.count, off_t(offset))
                if n < 0, errno == EINTR { continue }
                return n
            }
        }
        try self.init(source: source, storage: storage, scanned: scanner.scan()) { () throws(CatalogError) -> Data in
            do {
                return try Data(contentsOf: URL(fileURLWithPath: path))
            } catch {
                throw .unreadable(source: source, reason: (error as NSError).localizedFailureReason ?? error.localizedDescription)
            }
        }
    }

    /// Uses the scan if there is one; otherwise decodes the whole text with JSONDecoder, which
    /// either reads a shape the fast parser refused or says what is wrong and where.
    private init(
        source: String, storage: CatalogStorage, scanned: CatalogScanner.Result?,
        text: () throws(CatalogError) -> Data
    ) throws(CatalogError) {
        self.source = source
        if let scanned {
            sha256 = scanned.sha256
            records = CatalogRecords(storage: storage, entries: scanned.entries, end: scanned.end)
        } else {
            let data = try text()
            sha256 = SHA256.hex(data)
            let decoded: [CatalogRecord]
            do {
                decoded = try JSONDecoder().decode([CatalogRecord].self, from: data)
            } catch let error as DecodingError {
                if case .dataCorrupted(let context) = error, context.codingPath.isEmpty {
                    throw .malformed(source: source, detail: Self.syntaxError(in: data))
                }
                throw CatalogError(decoding: error, source: source)
            } catch {
                throw .malformed(source: source, detail: "\(error)")
            }
            records = CatalogRecords(
                storage: CatalogStorage(.decoded(decoded)),
                entries: decoded.enumerated().map { .init(id: $1.id, offset: $0, albumId: $1.albumId) }, end: decoded.count)
        }
        let duplicates = records.duplicateIDs
        if !duplicates.isEmpty {
            throw .duplicateIDs(source: source, ids: duplicates)
        }
    }

    /// Whether the catalog file changed since it was loaded (its records may no longer read back).
    public var changedSinceLoad: Bool {
        records.storage.changed
    }
}

extension Catalog {
    /// Where JSON stops parsing, as `line L, column C: <reason>` (JSONDecoder on Linux gives no
    /// position; JSONSerialization gives a character offset).
    static func syntaxError(in data: Data) -> String {
        do {
            _ = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
            return "not valid JSON"
        } catch {
            let text = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? "not valid JSON"
            guard let match = text.firstMatch(of: /character (\d+)/), let offset = Int(match.output.1) else {
                return text
            }
            var line = 1, column = 1
            for byte in data.prefix(offset) {
                if byte == 0x0a {
                    line += 1
                    column = 1
                } else {
                    column += 1
                }
            }
            let reason = text.replacing(#/ around character \d+\.?/#, with: "")
            return "line \(line), column \(column): \(reason.prefix(1).lowercased() + reason.dropFirst())"
        }
    }
}

/// Why a catalog could not be used; every case ends the run with exit status 2.
public enum CatalogError: Error, Sendable, Equatable, CustomStringConvertible {
    case unreadable(source: String, reason: String)
    case malformed(source: String, detail: String)
    case badRecord(source: String, index: Int, detail: String)
    case duplicateIDs(source: String, ids: [Int])
    /// The file was edited in place while a run was reading records back from it.
    case changedDuringRun(source: String)

    public var description: String {
        switch self {
        case .unreadable(let source, let reason):
            "cannot read catalog \(source): \(reason)"
        case .malformed(let source, let detail):
            "catalog \(source) is not a JSON array of records: \(detail)"
        case .badRecord(let source, let index, let detail):
            "catalog \(source), record \(index + 1) (index \(index)): \(detail)"
        case .duplicateIDs(let source, let ids):
            "catalog \(source) has duplicate ids: "
                + ids.prefix(5).map(String.init).joined(separator: ", ")
                + (ids.count > 5 ? " and \(ids.count - 5) more" : "")
        case .changedDuringRun(let source):
            "catalog \(source) changed during the run, which reads records back from it; "
                + "no manifest was written. Replace the file only between runs, then run again to resume"
        }
    }

    init(decoding error: DecodingError, source: String) {
        func location(_ path: [any CodingKey]) -> (index: Int?, field: String?) {
            (path.first?.intValue, path.dropFirst().first?.stringValue)
        }
        switch error {
        case .dataCorrupted(let context) where context.codingPath.isEmpty:
            let underlying = (context.underlyingError as NSError?)?.userInfo[NSDebugDescriptionErrorKey] as? String
            self = .malformed(source: source, detail: underlying ?? context.debugDescription)
        case .typeMismatch(_, let context) where context.codingPath.isEmpty:
            self = .malformed(source: source, detail: "the top level is not an array")
        case .keyNotFound(let key, let context):
            let (index, _) = location(context.codingPath)
            self = .badRecord(source: source, index: index ?? 0, detail: "missing field \"\(key.stringValue)\"")
        case .typeMismatch(let type, let context), .valueNotFound(let type, let context):
            let (index, field) = location(context.codingPath)
            if let field {
                self = .badRecord(
                    source: source, index: index ?? 0,
                    detail: "field \"\(field)\" is not \(type == String.self ? "a string" : "an integer")")
            } else {
                self = .badRecord(source: source, index: index ?? 0, detail: "not a JSON object")
            }
        case .dataCorrupted(let context):
            let (index, field) = location(context.codingPath)
            self = .badRecord(
                source: source, index: index ?? 0,
                detail: "field \"\(field ?? "?")\": \(context.debugDescription)")
        @unknown default:
            self = .malformed(source: source, detail: "\(error)")
        }
    }
}
