#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension WallClock {
    /// ISO 8601 UTC with milliseconds, `2026-11-22T04:20:26.123Z`: the form of `EXT-X-PROGRAM-DATE-TIME`
    /// (RFC 8216 §4.3.2.6) and of an MPD's `xs:dateTime` values (ISO/IEC 23009-1), computed without Foundation.
    public var iso8601: String {
        let (days, msOfDay) = Self.floorDivMod(millisecondsSince1970, 86_400_000)
        let (y, m, d) = Self.civilFromDays(days)
        let h = msOfDay / 3_600_000
        let min = msOfDay / 60_000 % 60
        let s = msOfDay / 1000 % 60
        let milli = msOfDay % 1000
        return Self.pad(y, 4) + "-" + Self.pad(m, 2) + "-" + Self.pad(d, 2) + "T" + Self.pad(h, 2) + ":" + Self.pad(min, 2)
            + ":" + Self.pad(s, 2) + "." + Self.pad(milli, 3) + "Z"
    }

    /// HTTP's IMF-fixdate (RFC 9110 §5.6.7), `Sun, 06 Nov 1994 08:49:37 GMT`, for `Last-Modified` and `Date`.
    public var httpDate: String {
        let (days, msOfDay) = Self.floorDivMod(millisecondsSince1970, 86_400_000)
        let (y, m, d) = Self.civilFromDays(days)
        // 1970-01-01 was a Thursday.
        let weekday = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][Int(Self.floorDivMod(days, 7).1)]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        let s = msOfDay / 1000
        return weekday + ", " + Self.pad(d, 2) + " " + months[Int(m) - 1] + " " + Self.pad(y, 4) + " " + Self.pad(s / 3600, 2)
            + ":" + Self.pad(s / 60 % 60, 2) + ":" + Self.pad(s % 60, 2) + " GMT"
    }

    /// The wall clock now.
    public static var now: WallClock {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return WallClock(millisecondsSince1970: Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000)
    }

    private static func pad(_ v: Int64, _ width: Int) -> String {
        let t = String(v.magnitude)
        let body = t.count < width ? String(repeating: "0", count: width - t.count) + t : t
        return v < 0 ? "-" + body : body
    }

    private static func floorDivMod(_ a: Int64, _ b: Int64) -> (Int64, Int64) {
        var q = a / b, r = a % b
        if r < 0 { q -= 1; r += b }
        return (q, r)
    }

    /// Howard Hinnant's `civil_from_days`: proleptic Gregorian date of a day count since 1970-01-01.
    static func civilFromDays(_ z0: Int64) -> (Int64, Int64, Int64) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let y = yoe + era * 400
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (m <= 2 ? y + 1 : y, m, d)
    }
}
