/// Ids in the order they were added: 8 bytes each while every one is an integer (as most
/// catalogs' are), a `RecordID` each (24 bytes) from the first string id on. `merge` keeps one
/// per shard until the merged bundle is written.
struct IDList {
    private var integers: [Int] = []
    private var ids: [RecordID]?

    var count: Int { ids?.count ?? integers.count }

    var last: RecordID? { count == 0 ? nil : self[count - 1] }

    subscript(index: Int) -> RecordID {
        if let ids { return ids[index] }
        return RecordID(integers[index])
    }

    mutating func append(_ id: RecordID) {
        if ids == nil {
            if let integer = id.integer {
                integers.append(integer)
                return
            }
            ids = integers.map { RecordID($0) }
            integers = []
        }
        ids!.append(id)
    }
}
