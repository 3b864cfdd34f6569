import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What is known about one file in a bundle, taken from its bytes as they stream past: size,
/// sha256 and the image check. A PNG is checked as it streams, in memory that does not grow with
/// the file; the other formats' checks need the whole body, which is held up to
/// `Builder.heldLimit` (a larger file of those formats fails as too large to check).
struct FileFacts: Sendable, Equatable {
    var isRegularFile = true
    var bytes: Int64 = 0
    var sha256 = ""
    var image: ImageInfo?
    var imageError: ItemError?

    /// Takes the facts of bytes fed to it a piece at a time.
    final class Builder {
        /// The largest JPEG, WebP or GIF file checked: their checks read a whole body.
        static let heldLimit = 64 << 20

        private let hasher = SHA256Hasher()
        private let validator: ImageValidator
        private var bytes: Int64 = 0
        /// The bytes until the format is known (its signature is in the first 12), then the whole
        /// body of a format that is checked whole.
        private var held: [UInt8] = []
        private var format: ImageFormat?
        private var png: PNGStreamCheck?
        private var overLimit = false

        init(_ validator: ImageValidator) {
            self.validator = validator
        }

        func feed(_ piece: UnsafeRawBufferPointer) {
            hasher.update(piece)
            bytes += Int64(piece.count)
            if let png { return png.feed(piece) }
            if format == nil, held.count < 12 {
                held += piece
                guard held.count >= 12 else { return }
                format = held.withUnsafeBytes { ImageFormat.sniff($0) }
                if format == .png {
                    let check = PNGStreamCheck(PNGValidator(mode: validator.mode, maxDimension: validator.maxDimension))
                    held.withUnsafeBytes { check.feed($0) }
                    held = []
                    png = check
                }
                return
            }
            guard !overLimit else { return }
            if held.count + piece.count > Self.heldLimit {
                overLimit = true
                held = []
            } else {
                held += piece
            }
        }

        func finish() -> FileFacts {
            var facts = FileFacts(bytes: bytes, sha256: hasher.finish())
            let result: Result<ImageInfo, ItemError>
            if let png {
                result = png.result()
            } else if overLimit, let format {
                result = .failure(.invalidImage(format, "larger than \(Self.heldLimit) bytes, too large to check"))
            } else {
                let data = Data(held)
                result = Result { () throws(ItemError) in try validator.validate(data) }
            }
            switch result {
            case .success(let image): facts.image = image
            case .failure(let error): facts.imageError = error
            }
            return facts
        }
    }

    /// The facts of `name` in `images`, read to at most `limit` + 1 bytes when a limit is
    /// given (a longer file is too long whatever follows); nil when there is no such file.
    static func read(_ name: String, in images: OpenDirectory, limit: Int64?, validator: ImageValidator) throws(BundleError) -> FileFacts? {
        guard let found = images.kind(of: name) else { return nil }
        guard found.isRegular else { return FileFacts(isRegularFile: false) }
        if let limit, found.size != limit { return FileFacts(bytes: found.size) }
        let fd: FileDescriptor
        do {
            fd = try images.openFile(name)
        } catch {
            throw .unreadableFile(path: BundleLayout.imagesPath + "/" + name, reason: error.description)
        }
        defer { fd.close() }
        let builder = Builder(validator)
        if case .failure(let error) = FileChunks.read(fd, limit: limit, builder.feed) {
            throw .unreadableFile(path: BundleLayout.imagesPath + "/" + name, reason: error.reason)
        }
        return builder.finish()
    }
}

extension FileFacts {
    /// `FileFacts` in 56 bytes, for holding those of every file of a tarball until its manifest
    /// is read (100,000 of them as Strings and enums took 45 MiB more); errors are rare and are
    /// kept beside them by the caller.
    struct Packed {
        private var digest = SHA256Digest(words: (0, 0, 0, 0))
        private var bytes: Int64
        private var width: Int32 = 0
        private var height: Int32 = 0
        private var isRegularFile: Bool
        private var hasImage = false
        private var format = ImageFormat.png
        /// Whether the manifest lists the file (set by `verify` of a tarball; fits in padding).
        var listed = false

        init(_ facts: FileFacts) {
            bytes = facts.bytes
            isRegularFile = facts.isRegularFile
            if let image = facts.image {
                hasImage = true
                format = image.format
                width = Int32(clamping: image.width)
                height = Int32(clamping: image.height)
            }
            // `hasher.finish()` made it: 64 lowercase hex digits when the file was read.
            if let read = SHA256Digest(hex: facts.sha256) { digest = read }
        }

        /// The facts again, with `imageError` (which was not packed).
        func unpacked(imageError: ItemError?) -> FileFacts {
            var facts = FileFacts(isRegularFile: isRegularFile, bytes: bytes, imageError: imageError)
            if isRegularFile {
                facts.sha256 = digest.hex
            }
            if hasImage { facts.image = ImageInfo(format: format, width: Int(width), height: Int(height)) }
            return facts
        }
    }
}
