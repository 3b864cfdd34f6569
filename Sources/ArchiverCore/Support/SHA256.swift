import CLibCrypto
import Foundation

/// SHA-256 digests through OpenSSL's libcrypto.
public enum SHA256 {
    /// The lowercase hex SHA-256 of `data`.
    public static func hex(_ data: Data) -> String {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let ok = data.withUnsafeBytes { raw in
            EVP_Digest(raw.baseAddress, raw.count, &digest, &length, EVP_sha256(), nil)
        }
        precondition(ok == 1 && length == 32, "libcrypto EVP_Digest failed")
        return hexString(digest)
    }

    static func hexString(_ bytes: [UInt8]) -> String {
        let table = Array("0123456789abcdef".utf8)
        var out = [UInt8](repeating: 0, count: bytes.count * 2)
        for (i, byte) in bytes.enumerated() {
            out[2 * i] = table[Int(byte >> 4)]
            out[2 * i + 1] = table[Int(byte & 0x0f)]
        }
        return String(decoding: out, as: UTF8.self)
    }
}
