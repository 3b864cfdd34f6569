import Foundation

/// The size of an image that passed validation.
struct ImageInfo: Sendable, Equatable {
    var width: Int
    var height: Int

    init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }
}

/// How thoroughly a body is checked.
///
/// `structure` proves the file is whole and every byte is as written (signature, header,
/// every chunk's length and CRC, IEND last) in microseconds; `full` also decodes every row,
/// which catches a corrupt compressed stream written with valid CRCs, at about a millisecond
/// per 600x600 image.
public enum ValidationMode: String, Sendable, CaseIterable {
    case structure
    case full
}

/// A check that a body is a whole, well-formed PNG.
protocol ImageValidating: Sendable {
    /// Returns the image's size, or throws `ItemError.notPNG` / `ItemError.invalidPNG`.
    func validate(_ data: Data) throws(ItemError) -> ImageInfo
}
