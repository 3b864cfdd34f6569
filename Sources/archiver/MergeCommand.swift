import ArchiverCore
import Foundation

/// `archiver merge --out DIR SHARD...`: joins the bundles of `run --shard I/N` (directories or
/// `pack` tarballs) into the bundle one run of the whole catalog gives.
enum MergeCommand {
    static func main(_ arguments: [String]) -> Int32 {
        var output: String?
        var quiet = false
        var parser = Arguments(arguments)
        do {
            try parser.parse { name, args in
                switch name {
                case "--out": output = try args.value(for: name)
                case "--quiet", "-q": quiet = true
                default: throw unknownOption(name, command: "merge")
                }
            }
            guard output != nil, !parser.positionals.isEmpty else {
                throw UsageError(description: "merge takes --out DIR and the shard bundles, e.g. 'archiver merge --out archive shard-1 shard-2.tar.gz'")
            }
        } catch {
            return fail("\(error)")
        }
        let summary: BundleMerger.Summary
        do {
            summary = try BundleMerger(output: URL(fileURLWithPath: output!)).merge(parser.positionals)
        } catch {
            for line in error.lines { printError("archiver: \(line)") }
            if case .damaged = error { return 1 }
            return 2
        }
        if !quiet || summary.failed > 0 {
            let kinds = summary.failuresByKind.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
            printError(
                "merged \(summary.shards) shards (\(summary.tarballs) tarball\(summary.tarballs == 1 ? "" : "s")) into \(output!): "
                    + "\(summary.done) done, \(summary.failed) failed\(kinds.isEmpty ? "" : " (\(kinds))"), "
                    + String(format: "%.1f MB in %.2f s", Double(summary.bytes) / 1e6, summary.seconds))
        }
        return summary.failed > 0 ? 1 : 0
    }
}
