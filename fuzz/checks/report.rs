//! What `storbench report` and `storbench compare` promise on any bundle files, one function
//! per fuzz target, shared by the cargo-fuzz targets (fuzz/fuzz_targets/) and the property
//! tests that `cargo test` runs (crates/report/tests/fuzz.rs): each file of a bundle is read
//! or refused (never a panic), and whatever is read renders into reports that show no control
//! character raw (text from a bundle may hold any). The file under test is the input; the rest
//! of the bundle is a real run's (fuzz/corpus/).

use storbench_report::evaluation::Evaluation;
use storbench_report::render::compare::{Side, compare_html, compare_markdown, compare_text};
use storbench_report::render::{self, ReportInput, RunData, Series};
use storbench_report::text::control_char;
use storbench_report::{Disclosure, Summary};

/// A real io run's summary and time series.
const SUMMARY: &str = include_str!("../corpus/summary/io.json");
const SERIES: &str = include_str!("../corpus/timeseries/io.csv");

fn real_summary() -> Summary {
    serde_json::from_str(SUMMARY).expect("the seed summary reads")
}

fn real_series() -> Series {
    Series::parse(SERIES).expect("the seed time series reads")
}

/// Every page `storbench report` and `storbench compare` write for `input`. (The terminal's
/// text is escaped where it is printed, by the CLI's console.)
fn render_all(input: &ReportInput) {
    let side = Side { input, name: "A", source: "a" };
    let _ = compare_text(&side, &side);
    let pages = [
        ("report.html", render::report_html(input)),
        ("report.md", render::report_markdown(input)),
        ("compare.html", compare_html(&side, &side)),
        ("compare.md", compare_markdown(&side, &side)),
    ];
    for (name, page) in pages {
        if let Some(c) = control_char(&page) {
            panic!("{name} shows U+{:04X} raw", u32::from(c));
        }
    }
}

/// `summary.json`: a run's report and a comparison with itself.
pub fn summary(bytes: &[u8]) {
    if let Ok(summary) = serde_json::from_slice::<Summary>(bytes) {
        let data = RunData { summary, series: Some(real_series()), database: None };
        render_all(&ReportInput::single_run("run", data, None));
    }
}

/// `evaluation.json`: the evaluation's report, each run with a bundle read from a real one.
pub fn evaluation(bytes: &[u8]) {
    if let Ok(mut evaluation) = serde_json::from_slice::<Evaluation>(bytes) {
        for group in evaluation.groups() {
            let _ = (group.spread(), group.errors_note(), group.reported().map(|r| r.id.len()));
        }
        evaluation.mark_reported();
        let mut input = ReportInput::default();
        for run in evaluation.runs.iter().filter(|r| r.bundle.is_some()) {
            let data = RunData { summary: real_summary(), series: Some(real_series()), database: None };
            input.runs.insert(run.id.clone(), data);
        }
        input.evaluation = evaluation;
        render_all(&input);
    }
}

/// `timeseries.csv`: read or refused as malformed, and what is read charts.
pub fn timeseries(bytes: &[u8]) {
    if let Ok(series) = Series::parse(&String::from_utf8_lossy(bytes)) {
        let data = RunData { summary: real_summary(), series: Some(series), database: None };
        render_all(&ReportInput::single_run("run", data, None));
    }
}

/// `disclosure.json`: the report's full disclosure of the system under test.
pub fn disclosure(bytes: &[u8]) {
    if let Ok(disclosure) = serde_json::from_slice::<Disclosure>(bytes) {
        let data = RunData { summary: real_summary(), series: Some(real_series()), database: None };
        render_all(&ReportInput::single_run("run", data, Some(disclosure)));
    }
}
