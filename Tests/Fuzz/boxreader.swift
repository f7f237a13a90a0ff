// libFuzzer entry point of the `boxreader` target (scripts/fuzz); the body is ISOBMFFFuzz.boxReader.
// A thrown FuzzInvariantViolation is turned into a crash so that libFuzzer keeps and reports the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzBoxreader(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = size == 0 ? [] : [UInt8](UnsafeBufferPointer(start: data, count: size))
    do { try ISOBMFFFuzz.boxReader(bytes) } catch { fatalError("boxreader: \(error)") }
    return 0
}
