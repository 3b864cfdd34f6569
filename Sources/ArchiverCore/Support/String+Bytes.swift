#if canImport(Glibc)
import Glibc
#endif

extension String {
    /// At most the first `bytes` bytes of the text, cut where a character's UTF-8 starts (never
    /// inside one); the text itself when it is no longer. Only the kept bytes are read.
    func prefix(utf8Bytes bytes: Int) -> String {
        let utf8 = self.utf8
        guard utf8.count > bytes else { return self }
        var end = utf8.index(utf8.startIndex, offsetBy: bytes)
        while end > utf8.startIndex, UTF8.isContinuation(utf8[end]) { utf8.formIndex(before: &end) }
        return String(decoding: utf8[..<end], as: UTF8.self)
    }

    /// Whether the two strings are the same bytes. String's `==` calls two Unicode-equivalent
    /// spellings equal, and a server or a file system may not; `utf8.elementsEqual` says the
    /// same thing a byte at a time (measured: the manifest writer's comparison of each outcome's
    /// URL with the catalog's was 0.6% of a run), this with one `memcmp`.
    func hasSameBytes(as other: String) -> Bool {
        var a = self, b = other
        return a.withUTF8 { x in
            b.withUTF8 { y in
                x.count == y.count && (x.isEmpty || memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0)
            }
        }
    }
}
