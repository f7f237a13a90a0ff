// libFuzzer entry point of the `adts` target (scripts/fuzz); the body is ISOBMFFFuzz.adts.
// A thrown FuzzInvariantViolation is turned into a crash so that libFuzzer keeps and reports the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAdts(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = size == 0 ? [] : [UInt8](UnsafeBufferPointer(start: data, count: size))
    do { try ISOBMFFFuzz.adts(bytes) } catch { fatalError("adts: \(error)") }
    return 0
}
