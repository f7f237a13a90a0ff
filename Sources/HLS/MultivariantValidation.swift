/// The RFC 8216bis rules a playlist checker applies to alternative Renditions (§4.4.6.1, §4.4.6.1.1,
/// §4.4.6.2, §4.4.6.2.1). `render()` never checks; call `validate()` in tests or before publishing.
extension MultivariantPlaylist {
    /// Every violated rule, one human-readable line each, in playlist order; empty when the renditions and
    /// their references are valid.
    public func validate() -> [String] {
        quotedStringProblems() + renditionProblems() + referenceProblems()
    }

    private func describe(_ m: MediaRendition) -> String { "EXT-X-MEDIA TYPE=\(m.type.rawValue) GROUP-ID=\"\(m.groupID)\" NAME=\"\(m.name)\"" }

    private func quotedStringProblems() -> [String] {
        var problems: [String] = []
        // §4.2: "The following characters MUST NOT appear in a quoted-string: line feed (0xA), carriage return
        // (0xD), or double quote (0x22)."
        func checkQuoted(_ value: String?, _ attribute: String, _ owner: String) {
            guard let value, value.contains(where: { $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return }
            problems.append("\(owner): \(attribute) contains a double quote, CR or LF (§4.2)")
        }
        for m in media {
            let owner = describe(m)
            checkQuoted(m.groupID, "GROUP-ID", owner)
            checkQuoted(m.name, "NAME", owner)
            checkQuoted(m.language, "LANGUAGE", owner)
            checkQuoted(m.channels, "CHANNELS", owner)
            checkQuoted(m.characteristics, "CHARACTERISTICS", owner)
            checkQuoted(m.instreamID, "INSTREAM-ID", owner)
            checkQuoted(m.uri, "URI", owner)
        }
        for v in variants {
            checkQuoted(v.audioGroup, "AUDIO", "EXT-X-STREAM-INF \(v.uri)")
            checkQuoted(v.subtitlesGroup, "SUBTITLES", "EXT-X-STREAM-INF \(v.uri)")
        }
        for f in iFrameStreams { checkQuoted(f.uri, "URI", "EXT-X-I-FRAME-STREAM-INF") }
        return problems
    }

    /// The rules on each rendition and its group.
    private func renditionProblems() -> [String] {
        var problems: [String] = []
        // Groups: "A set of one or more EXT-X-MEDIA tags with the same GROUP-ID value and the same TYPE value
        // defines a Group of Renditions." (§4.4.6.1.1)
        struct GroupKey: Hashable { let type: MediaRendition.MediaType; let id: String }
        var defaults: [GroupKey: Int] = [:]
        var names: [GroupKey: Set<String>] = [:]
        for m in media {
            let owner = describe(m)
            let key = GroupKey(type: m.type, id: m.groupID)
            // §4.4.6.1.1: "All EXT-X-MEDIA tags in the same Group MUST have different NAME attributes."
            if !names[key, default: []].insert(m.name).inserted {
                problems.append("\(owner): NAME is not unique in its group (§4.4.6.1.1)")
            }
            if m.isDefault {
                // §4.4.6.1.1: "A Group MUST NOT have more than one member with a DEFAULT attribute of YES."
                defaults[key, default: 0] += 1
                if defaults[key] == 2 {
                    problems.append("\(owner): second DEFAULT=YES in group \"\(m.groupID)\" (§4.4.6.1.1)")
                }
                // §4.4.6.1: "If the AUTOSELECT attribute is present, its value MUST be YES if the value of the
                // DEFAULT attribute is YES." (render() always writes AUTOSELECT.)
                if !m.autoselect { problems.append("\(owner): DEFAULT=YES requires AUTOSELECT=YES (§4.4.6.1)") }
            }
            switch m.type {
            case .closedCaptions:
                // §4.4.6.1: "If the TYPE is CLOSED-CAPTIONS, the URI attribute MUST NOT be present."
                if m.uri != nil { problems.append("\(owner): URI must be absent for CLOSED-CAPTIONS (§4.4.6.1)") }
                // §4.4.6.1 INSTREAM-ID: "This attribute is REQUIRED if the TYPE attribute is CLOSED-CAPTIONS".
                if m.instreamID == nil { problems.append("\(owner): INSTREAM-ID is required for CLOSED-CAPTIONS (§4.4.6.1)") }
            case .subtitles:
                // §4.4.6.2.1: "The URI attribute of the EXT-X-MEDIA tag is REQUIRED if the media type is
                // SUBTITLES".
                if m.uri == nil { problems.append("\(owner): URI is required for SUBTITLES (§4.4.6.2.1)") }
            case .audio, .video:
                break
            }
            // §4.4.6.1 FORCED: "The FORCED attribute MUST NOT be present unless the TYPE is SUBTITLES."
            if m.forced && m.type != .subtitles {
                problems.append("\(owner): FORCED is allowed only for SUBTITLES (§4.4.6.1)")
            }
            // §4.4.6.1: "The CHANNELS attribute MUST NOT be present unless the TYPE is AUDIO."
            if m.channels != nil && m.type != .audio {
                problems.append("\(owner): CHANNELS is allowed only for AUDIO (§4.4.6.1)")
            }
        }
        return problems
    }

    /// The rules on the variants' references to groups, and between groups of one type.
    private func referenceProblems() -> [String] {
        var problems: [String] = []
        // §4.4.6.2 AUDIO: "It MUST match the value of the GROUP-ID attribute of an EXT-X-MEDIA tag elsewhere in
        // the Multivariant Playlist whose TYPE attribute is AUDIO."
        let audioGroups = Set(media.filter { $0.type == .audio }.map(\.groupID))
        for v in variants {
            if let a = v.audioGroup, !audioGroups.contains(a) {
                problems.append("EXT-X-STREAM-INF \(v.uri): AUDIO=\"\(a)\" matches no EXT-X-MEDIA TYPE=AUDIO GROUP-ID (§4.4.6.2)")
            }
        }
        // §4.4.6.2 SUBTITLES: "It MUST match the value of the GROUP-ID attribute of an EXT-X-MEDIA tag elsewhere in
        // the Multivariant Playlist whose TYPE attribute is SUBTITLES."
        let subtitleGroups = Set(media.filter { $0.type == .subtitles }.map(\.groupID))
        for v in variants {
            if let g = v.subtitlesGroup, !subtitleGroups.contains(g) {
                problems.append("EXT-X-STREAM-INF \(v.uri): SUBTITLES=\"\(g)\" matches no EXT-X-MEDIA TYPE=SUBTITLES GROUP-ID (§4.4.6.2)")
            }
        }
        // §4.4.6.1.1: "A Playlist MAY contain multiple Groups of the same TYPE in order to provide multiple encodings
        // of that media type. If it does so, each Group of the same TYPE MUST have the same set of members, and each
        // corresponding member MUST have identical attributes with the exception of the URI and CHANNELS attributes."
        let byGroup = Dictionary(grouping: media.filter { $0.type == .subtitles }, by: \.groupID)
        if let (first, members) = byGroup.sorted(by: { $0.key < $1.key }).first {
            func key(_ m: MediaRendition) -> String { "\(m.name)|\(m.language ?? "")|\(m.isDefault)|\(m.autoselect)|\(m.forced)" }
            let reference = Set(members.map(key))
            for (g, other) in byGroup where g != first && Set(other.map(key)) != reference {
                problems.append("EXT-X-MEDIA TYPE=SUBTITLES GROUP-ID=\"\(g)\": not the same members as group \"\(first)\" (§4.4.6.1.1)")
            }
        }
        // §4.4.6.2 CLOSED-CAPTIONS: "If the value is a quoted-string, it MUST match the value of the GROUP-ID attribute
        // of an EXT-X-MEDIA tag elsewhere in the Playlist whose TYPE attribute is CLOSED-CAPTIONS [...]. If the value
        // is the enumerated-string value NONE, all EXT-X-STREAM-INF tags MUST have this attribute with a value of NONE".
        let captionGroups = Set(media.filter { $0.type == .closedCaptions }.map(\.groupID))
        for v in variants {
            if case .group(let g)? = v.closedCaptions, !captionGroups.contains(g) {
                problems.append("EXT-X-STREAM-INF \(v.uri): CLOSED-CAPTIONS=\"\(g)\" matches no EXT-X-MEDIA TYPE=CLOSED-CAPTIONS GROUP-ID (§4.4.6.2)")
            }
        }
        if variants.contains(where: { $0.closedCaptions == ClosedCaptionsReference.none }),
           let other = variants.first(where: { $0.closedCaptions != ClosedCaptionsReference.none }) {
            problems.append("EXT-X-STREAM-INF \(other.uri): CLOSED-CAPTIONS must be NONE on every variant once one says NONE (§4.4.6.2)")
        }
        return problems
    }
}
