//! How a report writes a number: thousands grouped, fewer decimals as it grows, a figure the
//! user gave as given, a percentage. Every page, sentence and decision uses these, so a figure
//! reads the same wherever it appears.

/// A number as a report shows it: thousands separated, with fewer decimals as it grows
/// (2,418,601; 64,973.7; 501.4; 2.35; 0.412; 0.000241).
pub fn num(v: f64) -> String {
    if !v.is_finite() {
        return "—".into();
    }
    let decimals = match v.abs() {
        a if a >= 100_000.0 => 0,
        a if a >= 100.0 => 1,
        a if a >= 1.0 => 2,
        0.0 => 0,
        // Three significant digits below 1 (0.412, 0.000241), so fast latencies keep theirs.
        a => (2 - a.log10().floor() as i32).clamp(3, 12) as usize,
    };
    let text = format!("{:.*}", decimals, v.abs());
    let (int, frac) = text.split_once('.').unwrap_or((&text, ""));
    let grouped = group(int);
    let sign = if v < 0.0 && text.chars().any(|c| c.is_ascii_digit() && c != '0') { "-" } else { "" };
    if frac.is_empty() { format!("{sign}{grouped}") } else { format!("{sign}{grouped}.{frac}") }
}

/// A figure a user gave (a limit, a count) as given: whole numbers grouped without decimals
/// (`20,000`), others as written (`0.5`).
pub fn given(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 { num_grouped(v) } else { v.to_string() }
}

fn num_grouped(v: f64) -> String {
    let grouped = group(&format!("{:.0}", v.abs()));
    if v < 0.0 { format!("-{grouped}") } else { grouped }
}

/// Digits in groups of three: `20000` reads `20,000`.
fn group(digits: &str) -> String {
    let mut grouped = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(c);
    }
    grouped
}

/// A percentage without a sign, to one decimal below 10 and none above.
pub fn pct(v: f64) -> String {
    let a = v.abs();
    if a < 10.0 { format!("{a:.1} %") } else { format!("{a:.0} %") }
}
