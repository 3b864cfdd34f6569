#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation

/// Joins the bundles of `run --shard I/N` (directories, or tarballs made by `pack`, mixed as
/// they come) into the bundle one run of the whole catalog gives: the same `images/`, and
/// `manifest.json`, the pages and the journal written from the shards' items by the run's own
/// encoders, so they are the same bytes a run writes. Memory does not follow the records: no
/// shard's items are held, only a few dozen bytes of each (see `ShardDigest`).
///
///     shards, side by side ─▶ images/ copied into a staging directory, size and sha256 noted
///                             (a tarball read once: its manifest, after images/, spooled)
///                          ─▶ manifest decoded once: checked item by item (ShardDigest),
///                             the items spooled in binary (ItemSpool)
///            ─▶ checks: one of each index, one catalog and options, finished, id order [exit 2]
///            ─▶ every done item's file as its manifest says                            [exit 1]
///            ─▶ ids merged ─▶ item spools read back, joined in id order
///               ─▶ manifest.json, pages/, journal in one pass (MergedOutput)
///            ─▶ options ─▶ rename the staging directory to --out
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

    /// How far a merge is, for a progress line.
    public struct Progress: Sendable {
        public var shards = 0
        public var shardsRead = 0
        public var records = 0
        public var recordsJoined = 0
        /// Seconds from the start of the merge to the start of joining: the rate counts from there.
        public var readSeconds: Double = 0
    }

    let output: URL
    private let state = Locked(Progress())
    private let joined = Locked(0)

    public init(output: URL) {
        self.output = output
    }

    /// Where the merge is now; safe from any thread.
    public var progress: Progress {
        var progress = state.withLock { $0 }
        progress.recordsJoined = joined.withLock { $0 }
        return progress
    }

    /// Merges the shard bundles at `paths` into `output`, which must not exist yet (or be an
    /// empty directory); nothing is there unless the whole merge succeeds.
    public func merge(_ paths: [String]) throws(MergeError) -> Summary {
        let started = DispatchTime.now()
        try refuseExistingOutput()
        // What a killed merge into the same output left (its PID dead).
        let merging = ".\(output.lastPathComponent).merging-"
        Leftovers.remove(in: output.deletingLastPathComponent().path, prefix: merging, directories: true)
        let staging = output.deletingLastPathComponent().appendingPathComponent(
            merging + "\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        let layout = BundleLayout(root: staging)
        var summary: Summary
        do throws(MergeError) {
            summary = try build(layout, from: paths)
            guard rename(staging.path, output.path) == 0 else {
                throw .fileSystem(FileSystemError(.rename, path: staging.path, to: output.path, errno: errno))
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
            // One that cannot be read is refused as one that holds something.
            if OpenDirectory(path: output.path, followingLink: false)?.isEmpty == true { return }
        default: break
        }
        throw .refused(["--out \(output.path) already exists; merge makes a new bundle: give a directory that does not exist yet"])
    }

    private func build(_ layout: BundleLayout, from paths: [String]) throws(MergeError) -> Summary {
        do {
            try FileManager.default.createDirectory(at: layout.images, withIntermediateDirectories: true)
            try FileManager.default.createDirectory(at: layout.state, withIntermediateDirectories: false)
        } catch {
            throw .fileSystem(FileSystemError(.create, path: layout.root.path, foundation: error))
        }
        let started = DispatchTime.now()
        state.withLock { $0.shards = paths.count }
        // Side by side: one shard's files are hashed while another's are decompressed, and
        // decoding the manifests is the largest part of a merge's CPU.
        let spools = paths.indices.map { layout.state.appendingPathComponent("merge-shard-\($0).json").path }
        let itemSpools = paths.indices.map { layout.state.appendingPathComponent("merge-shard-\($0).items").path }
        let read = Self.forEach(Array(paths.indices)) { [state] index -> Result<ShardBundle, MergeError> in
            defer { state.withLock { $0.shardsRead += 1 } }
            do throws(MergeError) {
                let copier: ImageCopier
                do throws(FileSystemError) { copier = try ImageCopier(directory: layout.images.path) } catch { throw .fileSystem(error) }
                return .success(try ShardBundle.read(paths[index], into: copier, spool: spools[index], items: itemSpools[index]))
            } catch {
                return .failure(error)
            }
        }
        var shards: [ShardBundle] = []
        for result in read {
            switch result {
            case .success(let shard): shards.append(shard)
            case .failure(let error): throw error
            }
        }
        let problems = ShardSet.problems(shards)
        guard problems.isEmpty else { throw .refused(problems) }
        let damaged = shards.map(\.digest).filter(\.isDamaged)
        guard damaged.isEmpty else {
            throw .damaged(
                lines: damaged.flatMap(\.damage), badItems: damaged.reduce(0) { $0 + $1.badItems.count },
                unexpectedFiles: damaged.reduce(0) { $0 + $1.unexpected.count })
        }

        let order = try MergedOutput.order(shards)
        state.withLock {
            $0.records = order.count
            $0.readSeconds = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9
        }
        var summary = try MergedOutput(layout: layout, shards: shards, joined: joined).write(order)
        for spool in itemSpools { unlink(spool) }
        let reference = shards[0]
        do {
            try RunOptions(catalog: reference.catalog.source, field: reference.field, records: summary.done + summary.failed).write(layout)
        } catch {
            throw .fileSystem(error)
        }
        BundleStamp(catalogSHA256: reference.catalog.sha256, field: reference.field, layout: layout)?.write(layout)
        summary.shards = shards.count
        summary.tarballs = shards.count { $0.isTarball }
        return summary
    }
}
