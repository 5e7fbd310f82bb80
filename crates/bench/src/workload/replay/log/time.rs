//! Timestamps as logs write them (`2026-11-26 05:04:54.418 UTC`, `2026-11-26T05:04:54.418Z`,
//! `251126  5:04:54`), to nanoseconds since 1970. A zone name is taken as the log's own (every
//! line of a log is in it, and a replay needs only the differences); a numeric offset is applied.

/// Nanoseconds since 1970 of `YYYY-MM-DD[ T]HH:MM:SS[.fraction][ ZONE|Z|±HH[:MM]]`.
pub fn parse_iso(text: &str) -> Option<i128> {
    let t = text.trim();
    let (date, rest) = (t.get(..10)?, t.get(10..)?.strip_prefix(['T', ' '])?);
    let end = rest.find(|c: char| !(c.is_ascii_digit() || c == ':' || c == '.')).unwrap_or(rest.len());
    let (clock, zone) = rest.split_at(end);
    Some(civil_ns(date, clock)? - offset_ns(zone.trim())?)
}

/// Nanoseconds since 1970 of MariaDB's `YYMMDD H:MM:SS` (the hour may be padded by a blank).
pub fn parse_yymmdd(text: &str) -> Option<i128> {
    let (date, clock) = text.trim().split_once(char::is_whitespace)?;
    let (y, m, d) = (date.get(..2)?, date.get(2..4)?, date.get(4..6)?);
    if date.len() != 6 {
        return None;
    }
    civil_ns(&format!("20{y}-{m}-{d}"), &format!("{:0>8}", clock.trim()))
}

/// Nanoseconds since 1970 of a civil date (`YYYY-MM-DD`) and time of day (`HH:MM:SS[.f]`), read
/// as UTC.
fn civil_ns(date: &str, clock: &str) -> Option<i128> {
    let civil: jiff::civil::DateTime = format!("{date}T{clock}").parse().ok()?;
    Some(civil.to_zoned(jiff::tz::TimeZone::UTC).ok()?.timestamp().as_nanosecond())
}

/// A zone's offset east of UTC: numeric (`+01`, `-05:30`, `+0100`), `Z`, or a name (the log's
/// own: 0).
fn offset_ns(zone: &str) -> Option<i128> {
    let Some(sign) =
        zone.strip_prefix('+').map(|z| (1, z)).or_else(|| zone.strip_prefix('-').map(|z| (-1, z)))
    else {
        return Some(0);
    };
    let digits: String = sign.1.chars().filter(char::is_ascii_digit).collect();
    let (h, m): (i128, i128) = match digits.len() {
        2 => (digits.parse().ok()?, 0),
        4 => (digits[..2].parse().ok()?, digits[2..].parse().ok()?),
        _ => return None,
    };
    Some(sign.0 * (h * 60 + m) * 60 * 1_000_000_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: i128 = 1_000_000_000;

    #[test]
    fn log_timestamps_read_as_the_seconds_since_1970_they_are() {
        // 2026-11-26 05:04:54 UTC is 1795669494 s after 1970 (date -u -d ... +%s).
        assert_eq!(parse_iso("2026-11-26 05:04:54.418 UTC"), Some(1_795_669_494 * S + 418_000_000));
        assert_eq!(parse_iso("2026-11-26T05:04:54.418123Z"), Some(1_795_669_494 * S + 418_123_000));
        assert_eq!(parse_iso("2026-11-26 06:04:54 +01"), Some(1_795_669_494 * S));
        assert_eq!(parse_iso("2026-11-26 00:34:54-04:30"), Some(1_795_669_494 * S));
        assert_eq!(parse_iso("2000-02-29 00:00:00 CET"), Some(951_782_400 * S));
        assert_eq!(parse_yymmdd("251126  5:04:54"), Some(1_764_133_494 * S));
        for bad in ["2026-13-01 00:00:00", "2026/11/26 05:04:54", "2026-11-26 25:00:00", "yesterday", ""] {
            assert_eq!(parse_iso(bad), None, "{bad}");
        }
    }
}
