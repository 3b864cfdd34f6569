/// The plan's jobs, read ahead a bounded amount and grouped by the host they are fetched from,
/// and the operations each host has queued or running.
///
/// The feed makes every operation from one host's jobs. An operation that finishes is replaced
/// by one for the same host when that host has work, so each host keeps the share of the
/// queue's slots it started with and its connections stay busy instead of idling while another
/// host opens new ones; otherwise hosts take turns. With `perHost` set, a host never has more
/// than that many operations, and so never more requests in flight, while hosts with room keep
/// getting work: a slow host holds up only its own lane.
struct HostLanes {
    private struct Lane {
        var jobs: [FetchJob] = []
        /// Jobs before `head` are taken: removing from the front of an array is linear.
        var head = 0
        var operations = 0
        /// Whether the host is in `turns` now.
        var inTurns = false

        var waiting: Int { jobs.count - head }
    }

    /// Most operations one host may have; nil for no limit of its own.
    let perHost: Int?
    /// Most jobs read ahead and not yet in an operation, over all hosts.
    let readAheadLimit: Int
    private var lanes: [String: Lane] = [:]
    /// Hosts with waiting jobs and room, in the order they take turns (may hold stale entries).
    private var turns: [String] = []
    private var turnsHead = 0
    /// Jobs read ahead and not yet taken.
    private(set) var buffered = 0

    init(perHost: Int?, readAheadLimit: Int) {
        self.perHost = perHost
        self.readAheadLimit = max(1, readAheadLimit)
    }

    /// Whether another job may be read ahead.
    var canReadAhead: Bool { buffered < readAheadLimit }

    /// Whether `host` has waiting jobs and room for another operation.
    func hasWork(for host: String) -> Bool {
        guard let lane = lanes[host] else { return false }
        return lane.waiting > 0 && hasRoom(lane)
    }

    /// Whether `host` has room for another operation and at least `count` jobs waiting for it.
    func canFill(_ host: String, with count: Int) -> Bool {
        guard let lane = lanes[host] else { return false }
        return lane.waiting >= count && hasRoom(lane)
    }

    /// Files a job read from the plan under its host, and returns the host.
    @discardableResult
    mutating func add(_ job: FetchJob) -> String {
        let host = Self.host(of: job.address)
        lanes[host, default: Lane()].jobs.append(job)
        buffered += 1
        enqueueTurn(host)
        return host
    }

    /// Up to `count` jobs of one host for a new operation: `preferred`'s if it has work, else
    /// the next host's in turn that has. The host's operation count goes up by one.
    mutating func take(upTo count: Int, preferring preferred: String?) -> (host: String, jobs: [FetchJob])? {
        var host: String
        if let preferred, hasWork(for: preferred) {
            host = preferred
        } else {
            while true {
                guard turnsHead < turns.count else {
                    turns.removeAll(keepingCapacity: true)
                    turnsHead = 0
                    return nil
                }
                host = turns[turnsHead]
                turnsHead += 1
                lanes[host]?.inTurns = false
                if hasWork(for: host) { break }
            }
        }
        var lane = lanes.removeValue(forKey: host)!
        let end = lane.head + min(count, lane.waiting)
        let jobs = Array(lane.jobs[lane.head..<end])
        lane.head = end
        if lane.head == lane.jobs.count {
            lane.jobs.removeAll(keepingCapacity: lane.jobs.capacity <= 64)
            lane.head = 0
        } else if lane.head >= 1024, lane.head * 2 >= lane.jobs.count {
            lane.jobs.removeFirst(lane.head)
            lane.head = 0
        }
        lane.operations += 1
        buffered -= jobs.count
        lanes[host] = lane
        enqueueTurn(host)
        compactTurns()
        return (host, jobs)
    }

    /// An operation of `host` finished.
    mutating func finished(_ host: String) {
        lanes[host]?.operations -= 1
        if let lane = lanes[host], lane.operations == 0, lane.waiting == 0 {
            lanes[host] = nil
        } else {
            enqueueTurn(host)
        }
    }

    private func hasRoom(_ lane: Lane) -> Bool {
        perHost.map { lane.operations < $0 } ?? true
    }

    private mutating func enqueueTurn(_ host: String) {
        guard let lane = lanes[host], !lane.inTurns, lane.waiting > 0, hasRoom(lane) else { return }
        lanes[host]!.inTurns = true
        turns.append(host)
    }

    private mutating func compactTurns() {
        if turnsHead >= 1024, turnsHead * 2 >= turns.count {
            turns.removeFirst(turnsHead)
            turnsHead = 0
        }
    }

    /// The scheme, host and port of an absolute URL, lowercased: what a connection is kept for.
    static func host(of address: String) -> String {
        var address = address
        return address.withUTF8 { bytes in
            var start = 0
            while start + 2 < bytes.count, !(bytes[start] == 0x3A && bytes[start + 1] == 0x2F && bytes[start + 2] == 0x2F) {
                start += 1
            }
            var end = start + 3
            while end < bytes.count, bytes[end] != 0x2F, bytes[end] != 0x3F, bytes[end] != 0x23 { end += 1 }
            let prefix = UnsafeBufferPointer(rebasing: bytes[0..<min(end, bytes.count)])
            return String(decoding: prefix.lazy.map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }, as: UTF8.self)
        }
    }
}
