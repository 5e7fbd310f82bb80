//! `--metrics-listen`: the live metrics endpoint scraped during a null-engine run, as
//! Prometheus (OpenMetrics) and as promtool (the text format) read it, and an address that
//! cannot be served refused before the run.

use crate::support::{refused, storbench};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::time::Duration;
use storbench_bench::testing::{skip, wait_until};

const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// One GET of `path` with `accept`: the response's head and body.
fn get(addr: &str, path: &str, accept: &str) -> (String, String) {
    let mut conn = TcpStream::connect(addr).expect("the endpoint accepts connections");
    write!(conn, "GET {path} HTTP/1.1\r\nHost: {addr}\r\nAccept: {accept}\r\n\r\n").unwrap();
    let mut text = String::new();
    conn.read_to_string(&mut text).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").expect("a head and a body");
    (head.to_string(), body.to_string())
}

/// `promtool check metrics` on `text`: its complaints, empty when the text is valid.
fn promtool(text: &str) -> String {
    let mut check = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool runs");
    check.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let out = check.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    if out.status.success() { String::new() } else { format!("{}: {said}", out.status) }
}

#[test]
fn a_running_io_job_serves_its_columns_counters_and_phase_that_promtool_accepts() {
    if Command::new("promtool").arg("--version").output().is_err() {
        return skip("promtool is not installed", "apt-get install prometheus");
    }
    let dir = tempfile::tempdir().unwrap();
    let mut run = std::process::Command::new(assert_cmd::cargo::cargo_bin!("storbench"))
        .args(["io", "--engine", "null", "--ramp", "1s", "--runtime", "2s", "--name", "live"])
        .args(["--metrics-listen", "127.0.0.1:0", "--output-dir"])
        .arg(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(run.stderr.take().unwrap());
    let mut line = String::new();
    while stderr.read_line(&mut line).unwrap() > 0 && !line.contains("metrics: serving") {
        line.clear();
    }
    let addr =
        line.split("http://").nth(1).and_then(|a| a.strip_suffix("/metrics\n")).expect(&line).to_string();
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));

    let mut scraped = (String::new(), String::new());
    wait_until("a measured interval in the scrape", Duration::from_secs(10), || {
        scraped = get(&addr, "/metrics", "application/openmetrics-text;version=1.0.0,*/*;q=0.1");
        scraped.1.contains("phase=\"measure\"")
    });
    let (head, body) = scraped;
    assert!(
        head.starts_with("HTTP/1.1 200 OK") && head.contains(&format!("Content-Type: {OPENMETRICS}")),
        "{head}"
    );
    let labels = r#"{run="live",workload="io",configuration="",shard=""}"#;
    for sample in ["storbench_read_iops", "storbench_read_lat_p99_seconds", "storbench_cpu_user_ratio"] {
        assert!(body.contains(&format!("\n{sample}{labels} ")), "no {sample}: {body}");
    }
    assert!(
        body.contains("# TYPE storbench_ios counter\n") && body.contains("storbench_ios_total{"),
        "{body}"
    );
    assert!(body.ends_with("\n# EOF\n"), "{body}");

    let (head, text) = get(&addr, "/metrics", "*/*");
    assert!(head.contains("text/plain; version=0.0.4"), "{head}");
    assert_eq!(promtool(&text), "", "promtool refuses:\n{text}");
    assert!(get(&addr, "/", "*/*").0.starts_with("HTTP/1.1 404"));

    assert!(run.wait().unwrap().success());
    assert!(TcpStream::connect(&addr).is_err(), "the endpoint ends with the command");
}

#[test]
fn a_metrics_address_in_use_or_malformed_is_refused_before_the_run() {
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let taken = taken.local_addr().unwrap().to_string();
    let dir = tempfile::tempdir().unwrap();
    for (addr, needle) in [(taken.as_str(), "in use"), ("9464", "give HOST:PORT")] {
        let mut cmd = storbench();
        cmd.args(["io", "--engine", "null", "--runtime", "1s", "--metrics-listen", addr, "--output-dir"]);
        let err = refused(cmd.arg(dir.path()), needle);
        assert!(err.contains(&format!("--metrics-listen {addr}")), "{err}");
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "no run started");
    let mut evaluation = storbench();
    refused(
        evaluation.args(["run", "--metrics-listen", "no-port"]).current_dir(dir.path()),
        "give HOST:PORT",
    );
}
