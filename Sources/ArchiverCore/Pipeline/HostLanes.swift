/// The plan's jobs, read ahead a bounded amount and grouped by the host they are fetched from,
/// and the operations each host has queued or running.
///
/// The feed makes every operation from one host's jobs, so an operation's requests go one
/// after another over one kept-alive connection. A free slot goes to the host whose next job
/// comes first in the plan: every host advances through the catalog at the same pace, as in a
/// feed in plain catalog order, so hosts keep equal shares of the slots and run out of work
/// together, instead of one host taking every slot (and opening a connection for each) at the
/// end. With `perHost` set, a host never has more than that many operations, and so never
/// more requests in flight, while hosts with room keep getting work: a slow host holds up only
/// its own lane (until the read-ahead is full of its jobs).
struct HostLanes {
    private struct Lane {
        /// Jobs and their places in the plan, in plan order.
        var jobs: [(index: Int, job: FetchJob)] = []
        /// Jobs before `head` are taken: removing from the front of an array is linear.
        var head = 0
        var operations = 0
        /// Whether the host is in `ready`.
        var isReady = false

        var waiting: Int { jobs.count - head }
    }

    /// Most operations one host may have; nil for no limit of its own.
    let perHost: Int?
    /// Most jobs read ahead and not yet in an operation, over all hosts.
    let readAheadLimit: Int
    private var lanes: [String: Lane] = [:]
    /// Hosts with waiting jobs and room for an operation, a min-heap by their next job's place.
    private var ready: [(index: Int, host: String)] = []
    /// Jobs read ahead and not yet taken.
    private(set) var buffered = 0

    init(perHost: Int?, readAheadLimit: Int) {
        self.perHost = perHost
        self.readAheadLimit = max(1, readAheadLimit)
    }

    /// Whether another job may be read ahead.
    var canReadAhead: Bool { buffered < readAheadLimit }

    /// The host the next operation goes to, and how many jobs it has waiting; nil when no host
    /// has both waiting jobs and room.
    var next: (host: String, waiting: Int)? {
        ready.first.map { ($0.host, lanes[$0.host]!.waiting) }
    }

    /// Files job `index` of the plan under its host.
    mutating func add(_ job: FetchJob, index: Int) {
        let host = job.host
        lanes[host, default: Lane()].jobs.append((index, job))
        buffered += 1
        makeReady(host)
    }

    /// Up to `count` jobs of the host `next` names, for a new operation; its operation count
    /// goes up by one.
    mutating func take(upTo count: Int) -> (host: String, jobs: [FetchJob])? {
        guard let host = popReady() else { return nil }
        var lane = lanes.removeValue(forKey: host)!
        let end = lane.head + min(count, lane.waiting)
        let jobs = lane.jobs[lane.head..<end].map(\.job)
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
        makeReady(host)
        return (host, jobs)
    }

    /// An operation of `host` finished.
    mutating func finished(_ host: String) {
        guard var lane = lanes[host] else { return }
        lane.operations -= 1
        if lane.operations == 0, lane.waiting == 0 {
            lanes[host] = nil
        } else {
            lanes[host] = lane
            makeReady(host)
        }
    }

    /// Puts `host` in `ready` if it has waiting jobs and room and is not there yet.
    private mutating func makeReady(_ host: String) {
        guard let lane = lanes[host], !lane.isReady, lane.waiting > 0, perHost.map({ lane.operations < $0 }) ?? true
        else { return }
        lanes[host]!.isReady = true
        ready.append((lane.jobs[lane.head].index, host))
        var child = ready.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard ready[child].index < ready[parent].index else { break }
            ready.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func popReady() -> String? {
        guard let top = ready.first else { return nil }
        let last = ready.removeLast()
        if !ready.isEmpty {
            ready[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1, right = left + 1
                var smallest = parent
                if left < ready.count, ready[left].index < ready[smallest].index { smallest = left }
                if right < ready.count, ready[right].index < ready[smallest].index { smallest = right }
                guard smallest != parent else { break }
                ready.swapAt(parent, smallest)
                parent = smallest
            }
        }
        lanes[top.host]!.isReady = false
        return top.host
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
            let count = min(end, bytes.count)
            // Into the string's own storage: decoding a lazy map went through the runtime's
            // generic path (a protocol-conformance look-up per call, measured 1% of a run's CPU).
            return String(unsafeUninitializedCapacity: count) { lowered in
                for offset in 0..<count {
                    let byte = bytes[offset]
                    lowered[offset] = (0x41...0x5A).contains(byte) ? byte | 0x20 : byte
                }
                return count
            }
        }
    }
}
