/// JSON written by hand, for files whose bytes must be the same for the same content: the
/// manifest, the run options, the bundle stamp; and ids shown in messages.
enum JSONText {
    /// A JSON string: quotes, backslashes and control characters escaped, everything else as UTF-8.
    static func string(_ text: String, into out: inout [UInt8]) {
        var text = text
        text.withUTF8 { utf8 in
            out.append(0x22)
            // Runs that need no escape (nearly every string) are copied whole.
            var start = 0
            for index in utf8.indices {
                let byte = utf8[index]
                guard byte < 0x20 || byte == 0x22 || byte == 0x5C else { continue }
                out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<index]))
                start = index + 1
                switch byte {
                case 0x22: out += [0x5C, 0x22]
                case 0x5C: out += [0x5C, 0x5C]
                case 0x0A: out += [0x5C, 0x6E]
                case 0x0D: out += [0x5C, 0x72]
                case 0x09: out += [0x5C, 0x74]
                default:
                    let hex: StaticString = "0123456789abcdef"
                    out += [0x5C, 0x75, 0x30, 0x30, hex.utf8Start[Int(byte >> 4)], hex.utf8Start[Int(byte & 0xF)]]
                }
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...]))
            out.append(0x22)
        }
    }
}
