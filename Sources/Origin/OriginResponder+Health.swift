import Hummingbird
import MediaPresentation
import NIOCore

/// `/healthz` and `/readyz`, for load balancers and orchestrators: open without credentials (whatever the access
/// control), cheap (one snapshot per stream), not viewers, not logged per request; they say the states and nothing else.
extension OriginResponder {
    static let healthy = PreparedResponse.text(.ok, "ok\n")
    static let healthMethod = PreparedResponse.text(.methodNotAllowed, "Method Not Allowed\n",
                                                    extra: [.allow: "GET, HEAD"])
    static let readyzQuery = PreparedResponse.text(.badRequest, "readyz: ?stream= takes up to \(Readiness.maxNames) stream names, comma-separated\n")

    /// `GET /healthz`: 200 `ok` while the process serves.
    func health(_ request: Request) -> Response {
        guard request.method == .get || request.method == .head else { return send(Self.healthMethod, request) }
        return send(Self.healthy, request)
    }

    /// `GET /readyz[?stream=a,b]`: 200 `ok` when every configured stream (or every one named) is `live`; else 503
    /// with a line per stream that is not (`cam1: waiting`).
    func readiness(_ request: Request) -> Response {
        guard request.method == .get || request.method == .head else { return send(Self.healthMethod, request) }
        let names: [String]
        if let asked = request.uri.queryParameters.get("stream") {
            guard let parsed = Readiness.names(asked) else { return send(Self.readyzQuery, request) }
            names = parsed
        } else {
            names = control?.configured() ?? registry.names
        }
        let problems = Readiness.problems(names, in: registry)
        guard !problems.isEmpty else { return send(Self.healthy, request) }
        return send(.text(.serviceUnavailable, problems.joined(separator: "\n") + "\n", extra: [.retryAfter: "1"]), request)
    }
}

/// What `/readyz` checks: pure over the registry.
enum Readiness {
    static let maxNames = 100

    /// The stream names of `?stream=a,b` (`default` or empty: the root stream); `nil` when one is not a name.
    static func names(_ query: String) -> [String]? {
        let parts = query.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        guard parts.count <= maxNames else { return nil }
        var names: [String] = []
        for p in parts {
            if p.isEmpty || p == "default" {
                names.append("")
            } else {
                guard Rendition.isValidName(p) else { return nil }
                names.append(p)
            }
        }
        return names
    }

    /// A line for each of `names` that is not live: `cam1: waiting`, `cam2: ended`, `cam3: unknown`.
    static func problems(_ names: [String], in registry: PresentationRegistry) -> [String] {
        names.compactMap { name in
            let label = OriginMetrics.streamLabel(name)
            guard let p = registry.presentation(named: name) else { return "\(label): unknown" }
            let state = StreamSummary.state(of: p)
            return state == "live" ? nil : "\(label): \(state)"
        }
    }
}
