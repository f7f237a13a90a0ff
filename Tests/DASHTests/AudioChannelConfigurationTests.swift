import MediaCore
import Testing
@testable import DASH

/// The AudioChannelConfiguration scheme follows the codec: MPEG's channel count for AAC, CICP for Opus, Dolby's
/// channel mask for AC-3 and E-AC-3.
@Suite struct AudioChannelConfigurationTests {
    static func track(_ codec: TrackFormat.Codec, channels: Int) -> TrackFormat {
        TrackFormat(trackID: 1, kind: .audio, timescale: 48000, codec: codec, sampleRate: 48000, channelCount: channels)
    }

    @Test func perCodec() {
        let aac = MPD.AudioChannelConfiguration(track: Self.track(.aac(audioSpecificConfig: [0x11, 0x90]), channels: 2))
        #expect(aac == MPD.AudioChannelConfiguration(schemeIdUri: "urn:mpeg:dash:23003:3:audio_channel_configuration:2011", value: "2"))
        let ac3 = MPD.AudioChannelConfiguration(track: Self.track(
            .ac3(AC3Config(fscod: 0, bsid: 8, bsmod: 0, acmod: 7, lfeon: true, bitRateCode: 14)), channels: 6))
        #expect(ac3 == MPD.AudioChannelConfiguration(schemeIdUri: "tag:dolby.com,2014:dash:audio_channel_configuration:2011", value: "F801"))
        let stereo = EAC3Config(dataRate: 128, independentSubstreams: [.init(fscod: 0, bsid: 16, bsmod: 0, acmod: 2, lfeon: false)])
        #expect(MPD.AudioChannelConfiguration(track: Self.track(.eac3(stereo), channels: 2)).value == "A000")
        let mono = EAC3Config(dataRate: 64, independentSubstreams: [.init(fscod: 0, bsid: 16, bsmod: 0, acmod: 1, lfeon: false)])
        #expect(MPD.AudioChannelConfiguration(track: Self.track(.eac3(mono), channels: 1)).value == "4000")
        let opus = OpusConfig(outputChannelCount: 2, preSkip: 312, inputSampleRate: 48000, coupledCount: 1)
        #expect(MPD.AudioChannelConfiguration(track: Self.track(.opus(opus), channels: 2))
                == MPD.AudioChannelConfiguration(schemeIdUri: "urn:mpeg:mpegB:cicp:ChannelConfiguration", value: "2"))
        var quad = opus
        quad.outputChannelCount = 4
        quad.channelMappingFamily = 1
        #expect(MPD.AudioChannelConfiguration(track: Self.track(.opus(quad), channels: 4)) == .mpeg(channelCount: 4))
        var eight = quad
        eight.outputChannelCount = 8
        #expect(MPD.AudioChannelConfiguration(track: Self.track(.opus(eight), channels: 8)) == .cicp(12))
    }

    @Test func rendersTheDescriptor() {
        let r = MPD.Representation(id: "audio", bandwidth: 1, codecs: "ec-3", audioSamplingRate: 48000,
                                   audioChannelConfiguration: .dolby(mask: 0x0A00),
                                   segments: .base(.init(url: "a.mp4", timescale: 48000, indexRange: 10...19, initializationRange: 0...9)))
        let mpd = MPD(type: .static, profiles: ["urn:mpeg:dash:profile:isoff-on-demand:2011"], minBufferTime: MediaTime(value: 2, timescale: 1),
                      periods: [.init(id: "0", start: MediaTime(value: 0, timescale: 1),
                                      adaptationSets: [.init(id: 1, contentType: .audio, mimeType: "audio/mp4", representations: [r])])])
        #expect(mpd.render().contains(
            "<AudioChannelConfiguration schemeIdUri=\"tag:dolby.com,2014:dash:audio_channel_configuration:2011\" value=\"0A00\"/>"))
    }
}
