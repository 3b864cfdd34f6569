/// What `merge` keeps of one shard's manifest as its items stream by, instead of the items: the
/// counts `ShardSet` checks, each done item against the file copied for it, the tally, and each
/// item's id and album (the gallery's pages need them ahead of the items).
///
/// It holds a few dozen bytes per record (an id, an album, and until its item comes, a copied
/// file's size and digest), so a merge's memory no longer holds every shard's items at once.
struct ShardDigest {
    /// `shard 2/4 (PATH)`, or the path, for messages.
    let name: String
    let shard: Shard?
    /// Files copied from `images/`, by name, until their item takes them: an array in name
    /// order (a directory's names are listed sorted, and `pack` writes a tarball's so), 64 bytes
    /// a file, where a hash table of them took twice that with room to grow.
    struct Copies {
        private struct Entry {
            var name: String
            var copied: ImageCopier.Copied
            var taken = false
        }

        private var entries: [Entry] = []
        private var last: String?
        /// Every name added, kept only once one came out of order (a tarball not made by
        /// `pack`), to find a repeated name without searching the array.
        private var seen: Set<String>?
        /// Files that could not be copied, and why: few.
        private var failed: [String: ItemError] = [:]

        mutating func add(_ name: String, _ result: Result<ImageCopier.Copied, ItemError>) {
            if seen == nil, let last, !last.utf8.lexicographicallyPrecedes(name.utf8) {
                seen = Set(entries.map(\.name)).union(failed.keys)
            }
            seen?.insert(name)
            last = name
            switch result {
            case .success(let copy): entries.append(Entry(name: name, copied: copy))
            case .failure(let error): failed[name] = error
            }
        }

        func contains(_ name: String) -> Bool {
            if let seen { return seen.contains(name) }
            guard let last, !last.utf8.lexicographicallyPrecedes(name.utf8) else { return false }
            return index(of: name) != nil || failed[name] != nil
        }

        mutating func take(_ name: String) -> Result<ImageCopier.Copied, ItemError>? {
            if seen != nil {
                entries.sort { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
                seen = nil
                last = entries.last?.name
            }
            if let index = index(of: name) {
                guard !entries[index].taken else { return nil }
                entries[index].taken = true
                return .success(entries[index].copied)
            }
            return failed.removeValue(forKey: name).map { .failure($0) }
        }

        /// Each name not taken, without building a list of them (a directory may hold millions
        /// no item lists): the copied ones as kept, then those that failed, in byte order.
        func forEachUntaken(_ body: (String) -> Void) {
            for entry in entries where !entry.taken { body(entry.name) }
            for name in failed.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) { body(name) }
        }

        /// Where `name` is in `entries` (in name order), by its bytes.
        private func index(of name: String) -> Int? {
            var (low, high) = (0, entries.count)
            while low < high {
                let middle = (low + high) / 2
                if entries[middle].name.utf8.lexicographicallyPrecedes(name.utf8) { low = middle + 1 } else { high = middle }
            }
            return low < entries.count && entries[low].name.hasSameBytes(as: name) ? low : nil
        }
    }

    var copies: Copies
    var items = 0
    var pending = 0
    var done = 0
    var failed = 0
    var bytes: Int64 = 0
    var failuresByKind: [String: Int] = [:]
    /// Items whose path is not their id's own file name, and items of other shards: how many,
    /// and the first few.
    var misplaced = Sample(keeping: named)
    var strangers = Sample(keeping: named)
    /// The first item that does not come after the one before it in id order.
    var outOfOrder: String?
    /// How many of each kind (bad items, unexpected files, misplaced items, items of other
    /// shards) `merge` names for a shard; the rest are counted (`verify` of the shard names up
    /// to `VerificationReport.maxNamed` bad items and unexpected files).
    static let named = 5
    /// Done items whose file is missing or not what the manifest says: the count and a line
    /// for each of the first few (a manifest may list a million).
    var badItems = Sample(keeping: named)
    /// Paths in `images/` that no done item takes (a tarball's entries that are not files merge
    /// can copy, files no item lists), each clipped: the count and the first few.
    var unexpected = Sample(keeping: named)
    var ids = IDList()
    var albums: [Int] = []

    init(name: String, shard: Shard?, copies: Copies) {
        self.name = name
        self.shard = shard
        self.copies = copies
    }

    /// Takes the next item of the manifest.
    mutating func add(_ item: Manifest.Item) {
        if outOfOrder == nil, let last = ids.last, !(last < item.id) {
            outOfOrder = "\(name) lists its items out of id order (\(item.id) after \(last)); merge reads each shard's manifest in id order, as archiver writes it"
        }
        ids.append(item.id)
        albums.append(item.albumId)
        items += 1
        switch item.status {
        case .pending: pending += 1
        case .failed:
            failed += 1
            failuresByKind[item.error?.kind ?? "unknown", default: 0] += 1
        case .done:
            done += 1
            // Only a size some run could have kept is added (`check` makes any other damage),
            // and clamped: a hostile manifest's sizes must not overflow the sum.
            if let size = item.bytes, Self.sizes.contains(size) { bytes.saturatingAdd(size) }
            check(item)
        }
        if let shard, !shard.contains(url: item.url) {
            strangers.add(item.id.description)
        }
    }

    /// The sizes a done item can have: no run keeps a file over `--max-bytes`, at most 2^40.
    static let sizes: ClosedRange<Int64> = 0...RunConfiguration.largestMaxBytes

    /// A done item's file against what was copied for it (size and sha256).
    private mutating func check(_ item: Manifest.Item) {
        // A done item's file is copied by the manifest's path: one that is not the id's own
        // name (another id's, `images/zzz.png`) would leave the merged item without its file.
        if let path = item.path, !Manifest.isOwnPath(path, for: item.id) {
            misplaced.add("\(item.id): \(path.clipped)")
            return
        }
        let path = item.path ?? KeyedStore.relativePath(for: item.id, format: item.format ?? .png) ?? "images/"
        let prefix = BundleLayout.imagesPath + "/"
        let file = path.hasPrefix(prefix) ? String(path.dropFirst(prefix.count)) : path
        // The manifest's path is outside input: up to 8 MiB.
        switch copies.take(file) {
        case nil: badItems.add("\(name): \(item.id): missing (\(path.clipped))")
        case .failure(let error)?: badItems.add("\(name): \(item.id): \(error.description) (\(path.clipped))")
        case .success(let copied)?:
            if let bytes = item.bytes, !Self.sizes.contains(bytes) {
                let most = Self.sizes.upperBound
                badItems.add("\(name): \(item.id): impossible size: manifest says \(bytes) bytes, where a done file has 0 to \(most) (\(path.clipped))")
            } else if let bytes = item.bytes, bytes != copied.bytes {
                badItems.add("\(name): \(item.id): size mismatch: \(copied.bytes) bytes, manifest says \(bytes) (\(path.clipped))")
            } else if let sha256 = item.sha256, SHA256Digest(hex: sha256) != copied.sha256 {
                badItems.add("\(name): \(item.id): sha256 mismatch (\(path.clipped))")
            }
        }
    }

    /// After the last item: files no done item lists are damage too, counted after
    /// `unexpected`, the tarball's entries that were not copied.
    mutating func finish(unexpected entries: Sample) {
        let prefix = BundleLayout.imagesPath + "/"
        unexpected = entries
        copies.forEachUntaken { name in unexpected.add((prefix + name).clipped) }
        copies = Copies()
    }

    /// Whether any done item is bad or any file unexpected.
    var isDamaged: Bool { badItems.count > 0 || unexpected.count > 0 }

    /// The lines `merge` prints for this shard: one for each bad item and unexpected file kept,
    /// in byte order, and one that counts those not named.
    var damage: [String] {
        var lines = badItems.first + unexpected.first.map { "\(name): unexpected file \($0)" }
        lines.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        var more: [String] = []
        if badItems.unnamed > 0 { more.append("\(badItems.unnamed) more bad item\(badItems.unnamed == 1 ? "" : "s")") }
        if unexpected.unnamed > 0 { more.append("\(unexpected.unnamed) more unexpected file\(unexpected.unnamed == 1 ? "" : "s")") }
        if !more.isEmpty {
            lines.append("\(name): and \(more.joined(separator: " and ")), not named here; 'archiver verify' of this shard names up to \(VerificationReport.maxNamed) of each")
        }
        return lines
    }
}
