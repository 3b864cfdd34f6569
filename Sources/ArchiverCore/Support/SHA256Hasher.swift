import CLibCrypto

/// A SHA-256 fed a piece at a time: the catalog is hashed as it is read, never held whole.
final class SHA256Hasher {
    private let context: OpaquePointer

    init() {
        guard let context = EVP_MD_CTX_new(), EVP_DigestInit_ex(context, SHA256.algorithm, nil) == 1 else {
            preconditionFailure("libcrypto could not start a SHA-256")
        }
        self.context = context
    }

    deinit {
        EVP_MD_CTX_free(context)
    }

    func update(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        precondition(EVP_DigestUpdate(context, bytes.baseAddress, bytes.count) == 1, "libcrypto EVP_DigestUpdate failed")
    }

    /// The lowercase hex digest of everything fed so far.
    func finish() -> String {
        digest().hex
    }

    /// The digest of everything fed so far.
    func digest() -> SHA256Digest {
        withUnsafeTemporaryAllocation(byteCount: 32, alignment: 8) { digest in
            var length: UInt32 = 0
            precondition(
                EVP_DigestFinal_ex(context, digest.baseAddress!.assumingMemoryBound(to: UInt8.self), &length) == 1 && length == 32,
                "libcrypto EVP_DigestFinal_ex failed")
            return SHA256Digest(bytes: UnsafeRawBufferPointer(digest))
        }
    }
}
