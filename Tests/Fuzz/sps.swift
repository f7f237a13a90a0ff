// libFuzzer entry point of the `sps` target (scripts/fuzz); the body is ISOBMFFFuzz.sps.
// A thrown FuzzInvariantViolation is turned into a crash so that libFuzzer keeps and reports the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSps(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = size == 0 ? [] : [UInt8](UnsafeBufferPointer(start: data, count: size))
    do { try ISOBMFFFuzz.sps(bytes) } catch { fatalError("sps: \(error)") }
    return 0
}
