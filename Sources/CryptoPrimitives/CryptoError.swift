internal import COpenSSL

/// A libcrypto call that failed, with what it said (its error queue, which this drains) or why we did not call it.
public struct CryptoError: Error, CustomStringConvertible, Sendable {
    public let call: String
    public let reason: String

    init(call: String, reason: String? = nil) {
        self.call = call
        var queued = ""
        var code = ERR_get_error()
        while code != 0 {
            if queued.isEmpty {
                var buffer = [CChar](repeating: 0, count: 256)
                ERR_error_string_n(code, &buffer, buffer.count)
                queued = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            }
            code = ERR_get_error()
        }
        self.reason = reason ?? (queued.isEmpty ? "failed" : queued)
    }

    public var description: String { "\(call): \(reason)" }
}
