internal import CJPEG
import Foundation

/// Validates JPEG bodies with libjpeg-turbo: structurally by default, or by decoding every scanline.
struct JPEGValidator: ImageValidating {
    /// How thoroughly each body is checked.
    let mode: ValidationMode
    /// The largest width or height accepted; larger images fail from the header alone.
    let maxDimension: Int

    /// Creates a validator; `maxDimension` must be between 1 and 2^31 - 1.
    init(mode: ValidationMode = .structure, maxDimension: Int = 16384) {
        precondition(maxDimension >= 1 && maxDimension <= Int(Int32.max), "maxDimension out of range: \(maxDimension)")
        self.mode = mode
        self.maxDimension = maxDimension
    }

    /// Returns the image's size and frames, or throws `.notImage` or `.invalidImage(.jpeg, _)`.
    func validate(_ data: Data) throws(ItemError) -> ImageInfo {
        var result = cjpeg_result()
        let fullDecode: Int32 = mode == .full ? 1 : 0
        data.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            cjpeg_check(bytes.baseAddress, bytes.count, fullDecode, UInt32(maxDimension), &result)
        }
        return try ShimVerdict.verdict(
            .jpeg, code: result.code, width: result.width, height: result.height, frames: result.frames,
            message: result.message
        ).get()
    }
}
