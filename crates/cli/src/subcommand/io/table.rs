//! io's tables on the terminal: one job's figures per direction, a profile set's jobs with
//! "% of best".

use crate::output::{errors_line, lag_line, latency, new_table, si};
use comfy_table::Table;
use storbench_report::{DirectionResult, IoResults, Results, Summary};

/// One job: a row per direction that did any I/O (or, when every I/O failed, per direction
/// it tried), then its failed I/Os and steady state.
pub fn job_table(s: &Summary) -> String {
    let rate = rate_cell(s);
    let mut t = io_header("", rate.is_some(), None);
    if let Some(r) = io(s) {
        let read_pct = s.parameters["rwmix_read"].as_f64().unwrap_or(50.0);
        let nothing_done = r.read.ios + r.write.ios == 0;
        let tried = [read_pct > 0.0, read_pct < 100.0];
        for ((label, d), tried) in [("read", &r.read), ("write", &r.write)].into_iter().zip(tried) {
            if d.ios > 0 || (nothing_done && tried && rate.is_some()) {
                t.add_row(io_row(label, d, rate.as_ref()));
            }
        }
        if let Some(f) = r.flush.as_ref().filter(|f| f.ios > 0) {
            t.add_row(io_row("flush", f, rate.as_ref()));
        }
    }
    let lag = io(s).and_then(|r| lag_line(r.schedule_lag_ms.as_ref()));
    let notes = [errors_line(s), steady_line(s), lag];
    t.to_string() + &notes.into_iter().flatten().map(|l| format!("\n{l}")).collect::<String>()
}

/// Under --steady-state, which seconds the table covers and why.
pub fn steady_line(s: &Summary) -> Option<String> {
    let st = s.steady_state.as_ref()?;
    let verdict = if st.reached {
        format!("steady state reached after {} rounds of {} s", st.rounds_run, st.round_s)
    } else {
        format!("steady state NOT reached in {} rounds of {} s", st.rounds_run, st.round_s)
    };
    let pct = |p: Option<f64>| p.map_or("n/a".to_string(), |p| format!("{p:.1} %"));
    Some(format!(
        "{verdict}; figures cover {:.0}-{:.0} s (range {}, slope {})",
        st.window_start_s,
        st.window_end_s,
        pct(st.range_pct),
        pct(st.slope_pct)
    ))
}

/// A profile set: a row per job, "% of best" among the jobs with the same block size.
pub fn profile_table(rows: &[(&str, &Summary)]) -> String {
    let rates: Vec<Option<String>> = rows.iter().map(|(_, s)| rate_cell(s)).collect();
    let errors = rates.iter().any(Option::is_some);
    let mut t = io_header("profile", errors, Some("% of best"));
    let stats: Vec<(f64, u64, DirectionResult)> = rows.iter().map(|(_, s)| combined(s)).collect();
    for (((title, _), (_, bs, d)), rate) in rows.iter().zip(&stats).zip(&rates) {
        let best = stats.iter().filter(|(_, b, _)| b == bs).map(|(i, _, _)| *i).fold(0.0, f64::max);
        let pct = if best > 0.0 { format!("{:.0} %", d.iops / best * 100.0) } else { "n/a".into() };
        let none = "0.0 %".to_string();
        let mut row = io_row(title, d, errors.then(|| rate.as_ref().unwrap_or(&none)));
        row.push(pct);
        t.add_row(row);
    }
    let notes = rows.iter().flat_map(|(title, s)| {
        [errors_line(s), steady_line(s)].into_iter().flatten().map(move |l| format!("\n{title}: {l}"))
    });
    t.to_string() + &notes.collect::<String>()
}

/// The direction a profile job exercises (its only one), its IOPS and block size.
fn combined(s: &Summary) -> (f64, u64, DirectionResult) {
    let bs = s.parameters["bs"][0]["bytes"].as_u64().unwrap_or(0);
    match io(s) {
        Some(r) if r.write.ios > r.read.ios => (r.write.iops, bs, r.write.clone()),
        Some(r) => (r.read.iops, bs, r.read.clone()),
        None => (0.0, bs, DirectionResult::default()),
    }
}

fn io(s: &Summary) -> Option<&IoResults> {
    match &s.results {
        Results::Io(r) => Some(r),
        _ => None,
    }
}

fn lat_cells(d: &DirectionResult) -> Vec<String> {
    match &d.lat_ns {
        Some(l) => [l.mean, l.p50 as f64, l.p99 as f64, l.p999 as f64, l.max as f64].map(latency).to_vec(),
        None => vec!["n/a".into(); 5],
    }
}

/// The error-rate cell beside a run's figures, when any of its I/Os failed.
fn rate_cell(s: &Summary) -> Option<String> {
    let e = s.io_errors().filter(|e| e.any())?;
    Some(e.rate_pct().map_or_else(|| "n/a".into(), storbench_report::rate_text))
}

/// The header of a table of I/O figures, with the error-rate column after IOPS and MB/s when
/// `errors`.
fn io_header(first: &str, errors: bool, last: Option<&str>) -> Table {
    let mut cols = vec![first, "IOPS", "MB/s"];
    cols.extend(errors.then_some("I/Os failed"));
    cols.extend(["mean", "p50", "p99", "p99.9", "max"]);
    cols.extend(last);
    new_table(&cols)
}

/// Label, IOPS, MB/s, the error rate if any, latencies.
fn io_row(label: &str, d: &DirectionResult, rate: Option<&String>) -> Vec<String> {
    let mut row = vec![label.to_string(), si(d.iops), format!("{:.1}", d.bytes_per_sec / 1e6)];
    row.extend(rate.cloned());
    row.extend(lat_cells(d));
    row
}
