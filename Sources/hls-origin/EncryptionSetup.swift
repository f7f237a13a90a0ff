import ContentProtection
import ISOBMFF
import MediaPresentation
import ServeConfig

/// A stream's encryption from its effective options (`--encrypt`, `--key` or `$HLS_ORIGIN_KEY`, `--key-period`,
/// `--drm`): for AES-128 the key schedule, for `cbcs`/`cenc` the stream's sample protection, made once per stream (a
/// random key from the system's CSPRNG when none is given), and the stage that puts it between the pipeline and its
/// consumers. `nil` for a clear stream.
struct EncryptionSetup: Sendable {
    enum Kind: Sendable {
        case segments(KeySchedule)
        case samples(SampleProtection)
    }
    let kind: Kind

    init?(_ options: StreamOptions) throws {
        guard let scheme = options.encrypt else { return nil }
        let key = options.key?.bytes ?? KeySchedule.randomKey()
        switch scheme {
        case .aes128:
            kind = .segments(KeySchedule(master: key, period: options.keyPeriod?.time))
        case .cbcs, .cenc:
            let systems = (options.drm?.systems ?? []).map { DRMSystem(rawValue: $0.rawValue)! }
            kind = .samples(try SampleProtection(scheme: scheme == .cbcs ? .cbcs : .cenc, key: key,
                                                 keyID: options.key?.keyID, systems: systems))
        }
    }

    /// `downstream` behind the encryption stage.
    func stage(_ downstream: any PresentationConsumer) -> any PresentationConsumer {
        switch kind {
        case .segments(let schedule): EncryptionStage(schedule, downstream: downstream)
        case .samples(let protection): SampleEncryptionStage(protection, downstream: downstream)
        }
    }
}
