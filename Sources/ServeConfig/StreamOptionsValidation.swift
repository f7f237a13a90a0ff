import MediaCore

extension StreamOptions {
    /// Every rule on these options, once: the ranges of the values that have one, and the rules between options.
    /// The first broken rule is one line, naming the options as `naming` does.
    public func validate(naming: OptionNaming) throws(ConfigError) {
        func fail(_ error: OptionError, _ key: CodingKeys) -> ConfigError {
            naming.error(error.message(option: naming.name(key)), key: key)
        }
        func name(_ key: CodingKeys) -> String { naming.name(key) }
        if let inputFormat, let audioFormat, inputFormat != audioFormat {
            throw naming.error("give either \(name(.inputFormat)) or \(name(.audioFormat)), not both", key: .audioFormat)
        }
        do throws(OptionError) { _ = try videoSize?.exact() } catch { throw fail(error, .videoSize) }
        if inputFormat == "rawvideo" && videoSize == nil {
            throw naming.error("raw video input needs \(name(.videoSize)) WxH (and \(name(.framerate)), \(name(.pixelFormat)) if not 25 fps yuv420p)", key: .videoSize)
        }
        do throws(OptionError) { try segmentDuration?.check(within: Self.segmentDurations) } catch { throw fail(error, .segmentDuration) }
        if let partDuration, !partDuration.isZero {
            do throws(OptionError) { try partDuration.check(within: Self.partDurations) } catch { throw fail(error, .partDuration) }
            if partDuration >= segmentDuration ?? Self.defaultSegmentDuration {
                throw naming.error("\(name(.partDuration)) must be shorter than \(name(.segmentDuration))", key: .partDuration)
            }
        }
        if let window, !Self.windows.contains(window) {
            throw naming.error("\(name(.window)) must be between 1 and 1000 segments", key: .window)
        }
        if let crf, !Self.crfs.contains(crf) { throw naming.error("\(name(.crf)) must be 0-51", key: .crf) }
        if audioCodec == .ac3, let rate = audioBitrate?.bitsPerSecond, rate % 1000 != 0 || !AudioCodecName.ac3BitRates.contains(rate / 1000) {
            throw naming.error("\(name(.audioBitrate)) must be an AC-3 rate with \(name(.audioCodec)) ac3 (\(AudioCodecName.ac3BitRates.map { "\($0)k" }.joined(separator: ", ")))", key: .audioBitrate)
        }
        try validateThumbnails(naming: naming)
        try validateAudioTracks(naming: naming)
        try validateEncryption(naming: naming)
        if interstitial != nil, interstitialList != nil {
            throw naming.error("give either \(name(.interstitial)) or \(name(.interstitialList)), not both", key: .interstitialList)
        }
        if loop == true && input == "-" {
            throw naming.error("\(name(.loop)) needs a file: standard input cannot be rewound", key: .loop)
        }
    }
}

extension StreamOptions {
    /// The rules between the encryption options: which key source each scheme needs, and which go together.
    func validateEncryption(naming: OptionNaming) throws(ConfigError) {
        func name(_ key: CodingKeys) -> String { naming.name(key) }
        if encrypt == nil, key != nil || keyPeriod != nil {
            throw naming.error("\(name(key != nil ? .key : .keyPeriod)) needs \(name(.encrypt)) aes-128", key: key != nil ? .key : .keyPeriod)
        }
        if drm != nil, encrypt?.isSampleEncryption != true {
            throw naming.error("\(name(.drm)) needs \(name(.encrypt)) cbcs or cenc", key: .drm)
        }
        if keyPeriod != nil, key?.keyID != nil {
            throw naming.error("\(name(.keyPeriod)) derives each period's KID and key from \(name(.key)) KEY: give the key alone, not KID:KEY (or a \(name(.cpix)) document with key periods)", key: .keyPeriod)
        }
        if trackKeys != nil, encrypt?.isSampleEncryption != true {
            throw naming.error("\(name(.trackKeys)) needs \(name(.encrypt)) cbcs or cenc", key: .trackKeys)
        }
        if trackKeys != nil, cpix != nil || key?.keyID != nil {
            throw naming.error("\(name(.trackKeys)) derives each track type's KID and key from \(name(.key)) KEY or asks \(name(.keyServer)) for them: give the key alone, not KID:KEY or \(name(.cpix)) (a CPIX document's usage rules say which keys are for which tracks)", key: .trackKeys)
        }
        if clearLead != nil, encrypt?.isSampleEncryption != true {
            throw naming.error("\(name(.clearLead)) needs \(name(.encrypt)) cbcs or cenc", key: .clearLead)
        }
        if cpix != nil, encrypt?.isSampleEncryption != true {
            throw naming.error("\(name(.cpix)) needs \(name(.encrypt)) cbcs or cenc", key: .cpix)
        }
        if cpixKey != nil, cpix == nil, keyServer == nil {
            throw naming.error("\(name(.cpixKey)) is the private key of a \(name(.cpix)) document's recipient: give \(name(.cpix)) too", key: .cpixKey)
        }
        if cpixCert != nil, keyServer == nil || cpixKey == nil {
            throw naming.error("\(name(.cpixCert)) asks \(name(.keyServer)) to encrypt its keys for this certificate: give \(name(.keyServer)) and \(name(.cpixKey)) too", key: .cpixCert)
        }
        if cpixKey != nil, keyServer != nil, cpixCert == nil {
            throw naming.error("\(name(.cpixKey)) with \(name(.keyServer)) needs \(name(.cpixCert)), the certificate the server encrypts the keys for", key: .cpixKey)
        }
        if cpix != nil, key != nil {
            throw naming.error("\(name(.cpix)) and \(name(.key)) both give the key: use one", key: .cpix)
        }
        if keyServer != nil, encrypt == nil {
            throw naming.error("\(name(.keyServer)) needs \(name(.encrypt)) (aes-128, cbcs or cenc)", key: .keyServer)
        }
        if keyServer != nil, key != nil || cpix != nil {
            throw naming.error("\(name(.keyServer)) and \(name(key != nil ? .key : .cpix)) both give the key: use one", key: .keyServer)
        }
        if keyServer == nil, keyServerCa != nil || keyServerHeader != nil {
            let k: CodingKeys = keyServerCa != nil ? .keyServerCa : .keyServerHeader
            throw naming.error("\(name(k)) needs \(name(.keyServer))", key: k)
        }
        if let encrypt, encrypt.isSampleEncryption, key == nil, cpix == nil, keyServer == nil {
            throw naming.error("\(name(.encrypt)) \(encrypt) needs \(name(.key)) KID:KEY, $HLS_ORIGIN_KEY, \(name(.cpix)) or \(name(.keyServer)): a DRM licence server must know the key (the origin serves none)", key: .encrypt)
        }
        if encrypt == .aes128, key?.keyID != nil {
            throw naming.error("\(name(.key)) KID:KEY is for \(name(.encrypt)) cbcs or cenc; aes-128 takes the key alone", key: .key)
        }
    }
}

extension StreamOptions {
    /// The thumbnail options' ranges.
    func validateThumbnails(naming: OptionNaming) throws(ConfigError) {
        if let thumbnailInterval {
            do throws(OptionError) { try thumbnailInterval.check(within: Self.thumbnailIntervals) } catch {
                throw naming.error(error.message(option: naming.name(.thumbnailInterval)), key: .thumbnailInterval)
            }
        }
        if let grid = thumbnailGrid {
            guard let c = grid.width, let r = grid.height, Self.thumbnailGridSides.contains(c), Self.thumbnailGridSides.contains(r) else {
                throw naming.error("\(naming.name(.thumbnailGrid)) takes COLUMNSxROWS, each 1-20 (e.g. 5x5)", key: .thumbnailGrid)
            }
        }
        if let w = thumbnailWidth, !Self.thumbnailWidths.contains(w) {
            throw naming.error("\(naming.name(.thumbnailWidth)) must be 16-1080 pixels", key: .thumbnailWidth)
        }
    }
}
