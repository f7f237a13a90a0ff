import MediaCore
import MediaPresentation
import Pipeline
import ServeConfig

extension PipelineOptions {
    /// The pipeline's options for a stream's effective (checked) options: the one place a `StreamOptions` becomes a
    /// `PipelineOptions`. An option not set keeps the pipeline's default. The test pattern (no input, or
    /// `testpattern:`) is `testPattern` in size (rounded down to even) at the stream's frame rate (30 by default).
    init(_ o: StreamOptions, testPattern: (width: Int, height: Int) = (1280, 720)) {
        switch o.source {
        case .testPattern:
            self.init(input: .testPattern(width: testPattern.width & ~1, height: testPattern.height & ~1,
                                          frameRate: o.framerate?.rate ?? Rational(30, 1)))
        case .url(let url):
            self.init(input: .url(url))
        }
        inputFormat = o.inputFormat ?? o.audioFormat
        demuxerOptions = o.inputOptions ?? [:]
        if let size = o.videoSize { demuxerOptions["video_size"] = size.description }
        if let format = o.pixelFormat { demuxerOptions["pixel_format"] = format }
        if let rate = o.framerate { demuxerOptions["framerate"] = rate.description }
        if let rate = o.sampleRate { demuxerOptions["sample_rate"] = String(rate) }
        if let n = o.channels { demuxerOptions["ch_layout"] = n == 1 ? "mono" : n == 2 ? "stereo" : "\(n)c" }
        if let loop = o.loop { self.loop = loop }
        realtime = o.realtime
        if let reconnect = o.reconnect { self.reconnect = reconnect }
        if let epoch = o.epochFromInput { epochFromInput = epoch }
        if let d = o.segmentDuration { segmentDuration = d.time }
        partDuration = o.partDuration.flatMap { $0.isZero ? nil : $0.time }
        switch o.transcode {
        case .auto?: transcode = .auto
        case .always?: transcode = .always
        case .never?: transcode = .never
        case nil: break
        }
        if let codec = o.videoCodec { video.codec = codec }
        if let preset = o.preset { video.preset = preset }
        if let tune = o.tune { video.tune = tune == "none" ? nil : tune }
        video.crf = o.crf
        video.bitRate = o.videoBitrate?.bitsPerSecond
        video.width = o.size?.width
        video.height = o.size?.height
        if let rate = o.audioBitrate { audioBitRate = rate.bitsPerSecond }
        if let codec = o.audioCodec { audioCodec = codec }
        if let wallclock = o.wallclockTimestamps { wallclockTimestamps = wallclock }
        if let trick = o.dashTrickMode { dashTrickMode = trick }
        let interstitial = o.interstitial.map { InterstitialAsset.uri($0.text) } ?? o.interstitialList.map { .list($0.text) }
        eventSignalling = EventSignalling(legacyCueTags: o.cueTags == .legacy, interstitial: interstitial,
                                          scte35Inband: o.events == .inband)
        ladder = o.ladder?.text
        if o.thumbnails == true {
            var t = ThumbnailSettings()
            t.interval = o.thumbnailInterval?.time
            if let c = o.thumbnailGrid?.width, let r = o.thumbnailGrid?.height { (t.columns, t.rows) = (c, r) }
            if let w = o.thumbnailWidth { t.tileWidth = w }
            thumbnails = t
        }
        audioTracks.tracks = o.audioTracks?.selectors
        for (key, name) in o.audioName ?? [:] { if let i = Int(key) { audioTracks.names[i] = name } }
        for (key, tag) in o.audioLanguage ?? [:] { if let i = Int(key), let l = LanguageTag(tag) { audioTracks.languages[i] = l } }
        audioTracks.defaultLanguage = o.defaultAudio.flatMap(LanguageTag.init)
        if let plan = o.captions { captions = plan }
        subtitles = o.subtitles ?? []
    }
}
