//! mailbox's tables on the terminal.

use crate::output::{errors_line, lag_line, new_table};
use storbench_report::{Results, Summary};

/// A mailbox test: the verdict and Jetstress's figures, then the database and log streams,
/// then each check.
pub fn mailbox_table(s: &Summary) -> String {
    let Results::Mailbox(r) = &s.results else { return String::new() };
    let verdict = if r.pass { "Pass".to_string() } else { "FAIL".to_string() };
    let checksums = match r.checksum_ok {
        Some(true) => format!("ok ({} pages, {} log blocks)", r.pages_verified, r.log_blocks_verified),
        Some(false) => format!("{} CORRUPT", r.corruptions.len()),
        None => "not verified".into(),
    };
    if let Some(total) = r.backup_total_mb_per_sec {
        let mut t = new_table(&["result", "database", "MB/s", "checksums"]);
        for (i, mb) in r.backup_mb_per_sec.iter().enumerate() {
            t.add_row(vec![verdict.clone(), format!("db{}", i + 1), format!("{mb:.1}"), checksums.clone()]);
        }
        t.add_row(vec![verdict, "all".into(), format!("{total:.1}"), checksums]);
        return t.to_string();
    }
    if let Some(logs) = r.logs_replayed {
        let mut t = new_table(&["result", "log files replayed", "s per log file", "checksums"]);
        t.add_row(vec![
            verdict,
            logs.to_string(),
            r.seconds_per_log.map_or_else(|| "n/a".into(), |s| format!("{s:.3}")),
            checksums,
        ]);
        return t.to_string();
    }
    let ms = |v: Option<f64>| v.map_or_else(|| "n/a".into(), |v| format!("{v:.2} ms"));
    let mut head =
        new_table(&["result", "transactional IOPS", "total IOPS", "page fault stalls/s", "checksums"]);
    head.add_row(vec![
        verdict,
        format!("{:.1}", r.transactional_iops),
        format!("{:.1}", r.total_iops),
        format!("{:.2}", r.page_fault_stalls_per_sec),
        checksums,
    ]);
    let one_window = one_window(s);
    let window_max = |v: Option<f64>| if one_window.is_some() { "— (1 window)".into() } else { ms(v) };
    let mut t = new_table(&["stream", "per s", "avg bytes", "avg", "window max", "max"]);
    let bytes = |v: Option<f64>| v.map_or_else(|| "n/a".into(), |b| format!("{b:.0}"));
    for d in &r.databases {
        for (name, x) in [
            ("DB reads", &d.db_reads),
            ("DB writes", &d.db_writes),
            ("log writes", &d.log_writes),
            ("maintenance reads", &d.bdm_reads),
        ] {
            if name == "maintenance reads" && x.ios == 0 {
                continue;
            }
            t.add_row(vec![
                format!("db{} {name}", d.database),
                format!("{:.1}", x.per_sec),
                bytes(x.bytes_per_io),
                ms(x.avg_ms),
                window_max(x.window_max_ms),
                ms(x.max_ms),
            ]);
        }
    }
    let mut c = new_table(&["check", "value", "limit", ""]);
    for k in &r.checks {
        let name = k.database.map_or(k.name.clone(), |d| format!("{} (db{d})", k.name));
        c.add_row(vec![
            name,
            k.value.map_or_else(|| "no sample".into(), |v| format!("{v:.2}")),
            format!("{}", k.limit),
            match (k.pass, k.value) {
                (true, _) => "ok".into(),
                (false, None) => "FAIL: not judged".into(),
                (false, Some(_)) => "FAIL".into(),
            },
        ]);
    }
    let steady = crate::subcommand::io::table::steady_line(s);
    let notes: String = [errors_line(s), steady, lag_line(r.schedule_lag_ms.as_ref()), one_window]
        .into_iter()
        .flatten()
        .map(|l| format!("\n{l}"))
        .collect();
    format!("{head}\n{t}\n{c}{notes}")
}

/// The trials of `mailbox --tune`: threads, mailboxes, result, IOPS.
pub fn tune_table(trials: &[(u32, u64, bool, f64, bool)]) -> String {
    let mut t = new_table(&["run", "threads", "mailboxes", "result", "transactional IOPS"]);
    for (threads, mailboxes, pass, iops, full) in trials {
        t.add_row(vec![
            if *full { "full".to_string() } else { "trial".to_string() },
            threads.to_string(),
            mailboxes.to_string(),
            if *pass { "pass".to_string() } else { "fail".to_string() },
            format!("{iops:.0}"),
        ]);
    }
    t.to_string()
}

/// Why a run has no maximum over sample windows, where it measured less than two: its one
/// window's average is all the "max" thresholds judged.
fn one_window(s: &Summary) -> Option<String> {
    let window = s.parameters.get("sample_window_s")?.as_f64()?;
    let measured = s.phases.measured_s;
    (measured > 0.0 && measured < 2.0 * window).then(|| {
        format!(
            "note: {measured:.0} s measured hold one sample window of {window:.0} s, so there is no maximum over \
             windows: the *_max_ms thresholds judged that window's average; measure at least {:.0} s for a maximum",
            2.0 * window
        )
    })
}
