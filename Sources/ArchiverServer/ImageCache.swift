import Foundation

/// The most recently used images, within a count and a byte budget: an insert past either
/// evicts the least recently used first. Not thread-safe; `PlaceholderImages` holds it in a lock.
///
/// A doubly linked list over slots of an array gives O(1) look-up, use and eviction.
struct ImageCache<Key: Hashable & Sendable>: Sendable {
    private struct Slot {
        var key: Key
        var data: Data
        var newer: Int?
        var older: Int?
    }

    let maxCount: Int
    let maxBytes: Int
    private var slots: [Slot] = []
    private var free: [Int] = []
    private var index: [Key: Int] = [:]
    private var newest: Int?
    private var oldest: Int?
    private(set) var bytes = 0

    init(maxCount: Int, maxBytes: Int) {
        self.maxCount = max(1, maxCount)
        self.maxBytes = max(0, maxBytes)
    }

    var count: Int { index.count }

    /// The image for `key`, now the most recently used; nil when it is not kept.
    mutating func value(for key: Key) -> Data? {
        guard let slot = index[key] else { return nil }
        unlink(slot)
        pushNewest(slot)
        return slots[slot].data
    }

    /// Keeps `data` for `key` unless an image is already kept for it; returns the kept one.
    /// An image larger than the whole byte budget is returned but not kept.
    mutating func insert(_ data: Data, for key: Key) -> Data {
        if let existing = value(for: key) { return existing }
        guard data.count <= maxBytes else { return data }
        while let victim = oldest, count >= maxCount || bytes + data.count > maxBytes {
            unlink(victim)
            index[slots[victim].key] = nil
            bytes -= slots[victim].data.count
            slots[victim].data = Data()
            free.append(victim)
        }
        let slot: Int
        if let reused = free.popLast() {
            slot = reused
            slots[slot] = Slot(key: key, data: data)
        } else {
            slot = slots.count
            slots.append(Slot(key: key, data: data))
        }
        index[key] = slot
        bytes += data.count
        pushNewest(slot)
        return data
    }

    private mutating func unlink(_ slot: Int) {
        let (newer, older) = (slots[slot].newer, slots[slot].older)
        if let newer { slots[newer].older = older } else { newest = older }
        if let older { slots[older].newer = newer } else { oldest = newer }
        slots[slot].newer = nil
        slots[slot].older = nil
    }

    private mutating func pushNewest(_ slot: Int) {
        slots[slot].older = newest
        slots[slot].newer = nil
        if let newest { slots[newest].newer = slot }
        newest = slot
        if oldest == nil { oldest = slot }
    }
}
