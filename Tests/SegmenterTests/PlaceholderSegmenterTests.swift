import Testing
@testable import Segmenter
