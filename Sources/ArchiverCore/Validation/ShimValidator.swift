internal import CGIF
internal import CJPEG
internal import CWebP
import Foundation

/// Validates JPEG, WebP and GIF bodies, each with its own library through its C shim
/// (`cjpeg_check`, `cwebp_check`, `cgif_check`): structurally by default, or by decoding every
/// pixel of every frame. The shims' result structs share one shape: a code (0 ok, 1 not the
/// format, 2 broken), the size, the frame count and a NUL-terminated message.
struct ShimValidator: ImageValidating {
    /// `.jpeg`, `.webp` or `.gif` (PNG has `PNGValidator`, which also checks a stream).
    let format: ImageFormat
    /// How thoroughly each body is checked.
    let mode: ValidationMode
    /// The largest width or height accepted; larger images fail from the header alone.
    let maxDimension: Int

    /// Creates a validator; `maxDimension` must be between 1 and 2^31 - 1.
    init(_ format: ImageFormat, mode: ValidationMode = .structure, maxDimension: Int = 16384) {
        precondition(format != .png, "PNG bodies go through PNGValidator")
        precondition(maxDimension >= 1 && maxDimension <= Int(Int32.max), "maxDimension out of range: \(maxDimension)")
        self.format = format
        self.mode = mode
        self.maxDimension = maxDimension
    }

    /// Returns the image's size and frames, or throws `.notImage` or `.invalidImage(format, _)`.
    func validate(_ data: Data) throws(ItemError) -> ImageInfo {
        let full: Int32 = mode == .full ? 1 : 0
        let limit = UInt32(maxDimension)
        return try data.withUnsafeBytes { raw -> Result<ImageInfo, ItemError> in
            let bytes = raw.bindMemory(to: UInt8.self)
            switch format {
            case .jpeg:
                var r = cjpeg_result()
                cjpeg_check(bytes.baseAddress, bytes.count, full, limit, &r)
                return verdict(r.code, r.width, r.height, r.frames, r.message)
            case .webp:
                var r = cwebp_result()
                cwebp_check(bytes.baseAddress, bytes.count, full, limit, &r)
                return verdict(r.code, r.width, r.height, r.frames, r.message)
            case .gif:
                var r = cgif_result()
                cgif_check(bytes.baseAddress, bytes.count, full, limit, &r)
                return verdict(r.code, r.width, r.height, r.frames, r.message)
            case .png:
                preconditionFailure("PNG bodies go through PNGValidator")
            }
        }.get()
    }

    private func verdict<Message>(_ code: Int32, _ width: UInt32, _ height: UInt32, _ frames: UInt32, _ message: Message)
        -> Result<ImageInfo, ItemError>
    {
        let text = withUnsafeBytes(of: message) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        switch code {
        case 0: return .success(ImageInfo(format: format, width: Int(width), height: Int(height), frames: Int(frames)))
        case 1: return .failure(.notImage(text))
        default: return .failure(.invalidImage(format, text))
        }
    }
}
