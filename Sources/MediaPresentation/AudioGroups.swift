import HLS

/// The `EXT-X-MEDIA:TYPE=AUDIO` groups of a multivariant playlist, from its renditions (RFC 8216bis §4.4.6.1):
///
/// - each audio rendition is a member with its `URI`; its `NAME`, `LANGUAGE` and `DEFAULT` come from its
///   `AudioLabel` (without one: the rendition's name, and the group's first member is the default);
/// - a muxed rendition with a label and an `audioGroup` is the member whose audio is inside the variant: "If the
///   media type is VIDEO or AUDIO, a missing URI attribute indicates that the media data for this Rendition is
///   included in the Media Playlist of any EXT-X-STREAM-INF tag referencing this EXT-X-MEDIA tag" (§4.4.6.1 URI);
///   it is the default a plain client plays.
///
/// A group lists its default member first, then the others in the renditions' order; groups in order of appearance.
///
/// Every member is `AUTOSELECT=YES` (a player may choose it by the user's language) and carries `CHANNELS` from its
/// audio track; audio description says so in `CHARACTERISTICS` (`AudioLabel.Role.characteristics`). `peak`/`average`: the largest bit rates among a group's members with a URI (what a variant adds to
/// its own, §4.4.6.2 BANDWIDTH); `codecs`: each distinct codec of those members, once.
struct AudioGroups {
    var media: [MediaRendition] = []
    var peak: [String: Int] = [:]
    var average: [String: Int] = [:]
    var codecs: [String: [String]] = [:]

    init<P>(_ renditions: [Rendition], _ snapshots: [WindowSnapshot<P>], _ stats: [VariantStatistics], uriQuery: String) {
        for (i, r) in renditions.enumerated() where r.kind == .muxed {
            guard let group = r.audioGroup, let label = r.audioLabel,
                  let track = snapshots[i].inits.last?.tracks.first(where: { $0.kind == .audio }) else { continue }
            media.append(MediaRendition(type: .audio, groupID: group, name: label.name, language: r.language,
                                        isDefault: label.isDefault, autoselect: true, channels: track.hlsChannels,
                                        characteristics: label.role.characteristics))
            if codecs[group] == nil { codecs[group] = [] }
        }
        for (i, r) in renditions.enumerated() where r.kind == .audio {
            let group = r.audioGroup ?? "audio"
            let first = codecs[group] == nil
            let track = snapshots[i].inits.last?.tracks.first
            media.append(MediaRendition(type: .audio, groupID: group, name: r.audioLabel?.name ?? r.name,
                                        language: r.language, isDefault: r.audioLabel?.isDefault ?? first, autoselect: true,
                                        channels: track.map(\.hlsChannels),
                                        uri: SuffixedScheme(r.scheme, uriQuery).playlistURI,
                                        characteristics: r.audioLabel?.role.characteristics))
            peak[group] = max(peak[group] ?? 0, stats[i].peakBitRate)
            average[group] = max(average[group] ?? 0, stats[i].averageBitRate)
            for c in PlaylistBuilder.codecs(snapshots[i]).split(separator: ",").map(String.init)
            where !(codecs[group] ?? []).contains(c) {
                codecs[group, default: []].append(c)
            }
            if codecs[group] == nil { codecs[group] = [] }
        }
        // The default member first in its group (a menu lists it first); otherwise the renditions' order.
        var groupOrder: [String] = []
        for m in media where !groupOrder.contains(m.groupID) { groupOrder.append(m.groupID) }
        media = groupOrder.flatMap { g in
            media.filter { $0.groupID == g && $0.isDefault } + media.filter { $0.groupID == g && !$0.isDefault }
        }
    }
}

extension AudioLabel.Role {
    /// `CHARACTERISTICS` (RFC 8216bis §4.4.6.1): audio description is `public.accessibility.describes-video` (the UTI
    /// Apple's players select for users who ask for audio descriptions); the other roles have none.
    var characteristics: String? { self == .description ? "public.accessibility.describes-video" : nil }
}
