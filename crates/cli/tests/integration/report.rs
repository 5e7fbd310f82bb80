//! `storbench report` and `storbench compare` on real bundles, and the HTML report in a real
//! browser: headless Chromium loads report.html from a file:// URL, its DOM shows how many
//! charts it drew, and the page and a screenshot are kept in target/test-output (report.html,
//! report.png).
//!
//! Without Chromium the browser test skips (`skip`: saying how to enable it, failing in CI).

use crate::support::{SQLIO, disk_tempdir, io_in, only_bundle, refused, storbench};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use storbench_bench::testing::skip;
use storbench_report::Summary;
use storbench_report::evaluation::{Configuration, Evaluation, Method, RunRecord, RunStatus, headline};
use storbench_report::render::Series;
use storbench_report::render::doc::num;

/// One short real random-read run in `dir` capped at `rate` IOPS (so two configurations differ
/// by more than their spread even on a busy machine), its bundle under `results`. Power
/// comes from a file meter holding `watts`, so the power chart and per-watt figures exist.
fn io_run(dir: &Path, results: &Path, rate: &str, watts: &str) -> PathBuf {
    let meter = dir.join("watts");
    std::fs::write(&meter, watts).unwrap();
    let power = format!("file:{}", meter.display());
    let args = [
        "--size",
        "16MiB",
        "--runtime",
        "1s",
        "--iodepth",
        "4",
        "--rate-iops",
        rate,
        "--power",
        &power,
        "--name",
        "randread",
    ];
    storbench()
        .args(["io", "--ramp", "1s", "--target"])
        .arg(dir)
        .arg("--output-dir")
        .arg(results)
        .args(args)
        .assert()
        .success();
    only_bundle(results)
}

/// An evaluation bundle as `storbench run` will write it: two configurations (500 and 2,000
/// IOPS caps) of three repetitions each, evaluation.json made from the report model.
/// The run's summary as if its target were on a disk of its own: both configurations of this
/// report's test run in one directory, and a report says no difference between two
/// configurations on one disk is a finding.
fn on_another_disk(bundle: &Path) {
    let path = bundle.join("summary.json");
    let mut s: Summary = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    s.target.device = Some(storbench_report::DeviceInfo { name: "fastdisk".into(), ..Default::default() });
    std::fs::write(&path, serde_json::to_string_pretty(&s).unwrap()).unwrap();
}

fn evaluation_bundle(dir: &Path) -> PathBuf {
    let eval = dir.join("eval");
    let mut runs = Vec::new();
    for (config, rate, watts) in [("slow", "500", "40"), ("fast", "2000", "55")] {
        for rep in 1..=3 {
            let id = format!("randread.{config}.r{rep}");
            let bundle = io_run(dir, &eval.join("runs").join(&id), rate, watts);
            if config == "fast" {
                on_another_disk(&bundle);
            }
            runs.push(record(&eval, &bundle, &id, config, rep));
        }
    }
    // The system under test, as `storbench run` records it once for the evaluation.
    let first = eval.join(runs[0].bundle.as_ref().unwrap()).join("disclosure.json");
    std::fs::copy(first, eval.join("disclosure.json")).unwrap();
    let mut e = Evaluation {
        evaluation_version: 1,
        tool_version: "0.1.0".into(),
        name: "slow-vs-fast".into(),
        complete: true,
        started_at: "2026-01-01T00:00:00Z".into(),
        method: Method {
            repetitions: 3,
            window: "fixed".into(),
            power_source: Some("file meter".into()),
            ..Method::default()
        },
        configurations: [("slow", 800.0), ("fast", 1500.0)]
            .map(|(c, price)| Configuration {
                name: c.into(),
                target: dir.display().to_string(),
                description: None,
                price: Some(price),
                currency: Some("EUR".into()),
                ..Default::default()
            })
            .to_vec(),
        runs,
        notes: vec!["Both configurations share one file: a test of the report, not of storage.".into()],
        // The cheaper one cannot meet the first: the first screen chooses the dearer.
        requirements: vec!["randread.iops >= 1000".into(), "power.active_w <= 100".into()],
        ..Evaluation::default()
    };
    e.mark_reported();
    std::fs::write(eval.join("evaluation.json"), serde_json::to_string_pretty(&e).unwrap()).unwrap();
    eval
}

/// The run's record as the evaluation keeps it, from its own summary and series.
fn record(eval: &Path, bundle: &Path, id: &str, config: &str, rep: u32) -> RunRecord {
    let summary: Summary =
        serde_json::from_slice(&std::fs::read(bundle.join("summary.json")).unwrap()).unwrap();
    let series = Series::parse(&std::fs::read_to_string(bundle.join("timeseries.csv")).unwrap()).unwrap();
    let headline = headline(&summary);
    let active_watts = series.measured_mean(storbench_report::columns::system::POWER_WATTS);
    RunRecord {
        id: id.into(),
        workload: "randread".into(),
        kind: "io".into(),
        configuration: config.into(),
        repetition: rep,
        status: RunStatus::Done,
        bundle: Some(bundle.strip_prefix(eval).unwrap().display().to_string()),
        per_watt: headline.as_ref().zip(active_watts).map(|(h, w)| h.value / w),
        headline,
        active_watts,
        ..RunRecord::default()
    }
}

#[test]
fn report_writes_html_and_markdown_into_the_bundle_and_a_browser_draws_every_chart() {
    let dir = disk_tempdir();
    let eval = evaluation_bundle(dir.path());
    let out = storbench().arg("report").arg(&eval).assert().success();
    let printed = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(printed.contains("report.html") && printed.contains("report.md"), "{printed}");
    let md = std::fs::read_to_string(eval.join("report.md")).unwrap();
    assert!(md.contains("## Key findings") && md.contains("fast delivered"), "{md}");
    // The first screen is the decision: the configuration chosen, and why.
    let decision = md.find("## Decision").expect("a Decision section");
    assert!(decision < md.find("## Key findings").unwrap(), "{md}");
    assert!(md.contains("Chosen: fast."), "{md}");
    assert!(md.contains("fast meets every requirement, the only one that does, at 1,500 EUR."), "{md}");
    // The verdict quotes slow's median run, whatever rate this machine gave it under its cap.
    let said = format!("slow fails randread.iops &gt;= 1000: {} IOPS, ", num(median_headline(&eval, "slow")));
    let verdict = md.find(&said).unwrap_or_else(|| panic!("no {said:?} in {md}"));
    assert!(md[verdict..].lines().next().unwrap().contains("% short of 1,000"), "{md}");
    assert_eq!(md.matches("◀ median").count(), 2, "{md}");
    assert!(md.contains("Power source: file meter."), "{md}");
    let html = std::fs::read_to_string(eval.join("report.html")).unwrap();
    assert!(html.contains("power when active"), "per-watt findings need power: {html}");
    latency_spectrum(&eval, &md, &html);
    // A second report replaces storbench's own files.
    storbench().arg("report").arg(&eval).assert().success();
    in_browser(&eval.join("report.html"));
}

/// The median of `config`'s headline values in the evaluation bundle `eval`.
fn median_headline(eval: &Path, config: &str) -> f64 {
    let e: Evaluation =
        serde_json::from_slice(&std::fs::read(eval.join("evaluation.json")).unwrap()).unwrap();
    let mut values: Vec<f64> = e
        .runs
        .iter()
        .filter(|r| r.configuration == config)
        .map(|r| r.headline.as_ref().expect("a measured run").value)
        .collect();
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// The latency spectrum of the reported runs' histograms: a table row per configuration in
/// report.md, the section in report.html, and the picture beside them, a line per configuration.
fn latency_spectrum(eval: &Path, md: &str, html: &str) {
    let section = &md[md.find("## Latency spectrum").expect("a Latency spectrum section")..];
    for config in ["slow", "fast"] {
        assert!(section.contains(&format!("| {config} | reads | ")), "{config}: {section}");
    }
    assert!(html.contains("<h2>Latency spectrum</h2>"), "{html}");
    assert!(!eval.join("latency-randread-write.svg").exists(), "a read-only job has no write picture");
    let svg = std::fs::read_to_string(eval.join("latency-randread-read.svg"))
        .expect("the picture beside the report");
    assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"), "{svg}");
    assert_eq!(svg.matches("<path ").count(), 2, "{svg}");
    assert!(svg.contains("<title>slow</title>") && svg.contains("<title>fast</title>"), "{svg}");
}

/// Loads the page in headless Chromium: every chart drawn, the findings shown, a screenshot.
fn in_browser(page: &Path) {
    let Some(chromium) = browser() else { return };
    let url = format!("file://{}", page.display());
    let dom = chromium_run(&chromium, &["--dump-dom", &url]);
    let count = |attr: &str| -> usize {
        let at = dom.find(&format!("{attr}=\"")).unwrap_or_else(|| panic!("no {attr} in the DOM:\n{dom}"));
        let rest = &dom[at + attr.len() + 2..];
        rest[..rest.find('"').unwrap()].parse().unwrap()
    };
    let (charts, drawn) = (count("data-charts"), count("data-charts-drawn"));
    assert!(charts >= 8, "two reported runs with IOPS, latency, CPU and power charts: {charts}");
    assert_eq!(drawn, charts, "the browser drew {drawn} of {charts} charts");
    assert!(dom.contains("Key findings") && dom.contains("fast delivered"), "{dom}");
    // The decision comes first on the page, the chosen configuration's row marked.
    let chosen = dom.find("Chosen: fast.").unwrap_or_else(|| panic!("no decision in the DOM:\n{dom}"));
    assert!(chosen < dom.find("Key findings").unwrap(), "the decision is the first screen");
    // Kept beside the screenshot, to look at after the test.
    std::fs::copy(page, test_output().join("report.html")).unwrap();
    let png = test_output().join("report.png");
    let _ = std::fs::remove_file(&png);
    chromium_run(&chromium, &[&format!("--screenshot={}", png.display()), "--window-size=1280,2000", &url]);
    let bytes = std::fs::read(&png).expect("chromium wrote the screenshot");
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n") && bytes.len() > 20_000, "{} bytes", bytes.len());
}

/// Chromium from PATH; without it, None after [`skip`].
fn browser() -> Option<PathBuf> {
    let found = ["chromium", "chromium-browser"].iter().find_map(|name| {
        std::env::split_paths(&std::env::var_os("PATH")?).map(|d| d.join(name)).find(|p| p.is_file())
    });
    if found.is_none() {
        skip("no chromium on PATH for the browser check", "install Chromium (apt-get install chromium)");
    }
    found
}

/// Runs headless Chromium with a fresh profile and no network use; its stdout.
fn chromium_run(chromium: &Path, args: &[&str]) -> String {
    let profile = tempfile::tempdir().unwrap();
    let mut child = Command::new(chromium)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run"])
        .args(["--disable-background-networking", "--disable-component-update", "--disable-sync"])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromium starts");
    let began = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if began.elapsed() > Duration::from_secs(90) {
            let _ = child.kill();
            panic!("chromium did not finish within 90 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "chromium failed: {}", out.status);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// target/test-output, beside the test binary's target/<profile>/deps.
fn test_output() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let target = exe.ancestors().nth(3).unwrap().to_path_buf();
    let dir = target.join("test-output");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn compare_prints_a_findings_table_for_two_runs_and_writes_files_with_out() {
    let dir = disk_tempdir();
    let a = io_run(dir.path(), &dir.path().join("a"), "500", "40");
    let b = io_run(dir.path(), &dir.path().join("b"), "2000", "40");
    let out = dir.path().join("compared");
    let done = storbench().arg("compare").arg(&a).arg(&b).arg("--out").arg(&out).assert().success();
    let text = String::from_utf8_lossy(&done.get_output().stdout).into_owned();
    assert!(
        text.contains("Findings") && text.contains("A vs B") && text.contains("randread (IOPS)"),
        "{text}"
    );
    assert!(text.contains("more IOPS than A "), "B, capped four times higher, is better: {text}");
    for name in ["compare.html", "compare.md"] {
        assert!(out.join(name).is_file(), "{name}");
    }
    // The latency picture with A's and B's runs overlaid.
    let svg = std::fs::read_to_string(out.join("latency-randread-read.svg")).unwrap();
    assert_eq!(svg.matches("<path ").count(), 2, "{svg}");
    assert!(svg.contains("<title>A ") && svg.contains("<title>B "), "{svg}");
    // The spectrum is the run's own percentiles, read from the log's measured totals, and the
    // same rebuilt from its record's intervals where the log has no totals.
    let row = spectrum_row(&a);
    let md = std::fs::read_to_string(out.join("compare.md")).unwrap();
    assert!(md.contains(&row), "{row} in {md}");
    let copy = dir.path().join("no-totals");
    std::fs::create_dir(&copy).unwrap();
    for name in ["summary.json", "record.jsonl", "timeseries.csv"] {
        std::fs::copy(a.join(name), copy.join(name)).unwrap();
    }
    let log = std::fs::read_to_string(a.join("latency.hlog")).unwrap();
    let intervals: Vec<&str> = log.lines().filter(|l| !l.contains("-total,")).collect();
    std::fs::write(copy.join("latency.hlog"), intervals.join("\n")).unwrap();
    storbench().arg("report").arg(&copy).assert().success();
    let md = std::fs::read_to_string(copy.join("report.md")).unwrap();
    assert!(md.contains(&row), "{row} in {md}");
}

/// The latency spectrum's table row of the run in `bundle` as its summary's percentiles give
/// it, from the request type on: `| reads | 500 | 0.0123 | ... |`.
fn spectrum_row(bundle: &Path) -> String {
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(bundle.join("summary.json")).unwrap()).unwrap();
    let read = &summary["results"]["read"];
    let ios = read["ios"].as_u64().unwrap();
    let ms = |q: &str| num(read["lat_ns"][q].as_u64().unwrap() as f64 / 1e6);
    // A percentile finer than the count tells apart (p99.9 of 500) is a dash.
    let finer = |q: &str, rank: u64| if ios >= rank { ms(q) } else { "—".into() };
    let (p999, p9999) = (finer("p999", 1_000), finer("p9999", 10_000));
    let (p50, p90, p99, max) = (ms("p50"), ms("p90"), ms("p99"), ms("max"));
    let count = storbench_report::render::doc::given(ios as f64);
    format!("| reads | {count} | {p50} | {p90} | {p99} | {p999} | {p9999} | {max} |")
}

/// `storbench io --profile sqlio` on the null engine, briefly; the set's directory.
fn profile_set(results: &Path) -> PathBuf {
    storbench()
        .args(["io", "--profile", "sqlio", "--engine", "null", "--runtime", "0.3", "--ramp", "0"])
        .args(["--power", "none", "--output-dir"])
        .arg(results)
        .assert()
        .success();
    only_bundle(results)
}

#[test]
fn a_profile_sets_directory_is_a_bundle_that_report_and_compare_read() {
    let dir = disk_tempdir();
    let (a, b) = (profile_set(&dir.path().join("a")), profile_set(&dir.path().join("b")));
    storbench().arg("report").arg(&a).assert().success();
    let md = std::fs::read_to_string(a.join("report.md")).unwrap();
    assert!(md.contains("6 runs of 6 workloads on 1 configuration"), "{md}");
    for (i, job) in SQLIO.iter().enumerate() {
        // The set holds a bundle per job, numbered in the order they ran.
        let bundle = a.join(format!("{}-{job}", i + 1));
        let summary: Summary =
            serde_json::from_slice(&std::fs::read(bundle.join("summary.json")).unwrap()).unwrap();
        let iops = headline(&summary).unwrap().value;
        assert!(md.contains(&format!("### Workload {job}")), "{job}: {md}");
        assert!(md.contains(&format!("| {} |", num(iops))), "{job}'s {iops} IOPS: {md}");
    }
    let out = storbench().arg("compare").arg(&a).arg(&b).assert().success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    for job in SQLIO {
        assert!(text.contains(&format!("{job} (IOPS)")), "matched by job: {text}");
    }
}

#[test]
fn a_missing_or_foreign_bundle_is_refused_with_the_fix() {
    let dir = disk_tempdir();
    let missing = dir.path().join("nothing-here");
    refused(storbench().arg("report").arg(&missing), "no such bundle; give the directory");
    refused(storbench().arg("compare").arg(dir.path()).arg(&missing), "not a bundle");
    let bundle = {
        io_in(dir.path(), &["--engine", "null", "--runtime", "0.2"]);
        only_bundle(&dir.path().join("results"))
    };
    std::fs::write(bundle.join("report.md"), "my own notes\n").unwrap();
    refused(storbench().arg("report").arg(&bundle), "storbench did not write it; move it away");
    assert_eq!(std::fs::read_to_string(bundle.join("report.md")).unwrap(), "my own notes\n");
    assert!(!bundle.join("report.html").exists(), "nothing is written when one file is foreign");
    std::fs::write(bundle.join("summary.json"), "{\"truncated").unwrap();
    refused(storbench().arg("report").arg(&bundle), "is not what storbench writes");
}

#[test]
fn a_trace_replays_report_draws_its_reads_and_writes_latency_spectra() {
    // Its latency types are its registry entry's (io's); the report once kept a list of kinds
    // that lacked replay-trace, and drew no spectrum for it.
    let dir = disk_tempdir();
    let trace =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/trace/io-randrw-fdatasync.sbtrace");
    let results = dir.path().join("results");
    storbench()
        .arg("replay-trace")
        .arg(&trace)
        .args(["--fast", "--target"])
        .arg(dir.path())
        .arg("--output-dir")
        .arg(&results)
        .assert()
        .success();
    let bundle = only_bundle(&results);
    storbench().arg("report").arg(&bundle).assert().success();
    for kind in ["read", "write"] {
        let picture = bundle.join(format!("latency-replay-trace-io-randrw-fdatasync-{kind}.svg"));
        assert!(picture.is_file(), "{}", picture.display());
    }
    let md = std::fs::read_to_string(bundle.join("report.md")).unwrap();
    assert!(md.contains("| reads |") && md.contains("| writes |"), "{md}");
}
