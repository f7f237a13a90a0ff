import ContentProtection
import MediaPresentation
import ServeConfig

/// A stream's encryption from its effective options (`--encrypt`, `--key` or `$HLS_ORIGIN_KEY`, `--key-period`):
/// the key schedule, made once per stream (a random key from the system's CSPRNG when none is given), and the stage
/// that puts it between the pipeline and its consumers. `nil` for a clear stream.
struct EncryptionSetup: Sendable {
    let schedule: KeySchedule

    init?(_ options: StreamOptions) {
        guard options.encrypt != nil else { return nil }
        schedule = KeySchedule(master: options.key?.bytes ?? KeySchedule.randomKey(), period: options.keyPeriod?.time)
    }

    /// `downstream` behind the encryption stage.
    func stage(_ downstream: any PresentationConsumer) -> any PresentationConsumer {
        EncryptionStage(schedule, downstream: downstream)
    }
}
