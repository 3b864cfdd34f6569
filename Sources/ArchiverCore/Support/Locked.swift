import Glibc

/// A value guarded by a pthread mutex.
///
/// Used instead of `Mutex` from Synchronization because ThreadSanitizer sees pthread locks but
/// not `Mutex` (futex-based, in uninstrumented code), and reports false races through it.
/// Sendable only when its value is, as swift-nio's `NIOLockedValueBox`: the lock orders access,
/// but a non-Sendable value handed out of `withLock` could still be shared.
package final class Locked<Value> {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    package init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value.
    package func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}

// The mutex confines every access to `value`.
extension Locked: @unchecked Sendable where Value: Sendable {}
