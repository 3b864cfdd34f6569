import Foundation
@testable import ArchiverCore
@testable import ArchiverServer

/// A loopback `HTTPServer` with a route table, request counts and a gate that holds requests
/// inside the handler, so tests can prove a client's concurrency bound without sleeping.
///
/// Routes and counts are keyed by the path without its query string. Unrouted paths go to
/// the default handler (404 unless told otherwise). The server is started by `init` and
/// stopped by `stop()` or when the `TestServer` goes away.
final class TestServer: Sendable {
    typealias Handler = @Sendable (HTTPRequest) -> HTTPResponse

    private let core: Core
    private let server: HTTPServer

    /// Listens on `host` (any 127.x.y.z is loopback: a second host for redirect tests).
    init(host: String = "127.0.0.1", defaultHandler: @escaping Handler = { .text(404, "no route for \($0.path)\n") }) throws {
        let core = Core(defaultHandler: defaultHandler)
        self.core = core
        self.server = try HTTPServer(host: host) { core.handle($0) }
        server.start()
    }

    deinit {
        stop()
    }

    var port: Int { server.port }
    var baseURL: String { server.baseURL }

    /// The URL of `path` on this server, e.g. `url("/a.png")`.
    func url(_ path: String) -> URL { URL(string: baseURL + path)! }

    /// Routes `path` to `handler`.
    func route(_ path: String, _ handler: @escaping Handler) {
        core.condition.locked { core.routes[path] = handler }
    }

    /// Routes `path` to a fixed response.
    func route(_ path: String, _ response: HTTPResponse) {
        route(path) { _ in response }
    }

    /// How many requests arrived for `path` (query ignored).
    func count(_ path: String) -> Int { core.condition.locked { core.counts[path, default: 0] } }

    /// How many requests arrived in all.
    var total: Int { core.condition.locked { core.counts.values.reduce(0, +) } }

    /// Every request received, in arrival order.
    var requests: [HTTPRequest] { core.condition.locked { core.requests } }

    /// Connections accepted so far, and the most open at once.
    var connectionsAccepted: Int { server.connectionCounts.accepted }
    var peakConnections: Int { server.connectionCounts.peakOpen }

    /// Requests inside the handler right now, and the most there have been at once.
    var inFlight: Int { core.condition.locked { core.inFlight } }
    var maxInFlight: Int { core.condition.locked { core.maxInFlight } }

    /// From now on, handlers block (counted as in flight) until `release()`.
    func holdRequests() { core.condition.locked { core.held = true } }

    /// Lets held handlers, and later ones, run.
    func release() {
        core.condition.locked {
            core.held = false
            core.condition.broadcast()
        }
    }

    /// Waits until at least `n` requests are inside the handler; false on timeout.
    func waitUntilInFlight(_ n: Int, timeout: TimeInterval = 30) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        return core.condition.locked {
            while core.inFlight < n {
                if !core.condition.wait(until: deadline) { return core.inFlight >= n }
            }
            return true
        }
    }

    /// Waits until at least `n` requests have arrived in all; false on timeout.
    func waitUntilTotal(_ n: Int, timeout: TimeInterval = 30) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        return core.condition.locked {
            while core.counts.values.reduce(0, +) < n {
                if !core.condition.wait(until: deadline) { return core.counts.values.reduce(0, +) >= n }
            }
            return true
        }
    }

    /// Releases held requests and stops the server. Safe to call twice.
    func stop() {
        release()
        server.stop()
    }

    /// The state the handler shares with the test, guarded by `condition`.
    private final class Core: @unchecked Sendable {
        let condition = NSCondition()
        let defaultHandler: Handler
        var routes: [String: Handler] = [:]
        var counts: [String: Int] = [:]
        var requests: [HTTPRequest] = []
        var inFlight = 0
        var maxInFlight = 0
        var held = false

        init(defaultHandler: @escaping Handler) {
            self.defaultHandler = defaultHandler
        }

        func handle(_ request: HTTPRequest) -> HTTPResponse {
            let path = request.pathWithoutQuery
            let handler = condition.locked { () -> Handler in
                counts[path, default: 0] += 1
                requests.append(request)
                inFlight += 1
                maxInFlight = max(maxInFlight, inFlight)
                condition.broadcast()
                while held { condition.wait() }
                return routes[request.path] ?? routes[path] ?? defaultHandler
            }
            let response = handler(request)
            condition.locked {
                inFlight -= 1
                condition.broadcast()
            }
            return response
        }
    }
}

extension NSCondition {
    /// Runs `body` holding the lock.
    func locked<T>(_ body: () throws -> T) rethrows -> T {
        lock()
        defer { unlock() }
        return try body()
    }
}
