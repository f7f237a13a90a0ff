// What the libFuzzer targets of `scripts/fuzz` (and the seed replays in the unit tests) report when a body finds a
// broken rule: a parser that throws on bad bytes is doing its job; a trap is a bug, and so is a broken invariant.
// No Foundation: the fuzz build compiles this module with swiftc alone.

public struct FuzzInvariantViolation: Error, CustomStringConvertible {
    public let description: String
    public init(description: String) { self.description = description }
}

/// Throws `FuzzInvariantViolation(rule)` unless `condition` holds.
@inline(__always)
public func require(_ condition: Bool, _ rule: @autoclosure () -> String) throws(FuzzInvariantViolation) {
    if !condition { throw FuzzInvariantViolation(description: rule()) }
}
