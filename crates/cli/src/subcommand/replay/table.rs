//! replay's tables on the terminal: the run in a line, each request type's calls and response
//! times, each source's calls, and the lines that could not be read.

use crate::output::new_table;
use storbench_report::{ReplayResults, Results, Summary};

/// A replay: its figures, then a row per request type and per source.
pub fn replay_table(s: &Summary) -> String {
    let Results::Replay(r) = &s.results else { return String::new() };
    let mut out = vec![head(r).to_string(), types(r).to_string()];
    if r.by_source.len() > 1 {
        out.push(sources(r).to_string());
    }
    if let Some(cold) = r.cold_start_s.filter(|&c| c > 0.0) {
        out.push(format!("cold start: the first {cold:.0} s, until the p99 response time settled"));
    }
    out.extend(crate::subcommand::io::table::steady_line(s));
    out.extend(ReplayResults::unmatched_said(&r.unmatched_paths));
    out.extend(ReplayResults::not_sent_said(&r.not_sent));
    out.extend(ReplayResults::allowed_said(&r.allowed_statements));
    out.extend(r.backwards_said());
    if r.unread_lines > 0 {
        out.push(format!("{} line(s) could not be read as requests:", r.unread_lines));
        out.extend(r.first_unread.iter().map(|u| format!("  {} line {}: {}", u.source, u.line, u.why)));
    }
    out.join("\n")
}

fn head(r: &ReplayResults) -> comfy_table::Table {
    let mut t = new_table(&["mode", "calls", "calls per s", "errors", "seconds", "lateness p99"]);
    let mode = match (r.speed, r.in_flight) {
        (Some(x), _) => format!("{} x{x}", r.mode),
        (None, Some(n)) => format!("{} ({n} in flight)", r.mode),
        _ => r.mode.clone(),
    };
    t.add_row(vec![
        mode,
        format!("{} of {}", r.calls, r.recorded_calls),
        format!("{:.1}", r.calls_per_sec),
        r.errors.total.to_string(),
        format!("{:.1}", r.elapsed_s),
        r.lateness_ms.as_ref().map_or_else(|| "n/a".into(), |l| ms(Some(l.p99))),
    ]);
    t
}

fn types(r: &ReplayResults) -> comfy_table::Table {
    let mut t = new_table(&["request type", "calls", "errors", "mean", "p50", "p95", "p99", "max"]);
    for (name, x) in &r.by_type {
        t.add_row(vec![
            name.clone(),
            x.calls.to_string(),
            x.errors.to_string(),
            ms(x.mean_ms),
            ms(x.p50_ms),
            ms(x.p95_ms),
            ms(x.p99_ms),
            ms(x.max_ms),
        ]);
    }
    t
}

fn sources(r: &ReplayResults) -> comfy_table::Table {
    let mut t = new_table(&["source", "calls", "calls per s", "errors"]);
    for s in &r.by_source {
        t.add_row(vec![
            s.name.clone(),
            s.calls.to_string(),
            format!("{:.1}", s.calls_per_sec),
            s.errors.to_string(),
        ]);
    }
    t
}

fn ms(v: Option<f64>) -> String {
    v.map_or_else(|| "n/a".into(), |v| crate::output::latency(v * 1e6))
}
