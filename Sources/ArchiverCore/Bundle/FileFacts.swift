#if canImport(Glibc)
import Glibc
#endif

/// What is known about one file in a bundle, taken from its bytes as they stream past: size,
/// sha256 and the PNG check, in memory that does not grow with the file.
struct FileFacts: Sendable, Equatable {
    var isRegularFile = true
    var bytes: Int64 = 0
    var sha256 = ""
    var image: ImageInfo?
    var imageError: ItemError?

    /// Takes the facts of bytes fed to it a piece at a time.
    final class Builder {
        private let hasher = SHA256Hasher()
        private let png: PNGStreamCheck
        private var bytes: Int64 = 0

        init(_ validator: PNGValidator) {
            png = PNGStreamCheck(validator)
        }

        func feed(_ piece: UnsafeRawBufferPointer) {
            hasher.update(piece)
            png.feed(piece)
            bytes += Int64(piece.count)
        }

        func finish() -> FileFacts {
            var facts = FileFacts(bytes: bytes, sha256: hasher.finish())
            switch png.result() {
            case .success(let image): facts.image = image
            case .failure(let error): facts.imageError = error
            }
            return facts
        }
    }

    /// The facts of `name` in `images`, read to at most `limit` + 1 bytes when a limit is
    /// given (a longer file is too long whatever follows); nil when there is no such file.
    static func read(_ name: String, in images: OpenDirectory, limit: Int64?, validator: PNGValidator) throws(BundleError) -> FileFacts? {
        guard let found = images.kind(of: name) else { return nil }
        guard found.isRegular else { return FileFacts(isRegularFile: false) }
        if let limit, found.size != limit { return FileFacts(bytes: found.size) }
        let fd = images.openFile(name)
        guard fd >= 0 else { throw .unreadableFile(path: BundleLayout.imagesPath + "/" + name, reason: errnoText()) }
        defer { close(fd) }
        let builder = Builder(validator)
        if case .failure(let error) = FileChunks.read(fd, limit: limit, builder.feed) {
            throw .unreadableFile(path: BundleLayout.imagesPath + "/" + name, reason: error.reason)
        }
        return builder.finish()
    }
}
