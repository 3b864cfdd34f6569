/// The verdict of one of the C shims' checks (`cjpeg_check`, `cwebp_check`, `cgif_check`), whose
/// result structs share one shape: a code (0 ok, 1 not the format, 2 broken), the size, the frame
/// count and a NUL-terminated message.
enum ShimVerdict {
    static func verdict<Message>(
        _ format: ImageFormat, code: Int32, width: UInt32, height: UInt32, frames: UInt32, message: Message
    ) -> Result<ImageInfo, ItemError> {
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
