internal import CPNG
import Foundation

/// Validates PNG bodies with libpng: structurally by default, or by decoding every row.
struct PNGValidator: ImageValidating {
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

    /// Returns the image's size, or throws `.notImage` (no PNG signature) or `.invalidImage(.png, _)`.
    func validate(_ data: Data) throws(ItemError) -> ImageInfo {
        var result = cpng_result()
        let fullDecode: Int32 = mode == .full ? 1 : 0
        data.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            cpng_check(bytes.baseAddress, bytes.count, fullDecode, UInt32(maxDimension), &result)
        }
        return try Self.verdict(result).get()
    }

    /// The image's size, or why a checked body is not a PNG.
    static func verdict(_ result: cpng_result) -> Result<ImageInfo, ItemError> {
        switch result.code {
        case 0: .success(ImageInfo(format: .png, width: Int(result.width), height: Int(result.height)))
        case 1: .failure(.notImage(message(of: result)))
        default: .failure(.invalidImage(.png, message(of: result)))
        }
    }

    private static func message(of result: cpng_result) -> String {
        withUnsafeBytes(of: result.message) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
    }
}
