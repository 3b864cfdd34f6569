import Foundation

/// Validates JPEG bodies. (A stand-in until the shim lands: every body is refused.)
struct JPEGValidator: ImageValidating {
    let mode: ValidationMode
    let maxDimension: Int

    init(mode: ValidationMode = .structure, maxDimension: Int = 16384) {
        self.mode = mode
        self.maxDimension = maxDimension
    }

    func validate(_ data: Data) throws(ItemError) -> ImageInfo {
        throw .invalidImage(.jpeg, "not checked yet")
    }
}
