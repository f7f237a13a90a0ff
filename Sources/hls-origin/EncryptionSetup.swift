import ArgumentParser
import ContentProtection
import Foundation
import ISOBMFF
import Logging
import MediaCore
import MediaPresentation
import ServeConfig

/// A stream's encryption from its effective options (`--encrypt`, `--key` or `$HLS_ORIGIN_KEY`, `--key-period`,
/// `--drm`, `--cpix`, `--key-server`): for AES-128 the key schedule, for `cbcs`/`cenc` the stream's sample protection,
/// made once per stream (a random key from the system's CSPRNG when none is given; with `--key-server`, the first keys
/// fetched now, blocking, and a fetcher started for the next periods), and the stage that puts it between the pipeline
/// and its consumers. `nil` for a clear stream.
struct EncryptionSetup: Sendable {
    enum Kind: Sendable {
        case segments(KeySchedule)
        case samples(TrackKeys, clearLead: MediaTime?)
    }
    let kind: Kind

    /// - Parameters:
    ///   - contentID: the stream's name, the key server's `contentId` (its KIDs derive from it).
    ///   - waitForKeys: `package`: wait for each key period's key from the key server (a live stream never waits).
    init?(_ options: StreamOptions, contentID: String = "stream", waitForKeys: Bool = false,
          logger: Logger = Logger(label: "hls-origin")) throws {
        guard let scheme = options.encrypt else { return nil }
        let key = options.key?.bytes ?? KeySchedule.randomKey()
        switch scheme {
        case .aes128:
            if let server = options.keyServer {
                kind = .segments(KeySchedule(keys: try Self.serverKeys(server, options, contentID: contentID, scheme: nil,
                                                                       systems: [], tracks: [.all], waitForKeys: waitForKeys,
                                                                       logger: logger).keys[0],
                                             period: options.keyPeriod?.time))
                return
            }
            kind = .segments(KeySchedule(master: key, period: options.keyPeriod?.time))
        case .cbcs, .cenc:
            let protectionScheme: ProtectionScheme = scheme == .cbcs ? .cbcs : .cenc
            var systems = (options.drm?.systems ?? []).map { DRMSystem(rawValue: $0.rawValue)! }
            if let path = options.cpix {
                let document = try Self.cpix(path, privateKey: options.cpixKey)
                if options.drm == nil { systems = document.systems }
                kind = .samples(try Self.documentKeys(document, path: path, scheme: protectionScheme, systems: systems,
                                                      keyPeriod: options.keyPeriod?.time, logger: logger),
                                clearLead: options.clearLead?.time)
                return
            }
            if let server = options.keyServer {
                let tracks = Self.trackUsages(options)
                let fetched = try Self.serverKeys(server, options, contentID: contentID, scheme: protectionScheme,
                                                  systems: systems, tracks: tracks, waitForKeys: waitForKeys, logger: logger)
                if options.drm == nil { systems = fetched.systems }
                kind = .samples(TrackKeys(try zip(tracks, fetched.keys).map { usage, keys in
                    (usage, try SampleProtection(scheme: protectionScheme, systems: systems, keyPeriod: options.keyPeriod?.time, keys: keys))
                }), clearLead: options.clearLead?.time)
                return
            }
            if options.trackKeys != nil {
                // Per-track keys from the one key given: each track type's key derived from it (docs/encryption.md).
                kind = .samples(TrackKeys(try Self.trackUsages(options).map { usage in
                    (usage, try SampleProtection(scheme: protectionScheme, key: SampleProtection.trackKey(key, label: usage.label),
                                                 systems: systems, keyPeriod: options.keyPeriod?.time))
                }), clearLead: options.clearLead?.time)
                return
            }
            kind = .samples(TrackKeys(try SampleProtection(scheme: protectionScheme, key: key, keyID: options.key?.keyID, systems: systems,
                                                           keyPeriod: options.keyPeriod?.time)), clearLead: options.clearLead?.time)
        }
    }

    /// A `--cpix` document's keys: each content key for the tracks its usage rules give it (one key: every track), and
    /// with key periods (`keyPeriod`, which the document's periods need) per track type its keys by period, the last
    /// kept past the document's last period (one warning).
    static func documentKeys(_ document: CPIXDocument, path: String, scheme: ProtectionScheme, systems: [DRMSystem],
                             keyPeriod: MediaTime?, logger: Logger) throws -> TrackKeys {
        if let s = document.scheme, s != scheme {
            throw ValidationError("--cpix \(path): its content key is for \(s.rawValue), not \(scheme.rawValue)")
        }
        guard document.hasPeriods == (keyPeriod != nil) else {
            throw ValidationError(document.hasPeriods
                ? "--cpix \(path): its keys are for key periods: give --key-period, their length"
                : "--key-period with --cpix \(path): the document has no key periods (ContentKeyPeriodList) to rotate through")
        }
        guard let keyPeriod else {
            return TrackKeys(try document.keys.map { k in
                (k.usage, try SampleProtection(scheme: scheme, key: k.key, keyID: k.keyID, systems: systems))
            })
        }
        // (Each track type has a key for period 0: `CPIXDocument.parse` checked it.)
        let groups = document.tracks.map { g in (usage: g.usage, keys: g.keys.map { ContentKey(id: $0.period ?? 0, bytes: $0.key, keyID: $0.keyID) }) }
        return TrackKeys(try groups.enumerated().map { i, g in
            let last = g.keys.map(\.id).max() ?? 0
            let keys = FetchedPeriodKeys(g.keys, onEvent: { event in
                if i == 0, case .keeping(let n, _) = event {
                    logger.warning("--cpix \(path): no key for key period \(n) (the document's last is \(last)); keeping period \(last)'s key")
                }
            })
            return (g.usage, try SampleProtection(scheme: scheme, systems: systems, keyPeriod: keyPeriod, keys: keys))
        })
    }

    /// `--key-server`: the first keys fetched now (blocking: one line and a non-zero exit when the server refuses) and,
    /// with `--key-period`, a fetcher for the next periods; `scheme` `nil` for AES-128.
    static func serverKeys(_ server: KeyServerURL, _ options: StreamOptions, contentID: String, scheme: ProtectionScheme?,
                           systems: [DRMSystem], tracks: [KeyUsage], waitForKeys: Bool, logger: Logger) throws
        -> (keys: [any PeriodKeySource], systems: [DRMSystem]) {
        let rotating = options.keyPeriod != nil
        let client = try KeyServerClient(
            url: server, caFile: options.keyServerCa, headers: options.keyServerHeader ?? [],
            request: KeyServerRequest(contentID: contentID, scheme: scheme, rotating: rotating, systems: systems,
                                      recipient: try recipient(options), tracks: tracks),
            logger: logger)
        let first = try client.fetchAtStart(rotating ? [0, 1] : [0])
        guard rotating else { return (first.keys.map { FetchedPeriodKeys($0) }, first.systems) }
        let fetched = client.rotation(first: first.keys)
        return (fetched.map { waitForKeys ? WaitingPeriodKeys(keys: $0, wake: { client.wake() }) : $0 as any PeriodKeySource }, first.systems)
    }

    /// `--track-keys`: the track types that each get a key (SPEKE v2's), or one key for every track.
    static func trackUsages(_ options: StreamOptions) -> [KeyUsage] {
        guard let classes = options.trackKeys?.classes else { return [.all] }
        return classes.map { c in
            switch c {
            case .sd: .sd
            case .hd: .hd
            case .uhd: .uhd
            case .video: .video
            case .audio: .audio
            }
        }
    }

    /// `--cpix-cert` and `--cpix-key` for a key server: the certificate's DER as base64 (the PEM's body) and the key.
    static func recipient(_ options: StreamOptions) throws -> KeyServerRequest.Recipient? {
        guard let certPath = options.cpixCert, let keyPath = options.cpixKey else { return nil }
        let pem = try read(certPath, option: "--cpix-cert")
        let lines = pem.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
        guard let begin = lines.firstIndex(of: "-----BEGIN CERTIFICATE-----"),
              let end = lines[begin...].firstIndex(of: "-----END CERTIFICATE-----"),
              let der = Data(base64Encoded: lines[(begin + 1)..<end].joined()), !der.isEmpty else {
            throw ValidationError("--cpix-cert \(certPath): not a PEM certificate")
        }
        return KeyServerRequest.Recipient(certificate: der.base64EncodedString(),
                                          privateKeyPEM: try read(keyPath, option: "--cpix-key"))
    }

    /// The CPIX document at `path`, or one line naming the file and what is wrong (never the key).
    static func cpix(_ path: String, privateKey keyPath: String? = nil) throws -> CPIXDocument {
        let text = try read(path, option: "--cpix")
        let privateKey = try keyPath.map { try read($0, option: "--cpix-key") }
        do {
            return try CPIXDocument.parse(text, privateKeyPEM: privateKey)
        } catch {
            throw ValidationError("--cpix \(path): \(error)")
        }
    }

    /// A file an option names, as text; one line naming the option and the file when it cannot be read.
    static func read(_ path: String, option: String) throws -> String {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw ValidationError("\(option) \(path): cannot be read")
        }
        return text
    }

    /// `downstream` behind the encryption stage.
    func stage(_ downstream: any PresentationConsumer) -> any PresentationConsumer {
        switch kind {
        case .segments(let schedule): EncryptionStage(schedule, downstream: downstream)
        case .samples(let keys, let clearLead): SampleEncryptionStage(keys, clearLead: clearLead, downstream: downstream)
        }
    }
}
