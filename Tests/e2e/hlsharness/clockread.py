"""Reads the test pattern's burnt-in wall clock ("HH:MM:SS.mmm UTC", the time the frame was made) from a picture of
the frame: a decoded frame, or a screenshot of a player showing it. A glass-to-glass latency is then the time the
picture was captured minus the clock it shows.

The digit shapes and the clock's place mirror Sources/TestPattern: `BitmapFont.swift` (5x7 digits) and
`TestPatternGenerator.makeLayout` (the clock at x = margin, y = panelTop + 126/720 of the height, scale
height * 5 / 720). `test_clock_reader` checks this reader against frames decoded from the origin's own segments,
so a change there fails that test, not a measurement."""
import datetime

DIGITS = {
    0: [".###.", "#...#", "#..##", "#.#.#", "##..#", "#...#", ".###."],
    1: ["..#..", ".##..", "..#..", "..#..", "..#..", "..#..", ".###."],
    2: [".###.", "#...#", "....#", "...#.", "..#..", ".#...", "#####"],
    3: ["#####", "...#.", "..#..", "...#.", "....#", "#...#", ".###."],
    4: ["...#.", "..##.", ".#.#.", "#..#.", "#####", "...#.", "...#."],
    5: ["#####", "#....", "####.", "....#", "....#", "#...#", ".###."],
    6: ["..##.", ".#...", "#....", "####.", "#...#", "#...#", ".###."],
    7: ["#####", "....#", "...#.", "..#..", ".#...", ".#...", ".#..."],
    8: [".###.", "#...#", "#...#", ".###.", "#...#", "#...#", ".###."],
    9: [".###.", "#...#", "#...#", ".####", "....#", "...#.", ".##.."],
}
BITS = {d: [c == "#" for row in art for c in row] for d, art in DIGITS.items()}
# "HH:MM:SS.mmm": the character cells that hold digits
DIGIT_CELLS = (0, 1, 3, 4, 6, 7, 9, 10, 11)


def clock_geometry(width, height):
    """(x, y, scale) of the clock's first glyph cell in a width x height frame, in frame pixels."""
    margin = max(2, width * 40 // 1280)
    panel_top = (height * 480 // 720) & ~1
    return margin, panel_top + height * 126 // 720, max(1, height * 5 // 720)


def read_clock(luma, frame_size, place=(1.0, 0.0, 0.0), max_bad_bits=4):
    """Milliseconds since midnight UTC that the clock shows, or None when a digit cannot be read.

    luma(x, y): the picture's luma (0-255) at integer pixel coordinates. frame_size: the frame's (width, height).
    place: (scale, x0, y0): frame pixel (x, y) is at picture pixel (x0 + x * scale, y0 + y * scale)."""
    w, h = frame_size
    cx, cy, s = clock_geometry(w, h)
    k, x0, y0 = place
    digits = []
    for cell in DIGIT_CELLS:
        bits = []
        for r in range(7):
            for c in range(5):
                fx = cx + (cell * 6 + c + 0.5) * s
                fy = cy + (r + 0.5) * s
                bits.append(luma(int(x0 + fx * k), int(y0 + fy * k)) > 128)
        best = min(BITS, key=lambda d: sum(a != b for a, b in zip(BITS[d], bits)))
        if sum(a != b for a, b in zip(BITS[best], bits)) > max_bad_bits:
            return None
        digits.append(best)
    hh, mm, ss = digits[0] * 10 + digits[1], digits[2] * 10 + digits[3], digits[4] * 10 + digits[5]
    ms = digits[6] * 100 + digits[7] * 10 + digits[8]
    if hh > 23 or mm > 59 or ss > 59:
        return None
    return ((hh * 60 + mm) * 60 + ss) * 1000 + ms


def clock_at(ms_of_day, near_unix_s):
    """The Unix time (seconds) of a time of day read from the clock, on the UTC day that puts it nearest
    `near_unix_s` (a capture just after midnight shows a clock from just before it)."""
    day = datetime.datetime.fromtimestamp(near_unix_s, datetime.timezone.utc).replace(hour=0, minute=0, second=0,
                                                                                      microsecond=0).timestamp()
    best = None
    for d in (day - 86400, day, day + 86400):
        t = d + ms_of_day / 1000
        if best is None or abs(t - near_unix_s) < abs(best - near_unix_s):
            best = t
    return best


def contain_place(frame_size, box):
    """`place` for a frame shown in a box (a <video> with object-fit: contain, the box being the screenshot)."""
    w, h = frame_size
    bw, bh = box
    k = min(bw / w, bh / h)
    return k, (bw - w * k) / 2, (bh - h * k) / 2
