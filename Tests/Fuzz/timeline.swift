// libFuzzer entry point of the `timeline` target (scripts/fuzz); the body is SegmenterFuzz.timeline.
// A thrown FuzzInvariantViolation is turned into a crash so that libFuzzer keeps and reports the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTimeline(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = size == 0 ? [] : [UInt8](UnsafeBufferPointer(start: data, count: size))
    do { try SegmenterFuzz.timeline(bytes) } catch { fatalError("timeline: \(error)") }
    return 0
}
