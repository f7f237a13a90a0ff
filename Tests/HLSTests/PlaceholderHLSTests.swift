import Testing
@testable import HLS
