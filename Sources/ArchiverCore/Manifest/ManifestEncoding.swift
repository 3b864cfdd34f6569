/// The manifest's canonical bytes, written by hand: keys sorted, one item per line (easy to diff
/// and grep), no JSON tree built in memory first. JSONEncoder took a fifth of a complete rerun.
enum ManifestEncoding {
    static func encode(_ manifest: Manifest) -> [UInt8] {
        var out: [UInt8] = []
        encode(manifest) { out += $0 }
        return out
    }

    /// Hands the bytes to `emit` about 64 KiB at a time, so a writer can stream them to disk.
    static func encode(_ manifest: Manifest, emit: ([UInt8]) -> Void) {
        encode(catalog: manifest.catalog, field: manifest.field, version: manifest.version, items: manifest.items, emit: emit)
    }

    /// The same from parts, with items (in id order) taken one at a time from any sequence.
    static func encode(
        catalog: Manifest.CatalogInfo, field: ImageField, version: Int, items: some Sequence<Manifest.Item>,
        emit: ([UInt8]) -> Void
    ) {
        var out = head(catalog: catalog, field: field)
        var count = 0
        for item in items {
            append(item, index: count, to: &out)
            count += 1
            if out.count >= 1 << 16 {
                emit(out)
                out.removeAll(keepingCapacity: true)
            }
        }
        out += tail(version: version, items: count)
        emit(out)
    }

    /// Everything before the first item: a manifest can be written item by item as a run goes,
    /// `head`, then `append` for each item in id order, then `tail`.
    static func head(catalog: Manifest.CatalogInfo, field: ImageField) -> [UInt8] {
        var out: [UInt8] = []
        out += Array("{\n  \"catalog\": {\"records\": \(catalog.records), \"sha256\": ".utf8)
        JSONText.string(catalog.sha256, into: &out)
        if let shard = catalog.shard {
            out += Array(", \"shard\": {\"count\": \(shard.count), \"index\": \(shard.index), \"records\": \(shard.records)}".utf8)
        }
        out += Array(", \"source\": ".utf8)
        JSONText.string(catalog.source, into: &out)
        out += Array("},\n  \"field\": ".utf8)
        JSONText.string(field.rawValue, into: &out)
        out += Array(",\n  \"items\": [".utf8)
        return out
    }

    /// Item number `index` (from 0), with the separator before it.
    static func append(_ item: Manifest.Item, index: Int, to out: inout [UInt8]) {
        out.appendLiteral(index == 0 ? "\n    " : ",\n    ")
        encode(item, into: &out)
    }

    /// Everything after the last of `items` items.
    static func tail(version: Int, items: Int) -> [UInt8] {
        Array(((items == 0 ? "],\n" : "\n  ],\n") + "  \"version\": \(version)\n}\n").utf8)
    }

    /// One item as a single-line object with its keys in sorted order.
    private static func encode(_ item: Manifest.Item, into out: inout [UInt8]) {
        // Bytes are appended straight from literals and small integer strings: building a
        // String and an Array per key made the manifest the slowest part of a run's end.
        var first = true
        func key(_ name: StaticString) {
            out.appendLiteral(first ? #"{""# : #", ""#)
            out.appendLiteral(name)
            out.appendLiteral(#"": "#)
            first = false
        }
        func number(_ value: some BinaryInteger) {
            out.appendDecimal(value)
        }
        key("albumId"); number(item.albumId)
        key("attempts"); number(item.attempts)
        if let bytes = item.bytes { key("bytes"); number(bytes) }
        if let error = item.error {
            key("error")
            out.appendLiteral(#"{"kind": "#)
            JSONText.string(error.kind, into: &out)
            out.appendLiteral(#", "message": "#)
            JSONText.string(error.message, into: &out)
            if let status = error.status {
                out.appendLiteral(#", "status": "#)
                number(status)
            }
            out.append(0x7D)
        }
        if let etag = item.etag { key("etag"); JSONText.string(etag, into: &out) }
        if let format = item.format { key("format"); JSONText.string(format.rawValue, into: &out) }
        if let frames = item.frames { key("frames"); number(frames) }
        if let height = item.height { key("height"); number(height) }
        key("id")
        switch item.id.value {
        case .integer(let id): number(id)
        case .string(let id): JSONText.string(id, into: &out)
        }
        if let lastModified = item.lastModified { key("lastModified"); JSONText.string(lastModified, into: &out) }
        if let path = item.path { key("path"); JSONText.string(path, into: &out) }
        if let sha256 = item.sha256 { key("sha256"); JSONText.string(sha256, into: &out) }
        key("source"); JSONText.string(item.source, into: &out)
        key("status"); JSONText.string(item.status.rawValue, into: &out)
        key("title"); JSONText.string(item.title, into: &out)
        key("url"); JSONText.string(item.url, into: &out)
        if let width = item.width { key("width"); number(width) }
        out.append(0x7D)
    }
}
