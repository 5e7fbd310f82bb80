//! Sizes and durations as users type them: `4k`, `1GiB`, `30s`, `2m`, `500ms`.
//!
//! Sizes are binary, as in fio: `4k` = 4096, `1G` = `1GiB` = 2^30. A bare duration number is
//! seconds. A duration is at most [`MAX_DURATION`], so that every sum and product of the
//! durations a run is made of (rounds times their count, ramp plus runtime, in nanoseconds)
//! stays far inside 64 bits.

use serde::{Deserialize, Deserializer};
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// Text that starts like an option: the value of the option before it is missing.
fn looks_like_an_option(t: &str) -> Option<String> {
    let second = t.strip_prefix('-')?.chars().next();
    (!second.is_some_and(|c| c.is_ascii_digit() || c == '.'))
        .then(|| format!("'{t}' is an option, not a value; give the option before it a value"))
}

/// A place the user names (a target, an output directory): resolved once, the links in it
/// followed now, so that storbench's files below it are reached with no link at any step.
pub fn place(s: &str) -> Result<std::path::PathBuf, String> {
    crate::files::resolve(std::path::Path::new(s)).map_err(|e| e.to_string())
}

/// A file the user names for storbench to write (a database, a CSV): its directory resolved
/// once, its own name kept, so that a link there is refused, not followed.
pub fn file_place(s: &str) -> Result<std::path::PathBuf, String> {
    crate::files::resolve_parent(std::path::Path::new(s)).map_err(|e| e.to_string())
}

/// Free text for a name or a description: anything but control characters (a NUL or an
/// escape sequence would reach every report and terminal that shows it).
pub fn plain_text(s: &str) -> Result<String, String> {
    match storbench_report::text::control_char(s) {
        None => Ok(s.to_owned()),
        Some(c) => Err(format!("it holds a control character (U+{:04X}); write plain text", u32::from(c))),
    }
}

/// A byte count, at most [`MAX_BYTES`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct ByteSize(pub u64);

/// `s` trimmed, refused where it is an option given in a value's place or negative (`what`
/// says what the value is instead).
fn not_negative<'a>(s: &'a str, what: &str) -> Result<&'a str, String> {
    let t = s.trim();
    if let Some(e) = looks_like_an_option(t) {
        return Err(e);
    }
    if t.starts_with('-') {
        return Err(format!("'{s}' is negative; {what}"));
    }
    Ok(t)
}

/// The largest size any option takes: 1 EiB (2^60 bytes), more than any storage holds. Sums
/// of up to fifteen sizes, and every size in bytes, pages or sectors, stay inside 64 bits, so
/// no check on sizes can wrap.
pub const MAX_BYTES: u64 = 1 << 60;

impl FromStr for ByteSize {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let t = not_negative(s, "a size is a positive number such as 4k or 1GiB")?;
        match parse_size::Config::new().with_binary().parse_size(t) {
            Ok(n) if n <= MAX_BYTES => Ok(ByteSize(n)),
            Ok(_) | Err(parse_size::Error::PosOverflow) => Err(format!(
                "'{s}' is more than 1 EiB, larger than any storage; give a size such as 4k, 64MiB or 2T"
            )),
            Err(e) => Err(format!("'{s}' is not a size ({e}); write it like 512, 4k, 64KiB or 2G")),
        }
    }
}

impl fmt::Display for ByteSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&human_bytes(self.0))
    }
}

/// `4096` → `4KiB`, `1610612736` → `1.5GiB`.
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = n as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit < UNITS.len() - 1 {
        v /= 1024.0;
        unit += 1;
    }
    if v.fract() == 0.0 { format!("{v}{}", UNITS[unit]) } else { format!("{v:.1}{}", UNITS[unit]) }
}

/// The longest duration any option takes: a year, longer than any test.
pub const MAX_DURATION: Duration = Duration::from_secs(365 * 86_400);

/// `d` when it is at most [`MAX_DURATION`]; `s` is the text it came from.
fn at_most_a_year(s: &str, d: Option<Duration>) -> Result<Duration, String> {
    match d {
        Some(d) if d <= MAX_DURATION => Ok(d),
        _ => Err(format!("'{s}' is longer than any test runs; a duration is at most 365 days (365d)")),
    }
}

/// A duration; a bare number means seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seconds(pub Duration);

impl FromStr for Seconds {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let t = not_negative(s, "a duration is zero or more, such as 30s or 2m")?;
        if let Ok(secs) = t.parse::<f64>() {
            if secs.is_nan() {
                return Err(format!("'{s}' is not a number of seconds; write it like 30, 30s, 2m or 1h30m"));
            }
            return at_most_a_year(s, Duration::try_from_secs_f64(secs).ok()).map(Seconds);
        }
        match humantime::parse_duration(t) {
            Ok(d) => at_most_a_year(s, Some(d)).map(Seconds),
            Err(humantime::DurationError::NumberOverflow) => at_most_a_year(s, None).map(Seconds),
            Err(e) => Err(format!("'{s}' is not a duration ({e}); write it like 30, 30s, 2m or 1h30m")),
        }
    }
}

impl fmt::Display for Seconds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", humantime::format_duration(self.0))
    }
}

/// A duration as DVD Store writes it: a bare number means minutes (`1.5` = 90 s); units work
/// too (`90s`, `2m`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Minutes(pub Duration);

impl FromStr for Minutes {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().parse::<f64>() {
            Ok(m) if m >= 0.0 => at_most_a_year(s, Duration::try_from_secs_f64(m * 60.0).ok()).map(Minutes),
            Ok(_) => {
                Err(format!("'{s}' is negative; a duration is zero or more, such as 5 (minutes) or 90s"))
            }
            Err(_) => s.parse::<Seconds>().map(|d| Minutes(d.0)),
        }
    }
}

/// DS3's yes/no values: Y, N, yes, no, true, false (any case).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct YesNo(pub bool);

impl FromStr for YesNo {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "y" | "yes" | "true" | "1" => Ok(YesNo(true)),
            "n" | "no" | "false" | "0" => Ok(YesNo(false)),
            _ => Err(format!("'{s}' is not yes or no; write Y or N")),
        }
    }
}

/// A size or duration in a plan file: text (`"4k"`, `"30s"`) or a bare number (bytes,
/// seconds, or DS3's minutes), read the way the command line reads it.
#[derive(Deserialize)]
#[serde(untagged)]
enum TextOrNumber {
    Text(String),
    Int(u64),
    Float(f64),
}

impl TextOrNumber {
    fn into_text(self) -> String {
        match self {
            TextOrNumber::Text(s) => s,
            TextOrNumber::Int(n) => n.to_string(),
            TextOrNumber::Float(x) => x.to_string(),
        }
    }
}

macro_rules! deserialize_from_str {
    ($t:ty) => {
        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = TextOrNumber::deserialize(d)?.into_text();
                s.parse().map_err(serde::de::Error::custom)
            }
        }
    };
}
deserialize_from_str!(ByteSize);
deserialize_from_str!(Seconds);
deserialize_from_str!(Minutes);

/// Written as it is read: `30s`, `2m`.
impl serde::Serialize for Seconds {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for YesNo {
    /// A plan file may write `true`/`false` or DS3's "Y"/"N".
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Bool(bool),
            Text(String),
        }
        match Raw::deserialize(d)? {
            Raw::Bool(b) => Ok(YesNo(b)),
            Raw::Text(s) => s.parse().map_err(serde::de::Error::custom),
        }
    }
}

/// A plan gives a value as the command line does, as text, parsed by the type's `FromStr`
/// (whose message names the problem and the fix). For the command line's own types (the
/// caller's crate needs serde).
#[macro_export]
macro_rules! deserialize_from_text {
    ($t:ty) => {
        impl<'de> serde::Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<$t, D::Error> {
                let text = <String as serde::Deserialize>::deserialize(d)?;
                text.parse().map_err(serde::de::Error::custom)
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_binary_like_fio() {
        assert_eq!("4k".parse::<ByteSize>().unwrap().0, 4096);
        assert_eq!("64KiB".parse::<ByteSize>().unwrap().0, 65536);
        assert_eq!("1G".parse::<ByteSize>().unwrap().0, 1 << 30);
        assert_eq!("512".parse::<ByteSize>().unwrap().0, 512);
        assert!("-4k".parse::<ByteSize>().unwrap_err().contains("negative"));
        assert!("lots".parse::<ByteSize>().is_err());
    }

    #[test]
    fn a_size_past_an_exbibyte_is_refused_not_wrapped() {
        assert_eq!("1EiB".parse::<ByteSize>().unwrap().0, MAX_BYTES);
        let near =
            ["18446744073709551615", "18446744073709551614", "9223372036854775807", "9223372036854775808"];
        for huge in
            near.iter().copied().chain(["1152921504606846977", "2E", "16EiB", "99999999999999999999k"])
        {
            let e = huge.parse::<ByteSize>().unwrap_err();
            assert!(e.contains("more than 1 EiB"), "{huge}: {e}");
        }
    }

    #[test]
    fn durations_take_units_and_bare_numbers_are_seconds() {
        assert_eq!("30".parse::<Seconds>().unwrap().0, Duration::from_secs(30));
        assert_eq!("2m".parse::<Seconds>().unwrap().0, Duration::from_secs(120));
        assert_eq!("500ms".parse::<Seconds>().unwrap().0, Duration::from_millis(500));
        assert_eq!("1.5".parse::<Seconds>().unwrap().0, Duration::from_millis(1500));
        assert!("-5s".parse::<Seconds>().unwrap_err().contains("negative"));
        assert!("-.5".parse::<Seconds>().unwrap_err().contains("negative"));
        assert!("--buffered".parse::<Seconds>().unwrap_err().contains("is an option, not a value"));
        assert!("--size".parse::<ByteSize>().unwrap_err().contains("is an option, not a value"));
        assert!("soon".parse::<Seconds>().is_err());
    }

    #[test]
    fn a_duration_longer_than_a_year_is_refused_not_wrapped() {
        assert_eq!("365d".parse::<Seconds>().unwrap().0, MAX_DURATION);
        for huge in ["1e18", "366d", "99999999999999999999s", "inf", "1e400"] {
            let e = huge.parse::<Seconds>().unwrap_err();
            assert!(e.contains("at most 365 days"), "{huge}: {e}");
        }
        assert!("NaN".parse::<Seconds>().unwrap_err().contains("not a number"));
        assert!("1e18".parse::<Minutes>().unwrap_err().contains("at most 365 days"));
    }

    #[test]
    fn ds3_durations_are_minutes_unless_they_have_a_unit() {
        assert_eq!("5".parse::<Minutes>().unwrap().0, Duration::from_secs(300));
        assert_eq!("1.5".parse::<Minutes>().unwrap().0, Duration::from_secs(90));
        assert_eq!("90s".parse::<Minutes>().unwrap().0, Duration::from_secs(90));
        assert!("-1".parse::<Minutes>().unwrap_err().contains("negative"));
        assert_eq!("Y".parse::<YesNo>().unwrap(), YesNo(true));
        assert_eq!("n".parse::<YesNo>().unwrap(), YesNo(false));
        assert!("maybe".parse::<YesNo>().is_err());
    }

    #[test]
    fn byte_counts_read_naturally() {
        assert_eq!(human_bytes(4096), "4KiB");
        assert_eq!(human_bytes(3 << 29), "1.5GiB");
        assert_eq!(human_bytes(100), "100B");
    }
}
