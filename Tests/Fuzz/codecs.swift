// libFuzzer entry point of the `codecs` target (scripts/fuzz); the body is ISOBMFFFuzz.codecs.
// A thrown FuzzInvariantViolation is turned into a crash so that libFuzzer keeps and reports the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCodecs(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = size == 0 ? [] : [UInt8](UnsafeBufferPointer(start: data, count: size))
    do { try ISOBMFFFuzz.codecs(bytes) } catch { fatalError("codecs: \(error)") }
    return 0
}
