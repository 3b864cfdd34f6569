import Foundation
import XCTest
@testable import ArchiverCore

/// The SHA-256 every manifest, journal line and shard choice rests on, held to the known answers
/// of FIPS 180-4's examples (and NIST's long-message vector), not to its own output.
final class SHA256Tests: XCTestCase {
    private static let vectors: [(name: String, message: Data, digest: String)] = [
        ("abc", Data("abc".utf8), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        ("the empty string", Data(), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("the 448-bit two-block message", Data("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8),
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
        ("one million 'a'", Data(repeating: 0x61, count: 1_000_000), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"),
    ]

    func testWholeMessagesGiveTheFIPSDigests() {
        for vector in Self.vectors {
            XCTAssertEqual(SHA256.hex(vector.message), vector.digest, vector.name)
        }
    }

    /// The streaming hasher of verify, pack and merge, fed in pieces that straddle the 64-byte
    /// blocks (1, 63, 64 and 65 bytes; the long message in 4093 bytes and 64 KiB).
    func testStreamedMessagesGiveTheFIPSDigestsWhateverThePieces() {
        for vector in Self.vectors {
            for piece in vector.message.count > 1000 ? [4093, 65536] : [1, 63, 64, 65] {
                let hasher = SHA256Hasher()
                var offset = 0
                vector.message.withUnsafeBytes { bytes in
                    while offset < bytes.count {
                        let end = min(bytes.count, offset + piece)
                        hasher.update(UnsafeRawBufferPointer(rebasing: bytes[offset..<end]))
                        offset = end
                    }
                }
                XCTAssertEqual(hasher.finish(), vector.digest, "\(vector.name) in pieces of \(piece)")
            }
        }
    }
}
