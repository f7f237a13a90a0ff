import Testing
@testable import FFmpegBridge
