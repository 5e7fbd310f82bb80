//! The search for the highest load under latency limits (`--search`) in the report: for every
//! run that was chosen by one, what was asked, the load found, a row per step, and a chart of
//! throughput and of the limited latency per step, so a reader sees where the limit broke.

use super::ReportInput;
use super::doc::{Block, Table, num};
use super::svg::{Chart, Line};
use crate::{SearchResult, SearchStep};

/// For each run with a search: its heading, its outcome, its steps and charts; nothing when
/// no run had one.
pub fn blocks(input: &ReportInput) -> Vec<Block> {
    let mut out = Vec::new();
    for r in &input.evaluation.runs {
        let Some(search) = input.runs.get(&r.id).and_then(|d| d.summary.search.as_ref()) else { continue };
        if out.is_empty() {
            out.push(Block::Heading(2, "Capacity under a latency limit".into()));
        }
        out.push(Block::Heading(3, format!("{} · {}", r.configuration, r.workload)));
        out.push(Block::Para(outcome(search)));
        out.push(Block::Table(steps_table(search)));
        out.extend(charts(search).into_iter().filter(Chart::has_data).map(Block::Chart));
    }
    out
}

/// "The highest threads holding p99<=50ms: 8 (confirmed by a full-length run), ..." with the
/// search's cost.
fn outcome(s: &SearchResult) -> String {
    let limits = s.limits.join(" and ");
    let found = match s.chosen {
        Some(load) => {
            let best = s.steps.iter().rev().find(|st| st.confirm && st.held);
            let at =
                best.map(|b| format!(", {} {} there", num(b.throughput), s.throughput)).unwrap_or_default();
            format!(
                "the highest {} holding {limits} is {} (confirmed by a full-length run{at})",
                s.parameter,
                load_text(load)
            )
        }
        None => format!("no {} held {limits}", s.parameter),
    };
    let shorts = s.steps.iter().filter(|st| !st.confirm).count();
    format!(
        "Searched {} under {limits}: {found}. {shorts} step(s) of {} s (budget {}) and {} confirmation(s) took \
         {} s, of which {} s measured; {} s (warm-ups, preparation, bundles) was overhead.",
        s.parameter,
        num(s.step_s),
        s.step_budget,
        s.steps.len() - shorts,
        num(s.elapsed_s),
        num(s.measured_s),
        num(s.overhead_s),
    )
}

fn steps_table(s: &SearchResult) -> Table {
    let mut header = vec!["step".to_string(), s.parameter.clone(), s.throughput.clone()];
    header.extend(s.limits.iter().map(|l| format!("{l} (ms)")));
    header.extend(["held", "measured s", "seconds", "bundle"].map(String::from));
    let mut t = Table { header, rows: Vec::new() };
    for (i, st) in s.steps.iter().enumerate() {
        let mut row = vec![step_name(i, st), load_text(st.load), num(st.throughput)];
        row.extend(st.latencies.iter().map(|l| l.ms.map_or_else(|| "not judged (no sample)".into(), num)));
        let held = match (st.held, &st.failed) {
            (true, _) => "yes".to_string(),
            (false, Some(why)) => format!("no: the run failed ({why})"),
            (false, None) => "no".to_string(),
        };
        row.extend([held, num(st.measured_s), num(st.seconds), st.bundle.clone()]);
        t.push(row);
        t.rows.last_mut().expect("pushed").marked = st.confirm && st.held;
    }
    t
}

/// A whole load (threads, depth) as a count, a rate as a figure.
fn load_text(load: f64) -> String {
    if load.fract() == 0.0 { format!("{load:.0}") } else { num(load) }
}

fn step_name(i: usize, st: &SearchStep) -> String {
    if st.confirm { format!("{} (confirm)", i + 1) } else { (i + 1).to_string() }
}

/// Throughput per step, and each limit's figure per step beside its limit.
fn charts(s: &SearchResult) -> Vec<Chart> {
    let x = |i: usize| (i + 1) as f64;
    let throughput = Chart {
        title: format!("{} per search step", s.throughput),
        x_label: "step".into(),
        y_label: s.throughput.clone(),
        lines: vec![Line {
            name: s.throughput.clone(),
            points: s.steps.iter().enumerate().map(|(i, st)| (x(i), Some(st.throughput))).collect(),
        }],
        dots: true,
        ..Chart::default()
    };
    let lines = s.limits.iter().enumerate().map(|(k, limit)| Line {
        name: limit.clone(),
        points: s
            .steps
            .iter()
            .enumerate()
            .map(|(i, st)| (x(i), st.latencies.get(k).and_then(|l| l.ms)))
            .collect(),
    });
    let latency = Chart {
        title: "Limited latency per search step".into(),
        x_label: "step".into(),
        y_label: "ms".into(),
        lines: lines.collect(),
        dots: true,
        ..Chart::default()
    };
    vec![throughput, latency]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::LimitedLatency;

    fn step(load: f64, confirm: bool, ms: f64, held: bool) -> SearchStep {
        SearchStep {
            load,
            confirm,
            throughput: load * 1000.0,
            latencies: vec![LimitedLatency { limit: "p99<=42ms".into(), ms: Some(ms), held }],
            held,
            failed: None,
            measured_s: 1.0,
            seconds: 1.5,
            bundle: format!("steps/{load}"),
        }
    }

    #[test]
    fn a_search_shows_its_outcome_a_row_per_step_and_two_charts() {
        let s = SearchResult {
            parameter: "iodepth".into(),
            limits: vec!["p99<=42ms".into()],
            throughput: "IOPS".into(),
            step_budget: 12,
            step_s: 1.0,
            chosen: Some(8.0),
            steps: vec![
                step(4.0, false, 20.0, true),
                step(16.0, false, 80.0, false),
                step(8.0, true, 40.0, true),
            ],
            elapsed_s: 4.5,
            measured_s: 3.0,
            overhead_s: 1.5,
        };
        let text = outcome(&s);
        assert!(text.contains("the highest iodepth holding p99<=42ms is 8 (confirmed by a full-length run, 8,000.0 IOPS there)"), "{text}");
        assert!(text.contains("1.50 s (warm-ups, preparation, bundles) was overhead"), "{text}");
        let t = steps_table(&s);
        assert_eq!(t.header[3], "p99<=42ms (ms)");
        assert_eq!(t.rows[2].cells[..5], ["3 (confirm)", "8", "8,000.0", "40.00", "yes"].map(String::from));
        assert!(t.rows[2].marked && !t.rows[1].marked);
        assert!(charts(&s).iter().all(Chart::has_data));
        // A step whose run failed its own check, and a limit with no sample: neither holds,
        // and the row says why.
        let mut failed = step(32.0, false, 30.0, false);
        failed.failed = Some("page_fault_stalls_per_sec: 903 (at most 1)".into());
        failed.latencies[0].ms = None;
        let with = SearchResult { steps: vec![failed], ..s.clone() };
        let row = &steps_table(&with).rows[0].cells;
        assert_eq!(row[3], "not judged (no sample)");
        assert_eq!(row[4], "no: the run failed (page_fault_stalls_per_sec: 903 (at most 1))");
        let none = SearchResult { chosen: None, ..s };
        assert!(outcome(&none).contains("no iodepth held p99<=42ms"));
    }
}
