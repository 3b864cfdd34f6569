import Foundation

/// The options that shape a bundle, recorded in `DIR/.archiver/options.json` so a rerun with
/// different ones is refused instead of silently mixing two bundles.
struct RunOptions: Codable, Equatable {
    var catalog: String
    var field: ImageField
    var records: Int
    /// `--shard` as given (`2/4`); nil for a run of the whole catalog.
    var shard: String?
    /// `--id` when not `id`: another key gives every record another identity.
    var idKey: String? = nil
    /// `--records` when given: another pointer reads other records from the same file.
    var pointer: String? = nil

    /// Refuses a mismatch with what the directory already records, then records these.
    func claim(_ layout: BundleLayout) throws(RunError) {
        if let recorded = Self.read(layout) {
            let directory = layout.root.path
            if recorded.field != field {
                throw .optionsChanged(
                    directory: directory, option: "--field", recorded: recorded.field.rawValue, given: field.rawValue)
            }
            if recorded.catalog != catalog {
                throw .optionsChanged(
                    directory: directory, option: "--catalog", recorded: recorded.catalog, given: catalog)
            }
            if (recorded.idKey ?? "id") != (idKey ?? "id") {
                throw .optionsChanged(directory: directory, option: "--id", recorded: recorded.idKey ?? "id", given: idKey ?? "id")
            }
            if (recorded.pointer ?? "") != (pointer ?? "") {
                throw .optionsChanged(
                    directory: directory, option: "--records", recorded: recorded.pointer ?? "(none)", given: pointer ?? "none")
            }
            if recorded.shard != shard {
                throw .optionsChanged(
                    directory: directory, option: "--shard", recorded: recorded.shard ?? "(none: the whole catalog)",
                    given: shard ?? "none")
            }
        }
        do { try write(layout) } catch { throw .fileSystem(error) }
    }

    /// Records these options in `layout`, whatever it recorded before.
    func write(_ layout: BundleLayout) throws(FileSystemError) {
        try AtomicFileWriter.write(encoded, to: layout.options.path)
    }

    /// The file's bytes, keys sorted, as JSONEncoder wrote them. Built by hand: JSONEncoder's first
    /// use and Data's atomic write cost over a millisecond at the start of every run.
    var encoded: [UInt8] {
        var out = Array(#"{"catalog":"#.utf8)
        JSONText.string(catalog, into: &out)
        out += #","field":"#.utf8
        JSONText.string(field.rawValue, into: &out)
        if let idKey {
            out += #","idKey":"#.utf8
            JSONText.string(idKey, into: &out)
        }
        if let pointer {
            out += #","pointer":"#.utf8
            JSONText.string(pointer, into: &out)
        }
        out += #","records":\#(records)"#.utf8
        if let shard {
            out += #","shard":"#.utf8
            JSONText.string(shard, into: &out)
        }
        out += "}".utf8
        return out
    }

    static func read(_ layout: BundleLayout) -> RunOptions? {
        readBundleFile(layout.options.path).flatMap { try? JSONDecoder().decode(RunOptions.self, from: $0) }
    }
}
