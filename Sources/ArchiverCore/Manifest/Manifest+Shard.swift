extension Manifest {
    /// What a shard's manifest says of its shard, inside `catalog`: `records` of the catalog's
    /// records are in shard `index` of `count`.
    struct ShardInfo: Sendable, Codable, Equatable {
        var count: Int
        var index: Int
        var records: Int

        init(shard: Shard, records: Int) {
            count = shard.count
            index = shard.index
            self.records = records
        }

        /// The shard, if the numbers make one.
        var shard: Shard? { Shard(index: index, count: count) }
    }
}
