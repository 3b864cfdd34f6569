/// How many times each key was counted, kept for the `capacity` keys first counted most
/// recently: counting a new key past that forgets the oldest, so the table never holds more.
///
/// A value type with no lock (`FaultRoutes` holds one in a `Locked`); a forgotten key counts
/// from 1 again, as a new one does.
struct RecentCounts<Key: Hashable & Sendable>: Sendable {
    let capacity: Int
    private var counts: [Key: Int] = [:]
    /// The keys held, in the order they were first counted; once full, a ring whose next key to
    /// forget is at `oldest`.
    private var order: [Key] = []
    private var oldest = 0

    init(capacity: Int) {
        precondition(capacity > 0, "a table of counts holds at least one key")
        self.capacity = capacity
    }

    /// How many keys are held.
    var count: Int { counts.count }

    /// Counts `key` once more and returns its count: 1 for a key not held.
    mutating func increment(_ key: Key) -> Int {
        if let count = counts[key] {
            let next = count < Int.max ? count + 1 : count
            counts[key] = next
            return next
        }
        if order.count < capacity {
            order.append(key)
        } else {
            counts[order[oldest]] = nil
            order[oldest] = key
            oldest = (oldest + 1) % capacity
        }
        counts[key] = 1
        return 1
    }
}
