// libFuzzer entry point of the `annexb` target (scripts/fuzz); the body is ISOBMFFFuzz.annexB.
// A thrown FuzzInvariantViolation is turned into a crash so that libFuzzer keeps and reports the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAnnexb(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = size == 0 ? [] : [UInt8](UnsafeBufferPointer(start: data, count: size))
    do { try ISOBMFFFuzz.annexB(bytes) } catch { fatalError("annexb: \(error)") }
    return 0
}
