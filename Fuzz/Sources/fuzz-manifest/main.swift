import ArchiverCore

/// libFuzzer's entry point: one input to `FuzzTarget.manifest`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzTarget.manifest.run(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}
