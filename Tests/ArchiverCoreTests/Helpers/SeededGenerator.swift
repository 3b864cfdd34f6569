import Foundation

/// The random numbers of a test: seeded, and the seed printed, so a failure can be replayed with
/// `TEST_SEED=<seed> swift test --filter <test>`. Without `TEST_SEED` each run picks a new seed.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    let seed: UInt64

    /// A generator for `test` (printed with the seed).
    init(_ test: String = #function, file: String = #fileID) {
        let chosen = ProcessInfo.processInfo.environment["TEST_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64.max)
        seed = chosen
        state = chosen
        print("\(file) \(test): TEST_SEED=\(chosen)")
    }

    /// A fixed seed, for a test whose inputs are the same on every run (nothing printed).
    init(seed: UInt64) {
        self.seed = seed
        state = seed
    }

    /// SplitMix64.
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
