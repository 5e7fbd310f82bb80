//! Whether a replay reproduced its trace: the replay captured and fingerprinted, figure by
//! figure against the original, each with its distance, the limit it is held to and a pass.
//! Requests, the read share and the size distribution must be within 2 (their counts as a
//! relative difference, shares in percentage points, sizes as the share of requests whose size
//! would have to change), the rate within 5 %, and the flushes the replay issued within 2 % of
//! the trace's; sequentiality is told beside them (within 5 points). The flushes the replay's
//! device saw are told, not held: the block layer serves flushes that wait together with one
//! in flight as one, so a slower device (or a busier host) shows fewer for the same flushes
//! asked (17 % fewer on a loop device beside a disk writer). Discards are left out: a replay
//! does not issue them. Queue depth and latency are the device's answer, not the workload's
//! ask: they are shown by the fingerprints, not held.

use super::fingerprint::Fingerprint;
pub use storbench_report::fingerprint::{FidelityCheck as Check, FidelityFigure as Figure};

/// The check of a replay whose capture is `replayed` and which issued `flushes_issued`
/// flushes, against the trace's fingerprint `original`.
pub fn compare(original: &Fingerprint, replayed: &Fingerprint, flushes_issued: u64) -> Check {
    let data = |f: &Fingerprint| (f.reads + f.writes) as f64;
    let rate = |f: &Fingerprint| if f.duration_s > 0.0 { data(f) / f.duration_s } else { 0.0 };
    let figures = vec![
        relative("reads and writes", data(original), data(replayed), 2.0),
        points("read share", original.read_fraction, replayed.read_fraction, 2.0),
        Figure {
            name: "sizes".into(),
            original: 0.0,
            replayed: 0.0,
            distance: size_distance(original, replayed) * 100.0,
            unit: "% of requests".into(),
            limit: 2.0,
            pass: size_distance(original, replayed) * 100.0 <= 2.0,
            held: true,
        },
        relative("rate (IOPS)", rate(original), rate(replayed), 5.0),
        relative("flushes issued", original.flushes as f64, flushes_issued as f64, 2.0),
        told(relative("flushes at the device", original.flushes as f64, replayed.flushes as f64, 0.0)),
        points("sequential share", original.sequential_fraction, replayed.sequential_fraction, 5.0),
    ];
    let pass = figures.iter().all(|f| f.pass);
    Check { figures, pass }
}

/// `f` told beside the check, not held by it.
fn told(f: Figure) -> Figure {
    Figure { pass: true, held: false, ..f }
}

fn relative(name: &'static str, original: f64, replayed: f64, limit: f64) -> Figure {
    let distance = if original > 0.0 { (replayed - original).abs() / original * 100.0 } else { 0.0 };
    Figure {
        name: name.into(),
        original,
        replayed,
        distance,
        unit: "%".into(),
        limit,
        pass: distance <= limit,
        held: true,
    }
}

fn points(name: &'static str, original: f64, replayed: f64, limit: f64) -> Figure {
    let distance = (replayed - original).abs() * 100.0;
    Figure {
        name: name.into(),
        original,
        replayed,
        distance,
        unit: "points".into(),
        limit,
        pass: distance <= limit,
        held: true,
    }
}

/// The total variation distance of the two size distributions (0: the same, 1: disjoint).
fn size_distance(a: &Fingerprint, b: &Fingerprint) -> f64 {
    let total = |f: &Fingerprint| f.size_histogram.values().sum::<u64>().max(1) as f64;
    let (ta, tb) = (total(a), total(b));
    let sizes: std::collections::BTreeSet<&u32> =
        a.size_histogram.keys().chain(b.size_histogram.keys()).collect();
    let share = |f: &Fingerprint, s: &u32, t: f64| f.size_histogram.get(s).copied().unwrap_or(0) as f64 / t;
    sizes.iter().map(|s| (share(a, s, ta) - share(b, s, tb)).abs()).sum::<f64>() / 2.0
}

/// The check as a person reads it.
pub fn table(c: &Check) -> String {
    let mut out = String::from("fidelity of the replay (its own capture against the trace):\n");
    for f in &c.figures {
        let values = if f.name == "sizes" {
            String::new()
        } else {
            format!("{:.3} -> {:.3}, ", f.original, f.replayed)
        };
        let limit = if f.held { format!("limit {}", f.limit) } else { "not held".into() };
        out.push_str(&format!(
            "  {:<21} {values}{:.2} {} apart ({limit}): {}\n",
            f.name,
            f.distance,
            f.unit,
            f.verdict()
        ));
    }
    out.push_str(if c.pass {
        "the replay reproduced the trace\n"
    } else {
        "the replay did NOT reproduce the trace\n"
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn fp(reads: u64, writes: u64, sizes: &[(u32, u64)], secs: f64) -> Fingerprint {
        Fingerprint {
            reads,
            writes,
            read_fraction: reads as f64 / (reads + writes) as f64,
            size_histogram: sizes.iter().copied().collect::<BTreeMap<_, _>>(),
            duration_s: secs,
            ..Fingerprint::default()
        }
    }

    #[test]
    fn a_faithful_replay_passes_and_each_kind_of_drift_fails_its_own_figure() {
        let original = fp(700, 300, &[(4096, 900), (65536, 100)], 10.0);
        let faithful = fp(705, 300, &[(4096, 905), (65536, 100)], 10.1);
        assert!(compare(&original, &faithful, 0).pass);
        let failed = |r: &Fingerprint| -> Vec<String> {
            compare(&original, r, 0).figures.into_iter().filter(|f| !f.pass).map(|f| f.name).collect()
        };
        assert_eq!(failed(&fp(700, 300, &[(4096, 900), (65536, 100)], 12.0)), ["rate (IOPS)"]);
        assert_eq!(failed(&fp(650, 350, &[(4096, 900), (65536, 100)], 10.0)), ["read share"]);
        assert_eq!(failed(&fp(700, 300, &[(4096, 800), (131072, 200)], 10.0)), ["sizes"]);
        // Flushes: 100 in the trace; the replay issuing 97 is 3 % short and fails, while the
        // device seeing 80 of 100 issued (the block layer merged them) is told, not held.
        let flushed = |n: u64| Fingerprint { flushes: n, ..fp(700, 300, &[(4096, 900), (65536, 100)], 10.0) };
        let failing =
            |c: Check| c.figures.into_iter().filter(|f| !f.pass).map(|f| f.name).collect::<Vec<_>>();
        assert!(compare(&flushed(100), &flushed(80), 100).pass);
        assert_eq!(failing(compare(&flushed(100), &flushed(97), 97)), ["flushes issued"]);
        let merged = compare(&flushed(100), &flushed(80), 100);
        let at_device = merged.figures.iter().find(|f| f.name == "flushes at the device").unwrap();
        assert_eq!((at_device.replayed, at_device.held), (80.0, false));
        // 5 % of the requests changed size: 0.05 apart.
        assert!(
            (size_distance(&original, &fp(700, 300, &[(4096, 850), (8192, 50), (65536, 100)], 10.0)) - 0.05)
                .abs()
                < 1e-9
        );
    }
}
