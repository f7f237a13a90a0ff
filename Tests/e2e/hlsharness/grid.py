"""Segment durations of a stream the origin encodes (IDRs forced on the segment grid)."""


def encoded_grid_problems(durations, segment=1.0, part=1 / 3, tolerance=1e-3, ll=True, includes_last=True):
    """Problems with the durations of an encoded stream's segments, from sequence 0 on.

    With LL-HLS parts the first segment is one part long (the encoder adds a keyframe there, so every client has a
    complete segment to start with after one part) and the second ends on the segment grid; every other segment
    is exactly `segment` long (exact to the microseconds EXTINF shows, or to the frame rate's rounding), except the
    last one when the stream ended."""
    d = list(durations)
    if includes_last:
        d = d[:-1]
    problems = []
    if ll:
        if len(d) >= 1 and abs(d[0] - part) > tolerance:
            problems.append(f"first segment {d[0]:.6f}s, expected one part ({part:.6f}s)")
        if len(d) >= 2 and abs(d[0] + d[1] - segment) > tolerance:
            problems.append(f"second segment {d[1]:.6f}s does not end on the {segment}s grid")
        rest = d[2:]
    else:
        rest = d
    problems += [f"segment {i}: {x:.6f}s, expected {segment}s" for i, x in enumerate(rest, 2 if ll else 0)
                 if abs(x - segment) > tolerance]
    return problems
