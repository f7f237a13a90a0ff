// libFuzzer entry point of the `playlist` target (scripts/fuzz); the body is HLSFuzz.playlist.
// A thrown FuzzInvariantViolation is turned into a crash so that libFuzzer keeps and reports the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPlaylist(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = size == 0 ? [] : [UInt8](UnsafeBufferPointer(start: data, count: size))
    do { try HLSFuzz.playlist(bytes) } catch { fatalError("playlist: \(error)") }
    return 0
}
