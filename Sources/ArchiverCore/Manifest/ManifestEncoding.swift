/// The manifest's canonical bytes, written by hand: keys sorted, one item per line (easy to diff
/// and grep), no JSON tree built in memory first. JSONEncoder took a fifth of a complete rerun.
enum ManifestEncoding {
    static func encode(_ manifest: Manifest) -> [UInt8] {
        var out: [UInt8] = []
        encode(manifest) { out += $0 }
        return out
    }

    /// Hands the bytes to `emit` a line at a time, so a writer can stream them to disk.
    static func encode(_ manifest: Manifest, emit: ([UInt8]) -> Void) {
        encode(catalog: manifest.catalog, field: manifest.field, version: manifest.version, items: manifest.items, emit: emit)
    }

    /// The same from parts, with items (in id order) taken one at a time from any sequence.
    static func encode(
        catalog: Manifest.CatalogInfo, field: ImageField, version: Int, items: some Sequence<Manifest.Item>,
        emit: ([UInt8]) -> Void
    ) {
        var out: [UInt8] = []
        out += Array("{\n  \"catalog\": {\"records\": \(catalog.records), \"sha256\": ".utf8)
        string(catalog.sha256, into: &out)
        out += Array(", \"source\": ".utf8)
        string(catalog.source, into: &out)
        out += Array("},\n  \"field\": ".utf8)
        string(field.rawValue, into: &out)
        out += Array(",\n  \"items\": [".utf8)
        var empty = true
        for item in items {
            out += Array((empty ? "\n    " : ",\n    ").utf8)
            empty = false
            encode(item, into: &out)
            emit(out)
            out.removeAll(keepingCapacity: true)
        }
        out += Array((empty ? "],\n" : "\n  ],\n").utf8)
        out += Array("  \"version\": \(version)\n}\n".utf8)
        emit(out)
    }

    /// One item as a single-line object with its keys in sorted order.
    private static func encode(_ item: Manifest.Item, into out: inout [UInt8]) {
        var first = true
        func key(_ name: String) {
            out += Array(((first ? "{\"" : ", \"") + name + "\": ").utf8)
            first = false
        }
        key("albumId"); out += Array(String(item.albumId).utf8)
        key("attempts"); out += Array(String(item.attempts).utf8)
        if let bytes = item.bytes { key("bytes"); out += Array(String(bytes).utf8) }
        if let error = item.error {
            key("error")
            out += Array("{\"kind\": ".utf8)
            string(error.kind, into: &out)
            out += Array(", \"message\": ".utf8)
            string(error.message, into: &out)
            if let status = error.status { out += Array(", \"status\": \(status)".utf8) }
            out.append(0x7D)
        }
        if let height = item.height { key("height"); out += Array(String(height).utf8) }
        key("id"); out += Array(String(item.id).utf8)
        if let path = item.path { key("path"); string(path, into: &out) }
        if let sha256 = item.sha256 { key("sha256"); string(sha256, into: &out) }
        key("source"); string(item.source, into: &out)
        key("status"); string(item.status.rawValue, into: &out)
        key("title"); string(item.title, into: &out)
        key("url"); string(item.url, into: &out)
        if let width = item.width { key("width"); out += Array(String(width).utf8) }
        out.append(0x7D)
    }

    /// A JSON string: quotes, backslashes and control characters escaped, everything else as UTF-8.
    static func string(_ text: String, into out: inout [UInt8]) {
        out.append(0x22)
        guard text.utf8.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }) else {
            out += text.utf8
            out.append(0x22)
            return
        }
        for byte in text.utf8 {
            switch byte {
            case 0x22: out += [0x5C, 0x22]
            case 0x5C: out += [0x5C, 0x5C]
            case 0x0A: out += [0x5C, 0x6E]
            case 0x0D: out += [0x5C, 0x72]
            case 0x09: out += [0x5C, 0x74]
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out += [0x5C, 0x75, 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            default: out.append(byte)
            }
        }
        out.append(0x22)
    }
}
