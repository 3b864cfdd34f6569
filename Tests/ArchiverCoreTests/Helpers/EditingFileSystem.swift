import Foundation
@testable import ArchiverCore

/// The real file system, running `edit` once just before the temporary file of a path ending
/// in `name` is created.
final class EditingFileSystem: FileSystem, @unchecked Sendable {
    private let real = POSIXFileSystem()
    private let name: String
    private let edit: Locked<(() -> Void)?>

    init(beforeCreating name: String, edit: @escaping () -> Void) {
        self.name = name
        self.edit = Locked(edit)
    }

    func writeAtomically(_ data: Data, directory: String, name: String, sync: Bool) throws(FileSystemError) -> FileStamp? {
        return try real.writeAtomically(data, directory: directory, name: name, sync: sync)
    }

    func syncDirectory(_ path: String) throws(FileSystemError) {
        try real.syncDirectory(path)
    }

    func remove(_ path: String) {
        real.remove(path)
    }

    func createTemporary(beside path: String) throws(FileSystemError) -> (descriptor: FileDescriptor, path: String) {
        if path.hasSuffix(name), let edit = edit.withLock({ edit in defer { edit = nil }; return edit }) { edit() }
        return try real.createTemporary(beside: path)
    }
}
