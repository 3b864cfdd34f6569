#if canImport(Glibc)
import Glibc
#endif

/// Whether this test process, and so the binary built with it, runs under ThreadSanitizer or
/// AddressSanitizer (`make sanitize`): their shadow memory and quarantine make a peak-RSS
/// figure say nothing about the code, so memory bounds are held only without them.
enum Sanitizers {
    static let active = ["__tsan_init", "__asan_init"].contains { (name: String) in
        dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) != nil
    }
}
