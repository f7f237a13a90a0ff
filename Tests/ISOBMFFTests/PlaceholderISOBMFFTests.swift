import Testing
@testable import ISOBMFF
