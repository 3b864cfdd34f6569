#if canImport(Glibc)
import Glibc
#endif

/// The process's open-file limit (`RLIMIT_NOFILE`), raised for a run before it starts, and the
/// connection pool sized to fit in it.
///
/// libcurl holds one descriptor per connection. A run needs one per request in flight, and the
/// pool keeps idle connections to every host beside them (4 x concurrency in all, as curl's own
/// multi handle does), so a host whose share of the requests dips keeps its connections. Many
/// machines default to a soft limit of 1024; raising it up to the hard limit needs no privilege.
/// A run that cannot have even one descriptor per request is refused at start (exit 2) rather
/// than failing items one by one with "too many open files".
public enum OpenFileLimit {
    /// The hard limit leaves fewer descriptors than a run at `concurrency` needs.
    public struct TooLow: Error, Sendable, Equatable, CustomStringConvertible {
        var concurrency: Int
        var needed: Int
        var hard: Int

        public var description: String {
            "--concurrency \(concurrency) needs at least \(needed) open files, but the hard limit is \(hard) (ulimit -Hn); "
                + "lower --concurrency or raise the limit"
        }
    }

    /// Descriptors besides connections: image files, the journal, the lock, the catalog, the
    /// manifest and page, libcurl's own.
    static let reserve = 64

    /// Raises the soft limit towards what a run at `concurrency` can use (at most the hard
    /// limit); throws when even one connection per request in flight would not fit.
    public static func raise(for concurrency: Int) throws(TooLow) {
        var limit = rlimit()
        guard getrlimit(resource, &limit) == 0, limit.rlim_cur != unlimited else { return }
        let wanted = rlim_t(4 * concurrency + reserve)
        if limit.rlim_cur < wanted {
            limit.rlim_cur = limit.rlim_max == unlimited ? wanted : min(wanted, limit.rlim_max)
            _ = setrlimit(resource, &limit)
            _ = getrlimit(resource, &limit)
        }
        let needed = concurrency + reserve
        if limit.rlim_cur < rlim_t(needed) {
            throw TooLow(concurrency: concurrency, needed: needed, hard: Int(clamping: limit.rlim_max))
        }
    }

    /// Connections the pool may keep at `concurrency` within the soft limit now: 4 x concurrency
    /// when it fits, never fewer than `concurrency`.
    static func pool(for concurrency: Int) -> Int {
        var limit = rlimit()
        let wanted = 4 * concurrency
        guard getrlimit(resource, &limit) == 0, limit.rlim_cur != unlimited else { return wanted }
        return max(concurrency, min(wanted, Int(clamping: limit.rlim_cur) - reserve))
    }

    /// `RLIM_INFINITY`, which Swift cannot import (it is `-1` cast to an unsigned type).
    private static let unlimited = rlim_t.max

    /// Glibc imports `RLIMIT_NOFILE` as an enum case that `getrlimit` does not take directly.
    private static var resource: __rlimit_resource_t {
        __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    }
}
