/// Sums of sizes that come from outside: a file's `st_size`, a journal's or a manifest's
/// `bytes`. A sparse file can claim 2^63 - 1 bytes and a hostile line any number, so two of
/// them added with `+` overflow, which traps and kills the process; clamped, the total stays a
/// (too large, but harmless) number and the command carries on. Sums that fit are unchanged.
extension FixedWidthInteger {
    /// `self + other`, or the type's largest (smallest) value when the sum does not fit.
    func saturatingAdding(_ other: Self) -> Self {
        let (sum, overflow) = addingReportingOverflow(other)
        guard overflow else { return sum }
        return other > 0 ? .max : .min
    }

    /// Adds `other`, clamping at the type's largest (smallest) value instead of trapping.
    mutating func saturatingAdd(_ other: Self) {
        self = saturatingAdding(other)
    }
}
