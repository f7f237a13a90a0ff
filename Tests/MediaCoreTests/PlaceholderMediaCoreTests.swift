import Testing
@testable import MediaCore
