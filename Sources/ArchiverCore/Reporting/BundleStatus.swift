import Foundation

/// What a bundle directory holds now, read from its journal without touching the network:
/// `archiver status`.
package struct BundleStatus: Sendable, Codable, Equatable {
    /// The failures of one error kind.
    struct FailureGroup: Sendable, Codable, Equatable {
        var kind: String
        var count: Int
        /// A few failed items: id and message.
        var examples: [Example]
    }

    /// One failed item, as an example of its kind.
    struct Example: Sendable, Codable, Equatable {
        var id: RecordID
        var message: String
    }

    var directory: String
    /// The bundle's records: its manifest's items (before the first manifest, the count the run
    /// recorded in its options).
    var records: Int
    var done: Int
    var failed: Int
    var pending: Int
    var bytesOnDisk: Int64
    var failures: [FailureGroup]
    var running: Bool
    var runningPID: Int?

    /// Reads the status of `directory`; nil when it holds no archiver bundle.
    ///
    /// Only the records of the bundle's catalog count: the ids of its `manifest.json` (written
    /// by every run that ends, interrupted or not). A journal also keeps lines of records that
    /// have left the catalog until a run completes; those are not the bundle's. Without a
    /// readable manifest (a first run still under way, or killed) every journal id counts.
    ///
    /// Failed records are decoded one at a time, keeping per kind a count and the examples with
    /// the lowest ids, so memory does not follow the number of failures or their ids' length.
    package static func read(directory: URL, examplesPerKind: Int = 3) -> BundleStatus? {
        let layout = BundleLayout(root: directory)
        guard FileManager.default.fileExists(atPath: layout.state.path) else { return nil }
        let journal = JournalIndex(path: layout.journal.path)
        let listed = manifestIDs(layout)
        let total = listed?.count ?? RunOptions.read(layout)?.records ?? journal.count
        var done = 0, failed = 0
        var groups: [String: FailureGroup] = [:]
        journal.forEachLatest { id, status, record in
            guard listed?.contains(id) ?? true else { return }
            if status == .done { done += 1 }
            guard status == .failed, let record = record() else { return }
            failed += 1
            let kind = record.error?.kind ?? "unknown"
            var group = groups[kind] ?? FailureGroup(kind: kind, count: 0, examples: [])
            group.count += 1
            let example = Example(id: record.id, message: record.error?.message ?? "")
            let place = group.examples.firstIndex { example.id < $0.id } ?? group.examples.count
            if place < examplesPerKind {
                group.examples.insert(example, at: place)
                if group.examples.count > examplesPerKind { group.examples.removeLast() }
            }
            groups[kind] = group
        }
        let lock = BundleLock.isHeld(path: layout.lock.path)
        return BundleStatus(
            directory: directory.path, records: total, done: done, failed: failed,
            pending: max(0, total - done - failed),
            bytesOnDisk: OpenDirectory(path: layout.images.path)?.totalBytes() ?? 0,
            failures: groups.values.sorted { ($0.count, $1.kind) > ($1.count, $0.kind) },
            running: lock.held, runningPID: lock.pid)
    }

    /// Why `status` must not read `directory`: its journal, lock or a directory of the bundle is
    /// a link, a FIFO or another special file (which could block a read forever); nil when none is.
    package static func refusal(directory: URL) -> String? {
        BundleLayout(root: directory).unsafePlace().map {
            RunError.unsafeBundle(path: $0.path, found: $0.found, expected: $0.expected).description
        }
    }

    /// The ids of the bundle's manifest, read as a stream; nil when it has none that reads.
    private static func manifestIDs(_ layout: BundleLayout) -> IDSet? {
        guard case .regular = BundleLayout.fileKind(atPath: layout.manifest.path) else { return nil }
        var ids = IDSet()
        do {
            try layout.readManifest { ids.insert($0.id) }
        } catch {
            return nil
        }
        return ids
    }

    /// A set of ids in 8 bytes an id, however long: an integer as it is, a string by its hash
    /// (seeded afresh by each process, so no catalog can make two collide on purpose).
    private struct IDSet {
        private var integers = Set<Int>()
        private var strings = Set<Int>()
        private(set) var count = 0

        mutating func insert(_ id: RecordID) {
            count += 1
            if let integer = id.integer { integers.insert(integer) } else { strings.insert(id.hashValue) }
        }

        func contains(_ id: RecordID) -> Bool {
            if let integer = id.integer { return integers.contains(integer) }
            return strings.contains(id.hashValue)
        }
    }

    /// The human-readable report.
    package var text: String {
        var lines = [
            "\(directory): \(done) done, \(failed) failed, \(pending) pending of \(records)",
            "\(ByteCount.format(bytesOnDisk)) in images/",
            running ? "a run holds this directory now" + (runningPID.map { " (pid \($0))" } ?? "") : "no run in progress",
        ]
        for group in failures {
            lines.append("failed \(group.kind): \(group.count)")
            for example in group.examples { lines.append("  \(example.id): \(example.message)") }
        }
        lines += Self.rerunHelp
        return lines.joined(separator: "\n")
    }

    /// The three ways to run again over a bundle, as `status` prints them.
    static let rerunHelp = [
        "to run again over it (same --catalog, --field, --shard):",
        "  archiver run             trusts what is done (no request for it), fetches the rest",
        "  archiver run --refresh   asks the server about every done image (If-None-Match /",
        "                           If-Modified-Since): 304s keep their files, changed images are replaced",
        "  a bundle unpacked from its pack tarball (no .archiver/) is adopted by either: each file that",
        "  has its manifest size and sha256 counts as done without a request, the rest is fetched",
    ]
}

/// Human-readable byte counts (decimal units, as the closing line prints them).
enum ByteCount {
    /// `bytes` as B, kB, MB or GB with one decimal.
    static func format(_ bytes: Int64) -> String {
        let value = Double(bytes)
        if value >= 1e9 { return String(format: "%.1f GB", value / 1e9) }
        if value >= 1e6 { return String(format: "%.1f MB", value / 1e6) }
        if value >= 1e3 { return String(format: "%.1f kB", value / 1e3) }
        return "\(bytes) B"
    }
}
