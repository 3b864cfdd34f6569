import Synchronization

/// Which hosts are down for the rest of a run: a host whose name did not resolve, or that
/// refused or failed every connection, on `threshold` distinct URLs in a row without ever
/// answering in this run.
///
/// A dead host used to cost every record its whole retry schedule (5000 records against a
/// host that no longer existed took 827 s). Once a host is down its remaining URLs fail at once
/// as `host-down`, without a request; a later run tries the host again. A host that has
/// answered once (any HTTP answer, a TLS error, a reset mid-body) is never marked down, so a
/// server restarting mid-run costs retries, not the rest of its items. A timeout neither counts
/// nor clears. A value type with no locks, tested alone; `HostWatch` shares it.
struct HostHealth {
    /// Distinct URLs that must fail to connect, with no answer from the host, before it is down.
    static let threshold = 4

    private struct Host {
        var answered = false
        /// Distinct URLs that failed to connect since the last answer (at most `threshold`).
        var failing: Set<String> = []
        /// Why the host is down; nil while it is not.
        var down: String?
    }

    private var hosts: [String: Host] = [:]

    /// Why `host` is down, or nil when it may be tried.
    func down(_ host: String) -> String? {
        hosts[host]?.down
    }

    /// `host` answered a request: it is never marked down in this run.
    mutating func answered(_ host: String) {
        guard hosts[host]?.answered != true else { return }
        hosts[host, default: Host()].answered = true
        hosts[host]!.failing = []
    }

    /// A request to `url` on `host` could not connect (`reason`, libcurl's words). Returns true
    /// when this failure is the one that marks the host down.
    mutating func unreachable(_ host: String, url: String, reason: String) -> Bool {
        var entry = hosts[host, default: Host()]
        guard !entry.answered, entry.down == nil else { return false }
        entry.failing.insert(url)
        let isDown = entry.failing.count >= Self.threshold
        if isDown {
            entry.down = reason
            entry.failing = []
        }
        hosts[host] = entry
        return isDown
    }
}

/// `HostHealth` shared by every fetch operation of a run, and the line that says, once per
/// host, that it is down.
final class HostWatch: Sendable {
    private let health = Locked(HostHealth())
    /// Whether any host is down: asked before every request, it spares the lock while none is.
    private let anyDown = Atomic<Bool>(false)
    private let say: @Sendable (String) -> Void

    /// `say` gets one line per host that goes down.
    init(say: @escaping @Sendable (String) -> Void = { _ in }) {
        self.say = say
    }

    func down(_ host: String) -> String? {
        guard anyDown.load(ordering: .acquiring) else { return nil }
        return health.withLock { $0.down(host) }
    }

    func answered(_ host: String) {
        health.withLock { $0.answered(host) }
    }

    /// Records a failure to connect; says so when it marks the host down. `mirrored` tells whether
    /// the URL is a `--mirror`'s rewrite (else the hint names `--mirror`).
    func unreachable(_ host: String, url: String, reason: String, mirrored: Bool) {
        guard health.withLock({ $0.unreachable(host, url: url, reason: reason) }) else { return }
        anyDown.store(true, ordering: .releasing)
        say(Self.line(host: host, reason: reason, mirrored: mirrored))
    }

    /// E.g. `host http://x.invalid is down: Could not resolve host: x.invalid (4 URLs failed,
    /// none answered); its remaining items fail as host-down without a request, and a rerun tries it
    /// again; if its images are elsewhere, --mirror http://x.invalid=URL fetches them from there`.
    static func line(host: String, reason: String, mirrored: Bool) -> String {
        "host \(host) is down: \(reason) (\(HostHealth.threshold) URLs failed, none answered); its remaining items"
            + " fail as host-down without a request, and a rerun tries it again"
            + (mirrored ? "" : "; if its images are elsewhere, --mirror \(host)=URL fetches them from there")
    }
}
