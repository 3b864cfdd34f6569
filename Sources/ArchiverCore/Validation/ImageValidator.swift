import Foundation

/// What validation found in an image: its format, canvas size and frame count.
struct ImageInfo: Sendable, Equatable {
    var format: ImageFormat
    var width: Int
    var height: Int
    /// Frames of an animation (GIF, WebP); 1 for a still image.
    var frames: Int

    init(format: ImageFormat = .png, width: Int, height: Int, frames: Int = 1) {
        self.format = format
        self.width = width
        self.height = height
        self.frames = frames
    }
}

/// How thoroughly a body is checked.
///
/// `structure` proves the file is whole and every byte is as written (for PNG: signature,
/// header, every chunk's length and CRC, IEND last; each format's container likewise) in
/// microseconds; `full` also decodes every pixel of every frame with the format's own library,
/// which catches corrupt compressed data inside a sound container, at about a millisecond per
/// 600x600 image.
public enum ValidationMode: String, Sendable, CaseIterable {
    case structure
    case full
}

/// A check that a body is a whole, well-formed image of one format.
protocol ImageValidating: Sendable {
    /// Returns what the image is, or throws `.notImage`, `.unacceptedFormat` or `.invalidImage`.
    func validate(_ data: Data) throws(ItemError) -> ImageInfo
}

/// The check every body gets: its format from its first bytes, refused unless `--accept`
/// names it, then the format's own validator (libpng, libjpeg-turbo, libwebp, giflib).
struct ImageValidator: ImageValidating {
    let mode: ValidationMode
    let maxDimension: Int
    let accepted: AcceptedFormats

    init(mode: ValidationMode = .structure, maxDimension: Int = 16384, accepted: AcceptedFormats = .all) {
        self.mode = mode
        self.maxDimension = maxDimension
        self.accepted = accepted
    }

    func validate(_ data: Data) throws(ItemError) -> ImageInfo {
        guard let format = ImageFormat.sniff(data) else { throw .notImage(ImageFormat.describeNonImage(data)) }
        guard accepted.contains(format) else { throw .unacceptedFormat(format, accepted: accepted.list) }
        return try validator(for: format).validate(data)
    }

    /// The validator of one format, with this check's mode and limit.
    func validator(for format: ImageFormat) -> any ImageValidating {
        switch format {
        case .png: PNGValidator(mode: mode, maxDimension: maxDimension)
        case .jpeg, .webp, .gif: ShimValidator(format, mode: mode, maxDimension: maxDimension)
        }
    }
}
