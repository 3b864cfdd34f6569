/// When to try a URL again: exponential backoff with jitter, never before the server's
/// `Retry-After`.
struct Backoff: Sendable {
    var base: Double = 0.25
    var cap: Double = 8
    /// Returns a factor in 0.5...1; injectable so tests can pin the schedule.
    var jitter: @Sendable () -> Double = { Double.random(in: 0.5...1) }

    init(base: Double = 0.25, cap: Double = 8, jitter: @escaping @Sendable () -> Double = { Double.random(in: 0.5...1) }) {
        self.base = base
        self.cap = cap
        self.jitter = jitter
    }

    /// Seconds to wait after failed attempt number `attempt` (1-based).
    func delay(afterAttempt attempt: Int, retryAfter: Double? = nil) -> Double {
        let exponential = min(cap, base * Double(1 << min(attempt - 1, 20)))
        return max(exponential * jitter(), retryAfter ?? 0)
    }
}
