/// How many of something there are and the first few: what `merge` and `verify` keep of the
/// paths and problems outside input gives them (a tarball's entries, a directory's files, a
/// manifest's items). There may be millions, and a path libarchive reads may be 512 KiB and
/// more: keeping each (1,500 such entries took `merge` to 1.57 GB) is what a report must not do.
public struct Sample: Sendable, Equatable {
    /// How many `first` keeps.
    public let limit: Int
    /// How many were added.
    public private(set) var count = 0
    /// The first `limit` added, in the order they came.
    public private(set) var first: [String] = []

    init(keeping limit: Int) {
        self.limit = limit
    }

    /// A sample already taken: `count` in all, `first` the first of them (at most `limit`).
    init(keeping limit: Int, count: Int, first: [String]) {
        self.limit = limit
        self.count = count
        self.first = Array(first.prefix(limit))
    }

    /// How many were counted but not kept.
    public var unnamed: Int { count - first.count }

    /// Counts one, and keeps `text` (only built then) while fewer than `limit` are kept.
    mutating func add(_ text: @autoclosure () -> String) {
        count += 1
        if first.count < limit { first.append(text()) }
    }
}

extension String {
    /// The most bytes of a path from outside that a message or report keeps (the marker
    /// included): a name no file system holds (`NAME_MAX` is 255, `PATH_MAX` 4096) is still
    /// recognisable at 1 KiB, and a thousand of them stay near 1 MiB.
    static let maxShownBytes = 1024

    /// The string, or for one over `maxShownBytes` bytes its first whole characters' bytes and
    /// `…`, `maxShownBytes` in all; a clipped string is not clipped again.
    var clipped: String {
        guard utf8.count > Self.maxShownBytes else { return self }
        let marker = "…"
        return prefix(utf8Bytes: Self.maxShownBytes - marker.utf8.count) + marker
    }
}
