extension Manifest {
    /// Whether `path` (as a manifest records it) is one of the files `id` can be stored as:
    /// `images/` and the id's own stem (`KeyedStore.fileName`'s), with the extension of one of
    /// the image formats. A manifest that points an item at another name (another id's file,
    /// `images/zzz.png`) is not trusted: the merged bundle would name the file by the id.
    static func isOwnPath(_ path: String, for id: RecordID) -> Bool {
        guard let stem = id.stem, path.hasPrefix("images/" + stem + ".") else { return false }
        let ext = path.utf8.dropFirst("images/".utf8.count + stem.utf8.count + 1)
        return ImageFormat.allCases.contains { ext.elementsEqual($0.fileExtension.utf8) }
    }
}
