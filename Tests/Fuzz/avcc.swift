// libFuzzer entry point of the `avcc` target (scripts/fuzz); the body is ISOBMFFFuzz.avcc.
// A thrown FuzzInvariantViolation is turned into a crash so that libFuzzer keeps and reports the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAvcc(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = size == 0 ? [] : [UInt8](UnsafeBufferPointer(start: data, count: size))
    do { try ISOBMFFFuzz.avcc(bytes) } catch { fatalError("avcc: \(error)") }
    return 0
}
