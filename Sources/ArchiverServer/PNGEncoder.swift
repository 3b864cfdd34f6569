internal import CPNG
import Foundation

/// Encodes simple PNGs with libpng.
package enum PNGEncoder {
    /// A `width` x `height` 8-bit RGB PNG of one colour; the same arguments give the same bytes.
    ///
    /// Both sizes must be in 1...65535 (the built-in image server uses sizes like 600 and 150).
    package static func solid(width: Int, height: Int, red: UInt8, green: UInt8, blue: UInt8) -> Data {
        precondition((1...65535).contains(width) && (1...65535).contains(height), "unsupported PNG size \(width)x\(height)")
        var bytes: UnsafeMutablePointer<UInt8>?
        var count = 0
        let status = cpng_encode_solid(UInt32(width), UInt32(height), red, green, blue, &bytes, &count)
        guard status == 0, let bytes else {
            fatalError("libpng could not encode a \(width)x\(height) PNG (status \(status))")
        }
        defer { cpng_free(bytes) }
        return Data(bytes: bytes, count: count)
    }
}
