#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation

/// Joins the bundles of `run --shard I/N` (directories, or tarballs made by `pack`, mixed as
/// they come) into the bundle one run of the whole catalog gives: the same `images/`, and
/// `manifest.json` and the page written by the run's own writer (`BundleOutput`) from the
/// shards' items, so both are the same bytes a run writes.
///
///     shards ─▶ manifests (a tarball's is its last entry: one pass to it)
///            ─▶ checks: one of each index, one catalog and options, finished   [exit 2]
///            ─▶ copy images/ into a staging directory, each file's size and sha256
///               checked against its shard's manifest as it is copied              [exit 1]
///            ─▶ catalog and ledger rebuilt from the items ─▶ BundleOutput
///            ─▶ journal, options ─▶ rename the staging directory to --out
public struct BundleMerger: Sendable {
    public struct Summary: Sendable {
        public var shards = 0
        public var tarballs = 0
        public var done = 0
        public var failed = 0
        public var bytes: Int64 = 0
        public var seconds: Double = 0
        public var failuresByKind: [String: Int] = [:]
    }

    let output: URL

    public init(output: URL) {
        self.output = output
    }

    /// Merges the shard bundles at `paths` into `output`, which must not exist yet (or be an
    /// empty directory); nothing is there unless the whole merge succeeds.
    public func merge(_ paths: [String]) throws(MergeError) -> Summary {
        let started = DispatchTime.now()
        try refuseExistingOutput()
        // Decoding a manifest is a quarter of a merge's CPU: the shards are read side by side.
        let opened = Self.forEach(paths) { path -> Result<ShardBundle, BundleError> in
            do throws(BundleError) { return .success(try ShardBundle.open(path)) } catch { return .failure(error) }
        }
        var shards: [ShardBundle] = []
        for result in opened {
            switch result {
            case .success(let shard): shards.append(shard)
            case .failure(let error): throw .bundle(error)
            }
        }
        let problems = ShardSet.problems(shards)
        guard problems.isEmpty else { throw .refused(problems) }

        // What a killed merge into the same output left (its PID dead).
        let merging = ".\(output.lastPathComponent).merging-"
        Leftovers.remove(in: output.deletingLastPathComponent().path, prefix: merging, directories: true)
        let staging = output.deletingLastPathComponent().appendingPathComponent(
            merging + "\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        let layout = BundleLayout(root: staging)
        var summary: Summary
        do throws(MergeError) {
            summary = try build(layout, from: shards)
            guard rename(staging.path, output.path) == 0 else {
                throw .io(FileSystemError(.rename, path: staging.path, to: output.path, errno: errno).description)
            }
        } catch {
            try? FileManager.default.removeItem(at: staging)
            // A full destination is said once, naming --out, whichever file met it first.
            switch error {
            case .destinationFull(_, let reason): throw .destinationFull(output: output.path, reason: reason)
            case .fileSystem(let failure) where failure.errno == ENOSPC || failure.errno == EDQUOT:
                throw .destinationFull(output: output.path, reason: failure.reason)
            default: throw error
            }
        }
        summary.seconds = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9
        return summary
    }

    /// `body` of each element, on as many threads as there are cores, in the elements' order.
    private static func forEach<Element: Sendable, Value: Sendable>(
        _ elements: [Element], _ body: @Sendable (Element) -> Value
    ) -> [Value] {
        let results = Locked([Value?](repeating: nil, count: elements.count))
        DispatchQueue.concurrentPerform(iterations: elements.count) { index in
            let value = body(elements[index])
            results.withLock { $0[index] = value }
        }
        return results.withLock { $0.map { $0! } }
    }

    private func refuseExistingOutput() throws(MergeError) {
        switch BundleLayout.fileKind(atPath: output.path) {
        case .missing: return
        case .directory:
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: output.path)) ?? ["?"]
            if entries.isEmpty { return }
        default: break
        }
        throw .refused(["--out \(output.path) already exists; merge makes a new bundle: give a directory that does not exist yet"])
    }

    private func build(_ layout: BundleLayout, from shards: [ShardBundle]) throws(MergeError) -> Summary {
        do {
            try FileManager.default.createDirectory(at: layout.images, withIntermediateDirectories: true)
            try FileManager.default.createDirectory(at: layout.state, withIntermediateDirectories: false)
        } catch {
            throw .io(FileSystemError(.create, path: layout.root.path, foundation: error).description)
        }
        // Side by side too: one shard's files are hashed while another's are decompressed.
        let copied = Self.forEach(shards) { shard -> Result<(damage: [String], bytes: Int64), MergeError> in
            do throws(MergeError) {
                let copier: ImageCopier
                do throws(FileSystemError) { copier = try ImageCopier(directory: layout.images.path) } catch { throw .fileSystem(error) }
                return .success((try shard.copyImages(with: copier), copier.bytes))
            } catch {
                return .failure(error)
            }
        }
        var damage: [String] = []
        var bytes: Int64 = 0
        for result in copied {
            switch result {
            case .success(let shard):
                damage += shard.damage
                bytes += shard.bytes
            case .failure(let error): throw error
            }
        }
        guard damage.isEmpty else { throw .damaged(damage) }

        let reference = shards[0].manifest
        let field = reference.field
        var items = shards.flatMap(\.manifest.items)
        items.sort { $0.id < $1.id }
        let catalog = Catalog(
            source: reference.catalog.source, sha256: reference.catalog.sha256,
            decoded: items.map {
                CatalogRecord(
                    albumId: $0.albumId, id: $0.id, title: $0.title, url: field == .thumbnailUrl ? "" : $0.url,
                    thumbnailUrl: field == .thumbnailUrl ? $0.url : "")
            })
        let outcomes = items.map {
            ItemRecord(
                id: $0.id, url: $0.url, source: $0.source, status: $0.status, bytes: $0.bytes ?? 0,
                sha256: $0.sha256 ?? "", width: $0.width ?? 0, height: $0.height ?? 0, attempts: $0.attempts,
                error: $0.error, validators: Validators(etag: $0.etag, lastModified: $0.lastModified))
        }
        items = []
        var configuration = RunConfiguration()
        configuration.catalogSource = catalog.source
        configuration.outputDirectory = layout.root
        configuration.field = field
        let ledger = Ledger(
            records: catalog.records, mirrors: configuration.mirrors, previous: JournalIndex(path: layout.journal.path),
            kept: [], total: outcomes.count)
        ledger.record(outcomes, bytes: bytes)
        let tally = ledger.tally()
        do throws(FileSystemError) {
            // The run's own writer: the same manifest and page bytes as a run of the whole catalog.
            let output = try BundleOutput(catalog: catalog, ledger: ledger, configuration: configuration, layout: layout)
            try output.commit(counts: [.done: tally.done, .failed: tally.failed, .pending: 0])
            // What a completed run leaves in .archiver/, so `status` reads it and a run of the
            // whole catalog into it resumes with nothing to do.
            try Journal.compact(path: layout.journal.path, records: outcomes)
        } catch {
            throw .fileSystem(error)
        }
        do {
            try RunOptions(catalog: catalog.source, field: field, records: catalog.records.count).claim(layout)
        } catch {
            throw .io(error.description)
        }
        BundleStamp(catalog: catalog, field: field, layout: layout)?.write(layout)

        var summary = Summary()
        summary.shards = shards.count
        summary.tarballs = shards.count { $0.isTarball }
        summary.done = tally.done
        summary.failed = tally.failed
        summary.bytes = tally.bytes
        summary.failuresByKind = tally.failuresByKind
        return summary
    }
}
