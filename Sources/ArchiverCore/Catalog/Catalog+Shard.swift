extension Catalog {
    /// What makes a catalog a shard's view of a whole one.
    struct Sharding: Sendable, Equatable {
        var shard: Shard
        /// Records in the whole catalog.
        var catalogRecords: Int
    }

    init(source: String, sha256: String, records: CatalogRecords, sharding: Sharding?) {
        self.source = source
        self.sha256 = sha256
        self.records = records
        self.sharding = sharding
    }

    /// The records of `shard` (by their `field` URL) as a catalog of their own, read back from
    /// the same file: every stage of a run (plan, ledger, manifest, page, journal, `--prune`)
    /// sees only them. Its manifest names the whole catalog and the shard.
    func shard(_ shard: Shard, field: ImageField) -> Catalog {
        var reader = CatalogReader(records)
        var positions: [Int] = []
        for position in records.indices
        where shard.contains(url: reader.record(position, fields: .image(field)).url(for: field)) {
            positions.append(position)
        }
        return Catalog(
            source: source, sha256: sha256, records: records.subset(positions),
            sharding: Sharding(shard: shard, catalogRecords: records.count))
    }
}

extension CatalogRecords {
    /// The records at `positions` (ascending), over the same storage.
    func subset(_ positions: [Int]) -> CatalogRecords {
        CatalogRecords(
            storage: storage, entries: positions.map { entries[$0] }, arena: arena, end: end,
            ends: positions.map(endOffset(at:)))
    }
}
