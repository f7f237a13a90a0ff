import MediaCore

extension MPD {
    /// A Representation's `AudioChannelConfiguration` descriptor (ISO/IEC 23009-1): the scheme follows the codec,
    /// as the DASH-IF interoperability points list them (MPEG's for AAC, CICP, Dolby's for AC-3 and E-AC-3).
    public struct AudioChannelConfiguration: Sendable, Equatable {
        public var schemeIdUri: String
        public var value: String

        public init(schemeIdUri: String, value: String) {
            self.schemeIdUri = schemeIdUri
            self.value = value
        }

        /// ISO/IEC 23009-1's scheme for ISO/IEC 23003-3: the channel count.
        public static func mpeg(channelCount: Int) -> Self {
            Self(schemeIdUri: "urn:mpeg:dash:23003:3:audio_channel_configuration:2011", value: String(channelCount))
        }

        /// ISO/IEC 23091-3 (CICP) ChannelConfiguration index.
        public static func cicp(_ index: Int) -> Self {
            Self(schemeIdUri: "urn:mpeg:mpegB:cicp:ChannelConfiguration", value: String(index))
        }

        /// Dolby's scheme for AC-3 and E-AC-3: the 16-bit channel mask of ETSI TS 102 366 Table E.1.4 as four
        /// upper-case hex digits (`A000` stereo, `F801` 5.1).
        public static func dolby(mask: UInt16) -> Self {
            let hex = String(mask, radix: 16, uppercase: true)
            return Self(schemeIdUri: "tag:dolby.com,2014:dash:audio_channel_configuration:2011",
                        value: String(repeating: "0", count: 4 - hex.count) + hex)
        }

        /// What a track says: the Dolby mask for AC-3/E-AC-3; for Opus in the Vorbis channel order (RFC 7845
        /// §5.1.1.2) the CICP index of the same layout where one exists (mono, stereo, 3.0, 5.0, 5.1, 6.1, 7.1),
        /// else the channel count.
        public init(track t: TrackFormat) {
            switch t.codec {
            case .ac3(let c): self = .dolby(mask: c.channelMask)
            case .eac3(let c): self = .dolby(mask: c.channelMask)
            case .opus(let c) where c.channelMappingFamily <= 1:
                if let index = Self.vorbisOrderCICP[Int(c.outputChannelCount)] {
                    self = .cicp(index)
                } else {
                    self = .mpeg(channelCount: t.channelCount)
                }
            default: self = .mpeg(channelCount: t.channelCount)
            }
        }

        /// Vorbis-order layouts by channel count (RFC 7845 §5.1.1.2) to ISO/IEC 23091-3 Table 8 indices; 4 channels
        /// (quadraphonic) has no CICP index.
        static let vorbisOrderCICP: [Int: Int] = [1: 1, 2: 2, 3: 3, 5: 5, 6: 6, 7: 11, 8: 12]
    }
}
