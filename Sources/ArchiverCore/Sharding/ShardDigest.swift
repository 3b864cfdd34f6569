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
    /// Files copied from `images/`, by name, until their item takes them.
    struct Copies {
        var copied: [String: ImageCopier.Copied] = [:]
        /// Files that could not be copied, and why: few.
        var failed: [String: ItemError] = [:]

        mutating func add(_ name: String, _ result: Result<ImageCopier.Copied, ItemError>) {
            switch result {
            case .success(let copy): copied[name] = copy
            case .failure(let error): failed[name] = error
            }
        }

        func contains(_ name: String) -> Bool {
            copied[name] != nil || failed[name] != nil
        }

        mutating func take(_ name: String) -> Result<ImageCopier.Copied, ItemError>? {
            if let copy = copied.removeValue(forKey: name) { return .success(copy) }
            return failed.removeValue(forKey: name).map { .failure($0) }
        }

        var names: [String] { Array(copied.keys) + Array(failed.keys) }
    }

    var copies: Copies
    var items = 0
    var pending = 0
    var done = 0
    var failed = 0
    var bytes: Int64 = 0
    var failuresByKind: [String: Int] = [:]
    var misplaced: (count: Int, examples: [String]) = (0, [])
    var strangers: (count: Int, examples: [String]) = (0, [])
    /// The first item that does not come after the one before it in id order.
    var outOfOrder: String?
    /// A line per bad item or file.
    var damage: [String] = []
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
            bytes += item.bytes ?? 0
            check(item)
        }
        if let shard, !shard.contains(url: item.url) {
            strangers.count += 1
            if strangers.examples.count < 5 { strangers.examples.append(item.id.description) }
        }
    }

    /// A done item's file against what was copied for it (size and sha256).
    private mutating func check(_ item: Manifest.Item) {
        // A done item's file is copied by the manifest's path: one that is not the id's own
        // name (another id's, `images/zzz.png`) would leave the merged item without its file.
        if let path = item.path, !Manifest.isOwnPath(path, for: item.id) {
            misplaced.count += 1
            if misplaced.examples.count < 5 { misplaced.examples.append("\(item.id): \(path)") }
            return
        }
        let path = item.path ?? KeyedStore.relativePath(for: item.id, format: item.format ?? .png) ?? "images/"
        let prefix = BundleLayout.imagesPath + "/"
        let file = path.hasPrefix(prefix) ? String(path.dropFirst(prefix.count)) : path
        switch copies.take(file) {
        case nil: damage.append("\(name): \(item.id): missing (\(path))")
        case .failure(let error)?: damage.append("\(name): \(item.id): \(error.description) (\(path))")
        case .success(let copied)?:
            if let bytes = item.bytes, bytes != copied.bytes {
                damage.append("\(name): \(item.id): size mismatch: \(copied.bytes) bytes, manifest says \(bytes) (\(path))")
            } else if let sha256 = item.sha256, ImageCopier.Digest(hex: sha256) != copied.sha256 {
                damage.append("\(name): \(item.id): sha256 mismatch (\(path))")
            }
        }
    }

    /// After the last item: files no done item lists are damage too.
    mutating func finish(unexpected: [String]) {
        let prefix = BundleLayout.imagesPath + "/"
        for entry in unexpected + copies.names.map({ prefix + $0 }) {
            damage.append("\(name): unexpected file \(entry)")
        }
        copies = Copies()
        damage.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }
}
