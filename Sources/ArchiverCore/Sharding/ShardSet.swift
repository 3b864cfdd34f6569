/// The checks that shard bundles are the complete set of one sharded run: one shard of each
/// index, all of one catalog and options, each finished and holding only its own records.
enum ShardSet {
    /// A line per problem (the `merge` refuses with exit 2 when there is any).
    static func problems(_ shards: [ShardBundle]) -> [String] {
        var problems: [String] = []
        var sharded: [(bundle: ShardBundle, shard: Shard, info: Manifest.ShardInfo)] = []
        for bundle in shards {
            guard let info = bundle.info else {
                problems.append("\(bundle.path) is not a shard: its manifest names no shard (made by 'archiver run' without --shard)")
                continue
            }
            guard let shard = info.shard else {
                problems.append("\(bundle.path) names shard \(info.index)/\(info.count), which cannot be")
                continue
            }
            sharded.append((bundle, shard, info))
        }
        guard let reference = sharded.first else { return problems }
        let catalog = reference.bundle.catalog
        func identity(_ info: Manifest.CatalogInfo) -> String {
            "catalog \(info.source) (sha256 \(info.sha256.prefix(12)), \(info.records) records)"
        }
        for other in sharded.dropFirst() {
            let manifest = other.bundle
            let (one, two) = (other.bundle.name, reference.bundle.name)
            if (manifest.catalog.source, manifest.catalog.sha256, manifest.catalog.records) != (catalog.source, catalog.sha256, catalog.records) {
                problems.append("\(one) is of \(identity(manifest.catalog)), \(two) of \(identity(catalog))")
            }
            if manifest.field != reference.bundle.field {
                problems.append("\(one) archived --field \(manifest.field.rawValue), \(two) --field \(reference.bundle.field.rawValue)")
            }
            if manifest.version != reference.bundle.version {
                problems.append("\(one) has a manifest of version \(manifest.version), \(two) of version \(reference.bundle.version)")
            }
            if other.shard.count != reference.shard.count {
                problems.append("\(one) is one of \(other.shard.count) shards, \(two) one of \(reference.shard.count)")
            }
        }
        let count = reference.shard.count
        let byIndex = Dictionary(grouping: sharded.filter { $0.shard.count == count }, by: \.shard.index)
        for index in byIndex.keys.sorted() where byIndex[index]!.count > 1 {
            let paths = byIndex[index]!.map(\.bundle.path)
            problems.append("shard \(index)/\(count) is given \(paths.count == 2 ? "twice" : "\(paths.count) times"): \(paths.joined(separator: " and "))")
        }
        for index in 1...count where byIndex[index] == nil {
            problems.append("shard \(index)/\(count) is missing")
        }
        for (bundle, _, info) in sharded {
            let digest = bundle.digest
            if let outOfOrder = digest.outOfOrder { problems.append(outOfOrder) }
            if digest.items != info.records {
                problems.append("\(bundle.name) lists \(digest.items) items, but says its shard has \(info.records)")
            }
            let pending = digest.pending
            if pending > 0 {
                problems.append("\(bundle.name) is unfinished: \(pending) item\(pending == 1 ? "" : "s") pending; run it again to finish it")
            }
            let misplaced = digest.misplaced
            if misplaced.count > 0 {
                let examples = misplaced.first.joined(separator: ", ")
                problems.append("\(bundle.name) has \(misplaced.count) item\(misplaced.count == 1 ? "" : "s") whose path is not the id's own file name (\(examples)\(misplaced.unnamed > 0 ? ", ..." : ""))")
            }
            let strangers = digest.strangers
            if strangers.count > 0 {
                let examples = strangers.first.joined(separator: ", ")
                problems.append("\(bundle.name) holds \(strangers.count) item\(strangers.count == 1 ? "" : "s") of other shards (\(examples)\(strangers.unnamed > 0 ? ", ..." : ""))")
            }
        }
        if problems.isEmpty {
            let total = sharded.reduce(0) { $0 + $1.bundle.digest.items }
            if total != catalog.records {
                problems.append("the shards hold \(total) records, their catalog \(catalog.records)")
            }
        }
        return problems
    }
}
