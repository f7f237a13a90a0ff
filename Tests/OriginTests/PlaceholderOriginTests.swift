import Testing
@testable import Origin
