#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A manifest's items pulled one at a time: `ManifestReader` runs on a thread of its own and
/// hands items over in batches through a small bounded queue, so `merge` can join N shards in id
/// order holding a few batches of each, never a whole manifest.
final class ManifestStream: @unchecked Sendable {  // its state is only touched under `condition`
    private let condition = NSCondition()
    private var batches: [[Manifest.Item]] = []
    private var current: [Manifest.Item] = []
    private var position = 0
    private var finished: Result<String, BundleError>?
    private var cancelled = false
    private static let batch = 256
    private static let depth = 4

    /// Starts reading the manifest at `path` (errors name `source`).
    init(path: String, source: String) {
        let thread = Thread { [self] in
            let result = Result { () throws(BundleError) -> String in try read(path: path, source: source) }
            condition.withLock {
                finished = result
                condition.broadcast()
            }
        }
        thread.name = "archiver.merge-read"
        thread.start()
    }

    private func read(path: String, source: String) throws(BundleError) -> String {
        let fd = try ManifestReader.open(path, source: source)
        defer { fd.close() }
        let hasher = SHA256Hasher()
        var pending: [Manifest.Item] = []
        pending.reserveCapacity(Self.batch)
        _ = try ManifestReader.read(
            source: source,
            pull: { (buffer) throws(Errno) in
                let count = try fd.read(into: buffer)
                if count > 0 { hasher.update(UnsafeRawBufferPointer(rebasing: buffer[..<count])) }
                return count
            },
            item: { (item) throws(BundleError) in
                pending.append(item)
                if pending.count == Self.batch {
                    try hand(pending)
                    pending.removeAll(keepingCapacity: true)
                }
            })
        try hand(pending)
        return hasher.finish()
    }

    /// Waits for room in the queue, then queues `items`.
    private func hand(_ items: [Manifest.Item]) throws(BundleError) {
        guard !items.isEmpty else { return }
        condition.lock()
        defer { condition.unlock() }
        while batches.count >= Self.depth, !cancelled { condition.wait() }
        if cancelled { throw .unreadableManifest(path: "", reason: "merge stopped reading") }
        batches.append(items)
        condition.broadcast()
    }

    /// The next item, nil after the last.
    func next() throws(BundleError) -> Manifest.Item? {
        if position < current.count {
            defer { position += 1 }
            return current[position]
        }
        condition.lock()
        while batches.isEmpty, finished == nil { condition.wait() }
        if batches.isEmpty {
            let result = finished!
            condition.unlock()
            if case .failure(let error) = result { throw error }
            return nil
        }
        current = batches.removeFirst()
        condition.broadcast()
        condition.unlock()
        position = 1
        return current[0]
    }

    /// After the last item: the sha256 of the bytes read (waits for the thread to finish).
    func sha256() throws(BundleError) -> String {
        condition.lock()
        while finished == nil { condition.wait() }
        let result = finished!
        condition.unlock()
        return try result.get()
    }

    /// Stops the thread (an error elsewhere ended the merge) and waits for it to end.
    func cancel() {
        condition.lock()
        cancelled = true
        batches = []
        condition.broadcast()
        while finished == nil { condition.wait() }
        condition.unlock()
    }
}
