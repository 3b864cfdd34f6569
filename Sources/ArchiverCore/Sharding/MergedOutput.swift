#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Writes the merged `manifest.json`, gallery and journal in one pass over the shards' items,
/// joined in id order: each shard's items come back from its `ItemSpool`, and the ids (merged
/// first, from the digests) say which shard holds the next one. The item bytes are the shards'
/// own items written by the run's encoder (`ManifestEncoding`) and gallery writer
/// (`GalleryWriter`), so they are the bytes one run of the whole catalog writes.
struct MergedOutput {
    let layout: BundleLayout
    let shards: [ShardBundle]

    /// Records joined so far, for progress.
    let joined: Locked<Int>

    /// Where each item of the merged manifest is, in id order: its shard, and its place in that
    /// shard's digest. Eight bytes a record: the ids and albums stay in the digests, not copied.
    /// The shard is a UInt32, not a UInt16: `Shard.maxCount` allows 100,000 shards, and a 16-bit
    /// index trapped at the 65,537th (2 bytes more a record: 2 MB for a million records).
    struct Order {
        var shard: [UInt32] = []
        var position: [UInt32] = []

        var count: Int { shard.count }
    }

    /// The shards' items in id order; an id in two shards is refused.
    ///
    /// The shards whose items are not all taken sit in a binary heap by their next id (then by
    /// shard), so an item costs a few comparisons however many shards there are: looking at every
    /// shard for every item cost 10^11 comparisons for a million records in 100,000 shards.
    static func order(_ shards: [ShardBundle]) throws(MergeError) -> Order {
        let total = shards.reduce(0) { $0 + $1.digest.ids.count }
        var order = Order()
        order.shard.reserveCapacity(total)
        order.position.reserveCapacity(total)
        var heads = [Int](repeating: 0, count: shards.count)
        func precedes(_ a: Int, _ b: Int) -> Bool {
            let x = shards[a].digest.ids[heads[a]], y = shards[b].digest.ids[heads[b]]
            return x < y || (x == y && a < b)
        }
        var heap = shards.indices.filter { shards[$0].digest.ids.count > 0 }
        func siftDown(_ start: Int) {
            var parent = start
            while true {
                var least = parent
                let left = 2 * parent + 1, right = left + 1
                if left < heap.count, precedes(heap[left], heap[least]) { least = left }
                if right < heap.count, precedes(heap[right], heap[least]) { least = right }
                if least == parent { return }
                heap.swapAt(parent, least)
                parent = least
            }
        }
        for index in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(index) }
        var last: RecordID?
        while let best = heap.first {
            let id = shards[best].digest.ids[heads[best]]
            if let last, last == id {
                let other = shards[Int(order.shard[order.count - 1])]
                throw .refused(["\(id) is in both \(other.name) and \(shards[best].name)"])
            }
            last = id
            order.shard.append(UInt32(best))
            order.position.append(UInt32(heads[best]))
            heads[best] += 1
            if heads[best] == shards[best].digest.ids.count {
                heap[0] = heap[heap.count - 1]
                heap.removeLast()
            }
            siftDown(0)
        }
        return order
    }

    /// Writes the three files; returns the tally.
    func write(_ order: Order) throws(MergeError) -> BundleMerger.Summary {
        let reference = shards[0]
        let count = order.count
        let shards = shards
        func id(_ index: Int) -> RecordID { shards[Int(order.shard[index])].digest.ids[Int(order.position[index])] }
        func album(_ index: Int) -> Int { shards[Int(order.shard[index])].digest.albums[Int(order.position[index])] }
        let catalog = Manifest.CatalogInfo(source: reference.catalog.source, sha256: reference.catalog.sha256, records: count)
        var summary = BundleMerger.Summary()
        do {
            let spools: [ItemSpool.Reader]
            do throws(BundleError) { spools = try shards.map { (shard) throws(BundleError) in try ItemSpool.Reader(path: shard.items) } } catch { throw .bundle(error) }
            let manifest = try Self.writing { () throws(FileSystemError) in try AtomicFileWriter(path: layout.manifest.path, sync: false) }
            defer { manifest.discard() }
            let journal = try Self.writing { () throws(FileSystemError) in try AtomicFileWriter(path: layout.journal.path, sync: false) }
            defer { journal.discard() }
            let gallery = try Self.writing { () throws(FileSystemError) in
                try GalleryWriter(
                    layout: layout, source: catalog.source, count: count, sync: false,
                    id: id, album: album)
            }
            var manifestBytes = ManifestEncoding.head(catalog: catalog, field: reference.field)
            var journalBytes: [UInt8] = []
            // What the gallery's summary pages make again at the end: failures and album covers.
            var kept: [Int: Manifest.Item] = [:]
            for index in 0..<count {
                let shard = Int(order.shard[index])
                let item: Manifest.Item?
                do throws(BundleError) { item = try spools[shard].next() } catch { throw .bundle(error) }
                guard let item, item.id == id(index) else { throw Self.changed(spools[shard].path) }
                ManifestEncoding.append(item, index: index, to: &manifestBytes)
                gallery.add(item)
                if item.status == .failed || gallery.covers.last?.cover == Int32(index) { kept[index] = item }
                if item.status != .pending { journalBytes += Array(JournalLine.encode(Self.record(item)).utf8) }
                switch item.status {
                case .done:
                    summary.done += 1
                    // Every done item's size is a copied file's here (`ShardDigest` made any
                    // other damage, and merge refused it); clamped all the same, as every sum of sizes.
                    summary.bytes.saturatingAdd(item.bytes ?? 0)
                case .failed:
                    summary.failed += 1
                    summary.failuresByKind[item.error?.kind ?? "unknown", default: 0] += 1
                case .pending: break
                }
                if manifestBytes.count >= 1 << 16 {
                    manifest.append(manifestBytes)
                    manifestBytes.removeAll(keepingCapacity: true)
                }
                if journalBytes.count >= 1 << 16 {
                    journal.append(journalBytes)
                    journalBytes.removeAll(keepingCapacity: true)
                }
                if index & 1023 == 1023 { joined.withLock { $0 = index + 1 } }
            }
            joined.withLock { $0 = count }
            for spool in spools {
                let more: Manifest.Item?
                do throws(BundleError) { more = try spool.next() } catch { throw .bundle(error) }
                if more != nil { throw Self.changed(spool.path) }
            }
            manifestBytes += ManifestEncoding.tail(version: Manifest.currentVersion, items: count)
            manifest.append(manifestBytes)
            journal.append(journalBytes)
            try Self.writing { () throws(FileSystemError) in
                try gallery.commit(counts: [.done: summary.done, .failed: summary.failed, .pending: 0], item: { kept[$0]! })
                try manifest.commit()
                try journal.commit()
            }
        }
        return summary
    }

    /// The journal's line for an item, as a completed run leaves it.
    static func record(_ item: Manifest.Item) -> ItemRecord {
        ItemRecord(
            id: item.id, url: item.url, source: item.source, status: item.status, bytes: item.bytes ?? 0,
            sha256: item.sha256.flatMap { SHA256Digest(hex: $0) }, width: item.width ?? 0, height: item.height ?? 0, attempts: item.attempts,
            error: item.error, validators: Validators(etag: item.etag, lastModified: item.lastModified),
            format: item.format ?? .png, frames: item.frames ?? 1)
    }

    /// `body`, its file-system failure made the merge's.
    private static func writing<T>(_ body: () throws(FileSystemError) -> T) throws(MergeError) -> T {
        do { return try body() } catch { throw .fileSystem(error) }
    }

    /// A shard's spool read back other items than were written to it.
    private static func changed(_ path: String) -> MergeError {
        .bundle(.unreadableFile(path: path, reason: "merge's spool of a shard's items does not hold the items it read"))
    }
}
