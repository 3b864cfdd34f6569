import ArchiverCore
import Foundation

/// `archiver merge --out DIR SHARD...`: joins the bundles of `run --shard I/N` (directories or
/// `pack` tarballs) into the bundle one run of the whole catalog gives.
enum MergeCommand {
    struct Options {
        var output: String?
        var quiet = false
        var json = false
    }

    static let spec = CommandSpec<Options>(
        name: "merge", synopsis: "archiver merge --out DIR SHARD... [--json]",
        summary: """
            Joins shard bundles (directories made by 'run --shard', or their 'pack' tarballs) into DIR, the
            bundle one run of the whole catalog gives; every file's size and sha256 is checked against its
            shard's manifest.
            """,
        options: [
            .text("--out", "DIR", "the merged bundle directory (must not exist yet, or be empty)") { $0.output = $1 },
            .flag("--quiet", alias: "-q", "no progress, and no summary line unless items failed") { $0.quiet = true },
            .flag("--json", "print a machine-readable summary on stdout") { $0.json = true },
        ],
        notes: """
            exit status: 0 all done, 1 some items failed or a shard is damaged (nothing written),
                         2 shards missing, repeated or not of one run
            """,
        operands: .file)

    static func main(_ arguments: [String]) -> Int32 {
        var options = Options()
        let positionals: [String]
        do {
            positionals = try spec.parse(arguments, into: &options)
            guard options.output != nil, !positionals.isEmpty else {
                throw UsageError(description: "merge takes --out DIR and the shard bundles, e.g. 'archiver merge --out archive shard-1 shard-2.tar.gz'")
            }
        } catch {
            return fail("\(error)")
        }
        let summary: BundleMerger.Summary
        let merger = BundleMerger(output: URL(fileURLWithPath: options.output!))
        let progress = options.quiet ? nil : ProgressPrinter(style: .standardError(), line: { merger.progress.line(seconds: $0) })
        do {
            summary = try merger.merge(positionals)
            progress?.stop()
        } catch {
            progress?.stop()
            for line in error.lines { printError("archiver: \(line)") }
            if case .damaged = error { return 1 }
            return 2
        }
        if !options.quiet || summary.failed > 0 {
            let kinds = summary.failuresByKind.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
            printError(
                "merged \(summary.shards) shards (\(summary.tarballs) tarball\(summary.tarballs == 1 ? "" : "s")) into \(options.output!): "
                    + "\(summary.done) done, \(summary.failed) failed\(kinds.isEmpty ? "" : " (\(kinds))"), "
                    + String(format: "%.1f MB in %.2f s", Double(summary.bytes) / 1e6, summary.seconds))
        }
        let status: Int32 = summary.failed > 0 ? 1 : 0
        if options.json {
            try? FileHandle.standardOutput.write(contentsOf: summary.json(exitStatus: status))
        }
        return status
    }
}
