import Foundation

extension BundleMerger.Progress {
    /// The progress line, e.g. `120000/200000 records joined, 4/4 shards read  61000 records/s  ETA 1 s`;
    /// while the shards are read (images copied and checked) the records are not known yet.
    package func line(seconds: Double) -> String {
        let shards = "\(shardsRead)/\(self.shards) shards read"
        guard records > 0 else { return "reading shards: \(shards)" }
        let joining = seconds - readSeconds
        let rate = joining > 0 ? Double(recordsJoined) / joining : 0
        var line = "\(recordsJoined)/\(records) records joined, \(shards)  " + String(format: "%.0f records/s", rate)
        if rate > 0, recordsJoined < records {
            line += "  ETA \(ProgressLine.duration(Double(records - recordsJoined) / rate))"
        }
        return line
    }
}

extension BundleMerger.Summary {
    /// The `--json` summary: one object, keys sorted, and a newline.
    package func json(exitStatus: Int32) -> Data {
        var out: [UInt8] = []
        out += Array("{\"bytes\": \(bytes), \"done\": \(done), \"exitStatus\": \(exitStatus), \"failed\": \(failed), \"failuresByKind\": {".utf8)
        for (index, kind) in failuresByKind.keys.sorted().enumerated() {
            if index > 0 { out += Array(", ".utf8) }
            JSONText.string(kind, into: &out)
            out += Array(": \(failuresByKind[kind]!)".utf8)
        }
        out += Array("}, \"seconds\": \(String(format: "%.3f", seconds)), \"shards\": \(shards), \"tarballs\": \(tarballs)}\n".utf8)
        return Data(out)
    }
}
