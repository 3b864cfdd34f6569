import Foundation

/// Writes images under `DIR/images/` by key, atomically (see `FileSystem`), so a reader never
/// sees half a file under a final name.
struct KeyedStore: Sendable {
    /// The `images/` directory.
    let directory: URL
    /// `directory.path`, computed once: `URL.path` rebuilds the string on every call.
    private let directoryPath: String
    let fileSystem: any FileSystem
    let durable: Bool

    init(directory: URL, fileSystem: any FileSystem = POSIXFileSystem(), durable: Bool = false) {
        self.directory = directory
        directoryPath = directory.path
        self.fileSystem = fileSystem
        self.durable = durable
    }

    /// The file name for a record id's image in `format`: `<id>.png` (`.jpg`, `.webp`, `.gif`)
    /// for an integer, the `RecordKey` stem of a string (which is one name inside the directory)
    /// and the extension; nil for an id that cannot be made safe.
    static func fileName(for id: RecordID, format: ImageFormat) -> String? {
        id.stem.map { $0 + "." + format.fileExtension }
    }

    /// The path relative to the bundle root that the manifest records.
    static func relativePath(for id: RecordID, format: ImageFormat) -> String? {
        fileName(for: id, format: format).map { "images/" + $0 }
    }

    /// The absolute path of the file named `name` (built as a string: `URL.appendingPathComponent`
    /// stats the file system to decide whether the result is a directory).
    func path(named name: String) -> String {
        directoryPath + "/" + name
    }

    /// Creates the directory and removes temporary files left by an interrupted run.
    /// Returns how many were removed.
    @discardableResult
    func prepare() throws(FileSystemError) -> Int {
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw FileSystemError(.create, path: directory.path, foundation: error)
        }
        var removed = 0
        OpenDirectory(path: directoryPath, followingLink: false)?.forEachName { name in
            guard name.hasPrefix(POSIXFileSystem.temporaryPrefix) else { return }
            fileSystem.remove(directory.appendingPathComponent(name).path)
            removed += 1
        }
        return removed
    }

    /// Writes `data` as the file `name` (an id's `fileName(for:)`), atomically; with `durable`,
    /// fsynced before it is named. Returns the file's stamp, which its journal line records.
    @discardableResult
    func write(_ data: Data, named name: String) throws(FileSystemError) -> FileStamp? {
        try fileSystem.writeAtomically(data, directory: directoryPath, name: name, sync: durable)
    }

    /// Flushes the directory entries so renamed files survive power loss (`--durable`).
    func syncDirectory() throws(FileSystemError) {
        try fileSystem.syncDirectory(directoryPath)
    }

    /// Removes every `<stem>.<ext>` (any format's extension) that some id would be named
    /// (`RecordKey`) and `keeping` refuses (`--prune`): `keeping` gets the stem and the
    /// format the name says. Returns how many. Other files are left alone.
    @discardableResult
    func prune(keeping: (_ stem: String, _ format: ImageFormat) -> Bool) -> Int {
        var removed = 0
        OpenDirectory(path: directoryPath, followingLink: false)?.forEachName { name in
            guard let format = ImageFormat.of(fileName: name), name.hasSuffix("." + format.fileExtension) else { return }
            let stem = String(name.dropLast(format.fileExtension.count + 1))
            guard RecordKey.isStem(stem), !keeping(stem, format) else { return }
            fileSystem.remove(path(named: name))
            removed += 1
        }
        return removed
    }

    /// Removes a record's file in every format (used when a record fails after an earlier success).
    func remove(id: RecordID) {
        remove(id: id, except: nil)
    }

    /// Removes a record's files in every format but `kept`: what a record whose image changed
    /// format (`--refresh`) leaves behind once its new file is journaled.
    func remove(id: RecordID, except kept: ImageFormat?) {
        for format in ImageFormat.allCases where format != kept {
            if let name = Self.fileName(for: id, format: format) { fileSystem.remove(path(named: name)) }
        }
    }
}
