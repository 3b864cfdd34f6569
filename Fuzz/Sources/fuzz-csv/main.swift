import ArchiverCore

/// libFuzzer's entry point: one input to `FuzzTarget.csv`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzTarget.csv.run(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}
