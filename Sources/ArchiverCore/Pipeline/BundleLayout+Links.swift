import Foundation

extension BundleLayout {
    /// The first place where a run would write through a link, what is there and what should
    /// be; nil when there is none.
    ///
    /// `.archiver/`, `images/`, `pages/` must be real directories and the lock and journal
    /// regular files (or not exist yet): a link there would have the run write, truncate or
    /// prune files outside the bundle. `manifest.json`, `index.html` and the files under
    /// `.archiver/` written whole are replaced by a rename, which replaces a link instead of
    /// writing to its target; the lock and journal are also opened with `O_NOFOLLOW`
    /// (`openInBundle`), whatever happens after this check.
    func unsafePlace() -> (path: String, found: String, expected: String)? {
        for (path, directory) in [(state.path, true), (images.path, true), (pages.path, true), (lock.path, false), (journal.path, false)] {
            let found = Self.fileKind(atPath: path)
            switch (found, directory) {
            case (.missing, _), (.directory, true), (.regular, false): continue
            default: return (path, found.noun, directory ? "a directory" : "a regular file")
            }
        }
        return nil
    }
}

extension BundleLayout {
    /// Makes `.archiver/` and every missing directory above it, or says in one line why not: a
    /// file (or anything but a directory) on the way, or the system's reason (`Permission denied`).
    func createStateDirectory() throws(RunError) {
        var missing: [String] = []
        var path = state.standardizedFileURL.path
        while !path.isEmpty, path != "/" {
            var info = stat()
            if stat(path, &info) == 0 {
                guard info.st_mode & S_IFMT == S_IFDIR else {
                    throw .notADirectory(path: path, found: Self.fileKind(atPath: path).noun)
                }
                break
            }
            guard errno == ENOENT || errno == ENOTDIR else {
                throw .fileSystem(FileSystemError(.create, path: state.path, errno: errno))
            }
            missing.append(path)
            path = (path as NSString).deletingLastPathComponent
        }
        for directory in missing.reversed() where mkdir(directory, 0o777) != 0 && errno != EEXIST {
            throw .fileSystem(FileSystemError(.create, path: directory, errno: errno))
        }
    }
}
