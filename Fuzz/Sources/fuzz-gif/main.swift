import ArchiverCore

/// libFuzzer's entry point: one input to `FuzzTarget.gif`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzTarget.gif.run(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}
