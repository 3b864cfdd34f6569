import Foundation

/// Writes images under `DIR/images/` by key, atomically (see `FileSystem`), so a reader never
/// sees half a file under a final name.
public struct KeyedStore: Sendable {
    /// The `images/` directory.
    public let directory: URL
    /// `directory.path`, computed once: `URL.path` rebuilds the string on every call.
    private let directoryPath: String
    let fileSystem: any FileSystem
    let durable: Bool

    public init(directory: URL, fileSystem: any FileSystem = POSIXFileSystem(), durable: Bool = false) {
        self.directory = directory
        directoryPath = directory.path
        self.fileSystem = fileSystem
        self.durable = durable
    }

    /// The file name for a record id; ids are integers, so the name cannot escape the directory.
    public static func fileName(for id: Int) -> String {
        "\(id).png"
    }

    /// The path relative to the bundle root that the manifest records.
    public static func relativePath(for id: Int) -> String {
        "images/\(fileName(for: id))"
    }

    /// The absolute path of a record's final file (built as a string: `URL.appendingPathComponent`
    /// stats the file system to decide whether the result is a directory).
    public func path(for id: Int) -> String {
        directoryPath + "/" + Self.fileName(for: id)
    }

    /// Creates the directory and removes temporary files left by an interrupted run.
    /// Returns how many were removed.
    @discardableResult
    public func prepare() throws(ItemError) -> Int {
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw .io("cannot create \(directory.path): \(error.localizedDescription)")
        }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        var removed = 0
        for name in names where name.hasPrefix(POSIXFileSystem.temporaryPrefix) {
            fileSystem.remove(directory.appendingPathComponent(name).path)
            removed += 1
        }
        return removed
    }

    /// Writes `data` as the file for `id`, atomically; with `durable`, fsynced before it is named.
    /// Returns the file's stamp, which its journal line records.
    @discardableResult
    public func write(_ data: Data, id: Int) throws(ItemError) -> FileStamp? {
        try fileSystem.writeAtomically(data, directory: directoryPath, name: Self.fileName(for: id), sync: durable)
        return FileStamp.of(path: path(for: id))
    }

    /// Flushes the directory entries so renamed files survive power loss (`--durable`).
    public func syncDirectory() throws(ItemError) {
        try fileSystem.syncDirectory(directoryPath)
    }

    /// Removes every `<id>.png` whose id is not in `ids` (`--prune`); returns how many.
    @discardableResult
    public func prune(keeping ids: Set<Int>) -> Int {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        var removed = 0
        for name in names where name.hasSuffix(".png") {
            guard let id = Int(name.dropLast(4)), !ids.contains(id) else { continue }
            remove(id: id)
            removed += 1
        }
        return removed
    }

    /// Removes a record's file (used when a record fails after an earlier success).
    public func remove(id: Int) {
        fileSystem.remove(path(for: id))
    }
}
