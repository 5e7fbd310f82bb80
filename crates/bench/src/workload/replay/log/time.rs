//! Timestamps as logs write them (`2026-11-26 05:04:54.418 UTC`, `2026-11-26T05:04:54.418Z`,
//! `251126  5:04:54`), to nanoseconds since 1970. A zone name is taken as the log's own (every
//! line of a log is in it, and a replay needs only the differences); a numeric offset is applied.

/// Nanoseconds since 1970 of `YYYY-MM-DD[ T]HH:MM:SS[.fraction][ ZONE|Z|±HH[:MM]]`.
pub fn parse_iso(text: &str) -> Option<i128> {
    let t = text.trim();
    let date = t.get(..10)?;
    let (y, m, d) =
        (date.get(..4)?.parse().ok()?, date.get(5..7)?.parse().ok()?, date.get(8..10)?.parse().ok()?);
    if !matches!(t.as_bytes().get(4..5)?, b"-") || t.as_bytes().get(7) != Some(&b'-') {
        return None;
    }
    let rest = t.get(10..)?;
    let rest = rest.strip_prefix(['T', ' '])?;
    let (clock, zone) = split_clock(rest);
    Some(civil_ns(y, m, d, clock_ns(clock)?)? - offset_ns(zone.trim())?)
}

/// Nanoseconds since 1970 of MariaDB's `YYMMDD H:MM:SS` (the hour may be padded by a blank).
pub fn parse_yymmdd(text: &str) -> Option<i128> {
    let (date, clock) = text.trim().split_once(char::is_whitespace)?;
    if date.len() != 6 {
        return None;
    }
    let y: i64 = 2000 + date.get(..2)?.parse::<i64>().ok()?;
    let (m, d) = (date.get(2..4)?.parse().ok()?, date.get(4..6)?.parse().ok()?);
    civil_ns(y, m, d, clock_ns(clock.trim())?)
}

fn split_clock(s: &str) -> (&str, &str) {
    let end = s.find(|c: char| !(c.is_ascii_digit() || c == ':' || c == '.')).unwrap_or(s.len());
    s.split_at(end)
}

/// `H:MM:SS[.fraction]` in nanoseconds since midnight.
fn clock_ns(clock: &str) -> Option<i128> {
    let mut parts = clock.splitn(3, ':');
    let h: i128 = parts.next()?.parse().ok()?;
    let m: i128 = parts.next()?.parse().ok()?;
    let sec = parts.next()?;
    let (s, frac) = sec.split_once('.').unwrap_or((sec, ""));
    let s: i128 = s.parse().ok()?;
    if h > 23 || m > 59 || s > 60 || frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let frac_ns: i128 = if frac.is_empty() { 0 } else { format!("{frac:0<9}").parse().ok()? };
    Some(((h * 60 + m) * 60 + s) * 1_000_000_000 + frac_ns)
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

/// Nanoseconds since 1970 of a civil date and a time of day (proleptic Gregorian calendar).
fn civil_ns(y: i64, m: u32, d: u32, day_ns: i128) -> Option<i128> {
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    // Days from 1970-01-01, counting years from March so that a leap day ends a year.
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (i64::from(m) + 9) % 12;
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(i128::from(days) * 86_400 * 1_000_000_000 + day_ns)
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
