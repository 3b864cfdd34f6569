import Dispatch

/// `--rate R`: at most R requests a second, as a token bucket holding one second's worth.
/// It never blocks: `reserve()` says how long the caller should wait before sending.
final class RateLimiter: Sendable {
    private struct Bucket {
        var tokens: Double
        var updated: UInt64
    }

    private let rate: Double
    private let capacity: Double
    private let bucket: Locked<Bucket>
    private let now: @Sendable () -> UInt64

    init(rate: Double, now: @escaping @Sendable () -> UInt64 = { DispatchTime.now().uptimeNanoseconds }) {
        self.rate = rate
        self.capacity = max(1, rate)
        self.now = now
        bucket = Locked(Bucket(tokens: max(1, rate), updated: now()))
    }

    /// Takes a token and returns the seconds to wait until it is really there (0 when it is).
    func reserve() -> Double {
        bucket.withLock { bucket in
            let time = now()
            bucket.tokens = min(capacity, bucket.tokens + Double(time - bucket.updated) / 1e9 * rate)
            bucket.updated = time
            bucket.tokens -= 1
            return bucket.tokens >= 0 ? 0 : -bucket.tokens / rate
        }
    }
}
