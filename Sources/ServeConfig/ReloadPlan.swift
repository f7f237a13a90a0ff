/// What a reload (`SIGHUP` with `--config`) does: the file's streams against the running ones, by name and options.
/// Streams only in the file start, streams only running end, streams whose options differ are replaced (ended and
/// started again), and the others are left as they are (same media sequence, no discontinuity).
public struct ReloadPlan: Equatable, Sendable {
    public var add: [ServePlan.Stream] = []
    public var remove: [String] = []
    public var replace: [ServePlan.Stream] = []
    public var keep: [String] = []

    public init(add: [ServePlan.Stream] = [], remove: [String] = [], replace: [ServePlan.Stream] = [], keep: [String] = []) {
        self.add = add
        self.remove = remove
        self.replace = replace
        self.keep = keep
    }

    /// Each list sorted by name.
    public static func diff(running: [ServePlan.Stream], planned: [ServePlan.Stream]) -> ReloadPlan {
        let now = Dictionary(running.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        let wanted = Set(planned.map(\.name))
        var plan = ReloadPlan()
        for s in planned.sorted(by: { $0.name < $1.name }) {
            switch now[s.name] {
            case nil: plan.add.append(s)
            case let r? where r.options == s.options: plan.keep.append(s.name)
            case _?: plan.replace.append(s)
            }
        }
        plan.remove = now.keys.filter { !wanted.contains($0) }.sorted()
        return plan
    }

    public var changesNothing: Bool { add.isEmpty && remove.isEmpty && replace.isEmpty }

    /// `"added cam4; removed b; replaced c; 2 unchanged"`.
    public var summary: String {
        var parts: [String] = []
        if !add.isEmpty { parts.append("added " + add.map(\.name).joined(separator: ", ")) }
        if !remove.isEmpty { parts.append("removed " + remove.joined(separator: ", ")) }
        if !replace.isEmpty { parts.append("replaced " + replace.map(\.name).joined(separator: ", ")) }
        parts.append("\(keep.count) unchanged")
        return parts.joined(separator: "; ")
    }
}
