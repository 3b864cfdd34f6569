internal import CPNG

/// The PNG check of `PNGValidator` over a body read a piece at a time (`cpng_stream`): for a
/// file too large to hold, in memory that does not grow with it.
final class PNGStreamCheck {
    private var stream: OpaquePointer?
    /// Whether the body has already failed, so later pieces need not be fed.
    private(set) var failed = false

    init(_ validator: PNGValidator) {
        stream = cpng_stream_new(validator.mode == .full ? 1 : 0, UInt32(validator.maxDimension))
    }

    deinit {
        if stream != nil { _ = result() }
    }

    /// Feeds the next piece of the body.
    func feed(_ bytes: UnsafeRawBufferPointer) {
        guard !failed, let stream, let base = bytes.baseAddress else { return }
        failed = cpng_stream_feed(stream, base.assumingMemoryBound(to: UInt8.self), bytes.count) != 0
    }

    /// The verdict on everything fed; call once.
    func result() -> Result<ImageInfo, ItemError> {
        var result = cpng_result()
        cpng_stream_finish(stream, &result)
        stream = nil
        return PNGValidator.verdict(result)
    }
}
