import CLibCrypto
import Foundation

/// A SHA-256 digest: its 32 bytes as four big-endian words. It stays this from the hash to the
/// journal line, the ledger and the manifest's text; hex is made only where text is written.
struct SHA256Digest: Hashable, Sendable, CustomStringConvertible {
    /// Bytes 0-7, 8-15, 16-23 and 24-31, each read big-endian.
    var words: (UInt64, UInt64, UInt64, UInt64) {
        (w0, w1, w2, w3)
    }

    private let w0, w1, w2, w3: UInt64

    init(words: (UInt64, UInt64, UInt64, UInt64)) {
        (w0, w1, w2, w3) = words
    }

    /// The digest whose bytes are `bytes` (32 of them).
    init(bytes: UnsafeRawBufferPointer) {
        precondition(bytes.count == 32, "a SHA-256 digest is 32 bytes")
        func word(_ at: Int) -> UInt64 { UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: at, as: UInt64.self)) }
        (w0, w1, w2, w3) = (word(0), word(8), word(16), word(24))
    }

    /// The digest spelled by 64 lowercase hex digits, as the archiver writes it; nil for any
    /// other text (another spelling is not the same text in a manifest or journal).
    init?(hex: some StringProtocol) {
        var text = String(hex)
        guard let digest = text.withUTF8({ SHA256Digest(hexBytes: $0) }) else { return nil }
        self = digest
    }

    /// The same from the text's bytes (a journal field).
    init?(hexBytes utf8: UnsafeBufferPointer<UInt8>) {
        guard utf8.count == 64 else { return nil }
        func word(_ start: Int) -> UInt64? {
            var value: UInt64 = 0
            for byte in utf8[start..<start + 16] {
                switch byte {
                case 0x30...0x39: value = value << 4 | UInt64(byte - 0x30)
                case 0x61...0x66: value = value << 4 | UInt64(byte - 0x61 + 10)
                default: return nil
                }
            }
            return value
        }
        guard let a = word(0), let b = word(16), let c = word(32), let d = word(48) else { return nil }
        (w0, w1, w2, w3) = (a, b, c, d)
    }

    /// The SHA-256 of `data`.
    static func of(_ data: Data) -> SHA256Digest {
        withUnsafeTemporaryAllocation(byteCount: 32, alignment: 8) { digest in
            var length: UInt32 = 0
            let ok = data.withUnsafeBytes { raw in
                EVP_Digest(raw.baseAddress, raw.count, digest.baseAddress, &length, SHA256.algorithm, nil)
            }
            precondition(ok == 1 && length == 32, "libcrypto EVP_Digest failed")
            return SHA256Digest(bytes: UnsafeRawBufferPointer(digest))
        }
    }

    /// 64 lowercase hex digits.
    var hex: String {
        String(unsafeUninitializedCapacity: 64) { out in
            write(into: UnsafeMutableRawBufferPointer(out))
            return 64
        }
    }

    var description: String { hex }

    /// Appends the 64 lowercase hex digits to `bytes`.
    func appendHex(to bytes: inout [UInt8]) {
        let start = bytes.count
        bytes += repeatElement(0, count: 64)
        bytes.withUnsafeMutableBytes { raw in write(into: UnsafeMutableRawBufferPointer(rebasing: raw[start..<start + 64])) }
    }

    private func write(into out: UnsafeMutableRawBufferPointer) {
        func put(_ word: UInt64, at start: Int) {
            for nibble in 0..<16 {
                let value = UInt8(truncatingIfNeeded: word >> UInt64(60 - 4 * nibble)) & 0x0F
                out[start + nibble] = value < 10 ? 0x30 + value : 0x57 + value
            }
        }
        put(w0, at: 0)
        put(w1, at: 16)
        put(w2, at: 32)
        put(w3, at: 48)
    }
}
