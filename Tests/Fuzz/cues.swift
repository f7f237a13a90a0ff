// libFuzzer entry point of the `cues` target (scripts/fuzz); the body is ISOBMFFFuzz.cues.
// A thrown FuzzInvariantViolation is turned into a crash so that libFuzzer keeps and reports the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCues(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = size == 0 ? [] : [UInt8](UnsafeBufferPointer(start: data, count: size))
    do { try ISOBMFFFuzz.cues(bytes) } catch { fatalError("cues: \(error)") }
    return 0
}
