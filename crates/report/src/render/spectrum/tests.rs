use super::*;
use crate::render::{Reported, io, mailbox, oltp, replay};

/// A spectrum of `count` latencies, `ms` at the median and rising tenfold a nine.
fn rising(count: u64, ms: f64) -> Spectrum {
    let points = quantiles(count).into_iter().map(|q| (q, (ms * 1e6 * 10f64.powf(nines(q, count))) as u64));
    Spectrum { count, points: points.collect() }
}

#[test]
fn the_nines_axis_puts_each_nine_one_step_further_and_the_maximum_at_the_slowest_rank() {
    let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
    assert_eq!(nines(0.0, 1000), 0.0);
    assert!(close(nines(0.5, 1000), 2f64.log10()));
    assert!(close(nines(0.9, 1000), 1.0));
    assert!(close(nines(0.99, 1000), 2.0));
    assert!(close(nines(0.999, 1000), 3.0));
    // Finer than 1,000 latencies tell apart: at the slowest one's rank, with the maximum.
    assert!(close(nines(0.9999, 1000), 3.0));
    assert!(close(nines(1.0, 1000), 3.0));
    assert!(close(nines(1.0, 250_000), 250_000f64.log10()));
    assert_eq!(nines(1.0, 1), 0.0);
    assert_eq!(nines(1.0, 0), 0.0);
    assert_eq!((0..5).map(percentile_label).collect::<Vec<_>>(), ["0", "90", "99", "99.9", "99.99"]);
}

#[test]
fn a_spectrum_holds_the_fixed_quantiles_ten_points_a_decade_and_the_maximum() {
    let qs = quantiles(1000);
    for q in FIXED.iter().chain(&[1.0]) {
        assert!(qs.contains(q), "{q} in {qs:?}");
    }
    assert!(qs.windows(2).all(|w| w[0] < w[1]), "rising: {qs:?}");
    // Three decades: 30 tenths, the whole nines among them FIXED's; then the maximum.
    assert_eq!(qs.len(), FIXED.len() + 27 + 1, "{qs:?}");
    let finest = qs.iter().filter(|q| !FIXED.contains(q) && **q < 1.0).fold(0.0, |a: f64, q| a.max(*q));
    assert!((nines(finest, 1_000_000) - 2.9).abs() < 1e-9, "the grid ends a tenth short of 1,000: {finest}");
    assert_eq!(quantiles(1), [FIXED.as_slice(), &[1.0]].concat());
    // A billion and more stop at nine nines: a cheap, bounded line.
    assert_eq!(quantiles(u64::MAX).len(), FIXED.len() + 90 - 5 + 1);
}

fn place<'a>(spectra: &'a [(&str, BTreeMap<String, Spectrum>)], reported: Reported) -> Place<'a> {
    let mut p = Place::new("mix", Some(&SweepPoint { param: "iodepth".into(), value: 4.into() }));
    for (name, s) in spectra {
        p.curves.push(Curve { name: name.to_string(), types: reported.latency_types, spectra: s });
    }
    p
}

#[test]
fn a_picture_per_request_type_with_a_line_per_configuration_on_the_nines_axis() {
    let both = |ms: f64| {
        BTreeMap::from([
            ("read".to_string(), rising(100_000, ms)),
            ("write".to_string(), rising(100_000, ms * 2.0)),
            ("lag".to_string(), rising(100_000, ms)),
        ])
    };
    let spectra = [("ssd", both(0.05)), ("hdd", both(4.0)), ("nvme", both(0.01))];
    let pictures = all_pictures(&[place(&spectra, io::REPORTED)]);
    let files: Vec<&str> = pictures.iter().map(|p| p.file.as_str()).collect();
    assert_eq!(files, ["latency-mix-iodepth-4-read.svg", "latency-mix-iodepth-4-write.svg"], "no lag");
    let svg = pictures[0].chart.svg();
    assert_eq!(svg.matches("<path ").count(), 3, "one line per configuration: {svg}");
    for name in ["ssd", "hdd", "nvme"] {
        assert!(svg.contains(&format!("<title>{name}</title>")), "{name}: {svg}");
    }
    for label in [">0<", ">90<", ">99<", ">99.9<", ">99.99<", ">99.999<"] {
        assert!(svg.contains(label), "x axis {label}: {svg}");
    }
    assert!(!svg.contains(">99.9999<"), "the axis ends at the slowest of 100,000");
    // Log y: gridlines at powers of ten, from 0.01 ms (nvme's fastest) to 1M ms (hdd's slowest).
    assert!(svg.contains(">0.01<") && svg.contains(">1M<"), "{svg}");
    assert!(!svg.contains("NaN") && !svg.contains("inf"), "{svg}");
    assert_eq!(pictures[0].chart.title, "mix at iodepth = 4: reads, latency by percentile");
}

#[test]
fn a_kind_with_one_request_type_has_one_file_and_a_name_made_safe_stays_new() {
    let spectra = [("a", BTreeMap::from([("order".to_string(), rising(10, 1.0))]))];
    let mut one = place(&spectra, oltp::REPORTED);
    one.stem = "latency-a-b".into();
    let mut two = place(&spectra, oltp::REPORTED);
    two.stem = "latency-a-b".into();
    let files: Vec<String> = all_pictures(&[one, two]).into_iter().map(|p| p.file).collect();
    assert_eq!(files, ["latency-a-b.svg", "latency-a-b-2.svg"]);
    assert_eq!(slug("db/2 ✓ load"), "db-2-load");
    assert_eq!(slug("randread at iodepth = 4"), "randread-at-iodepth-4");
    assert_eq!(replay::REPORTED.latency_types.name_of("type.SELECT"), Some("SELECT".into()));
    assert_eq!(mailbox::REPORTED.latency_types.name_of("p0.db_read"), None);
}

#[test]
fn the_table_shows_a_percentile_only_where_the_count_tells_it_from_the_maximum() {
    let spectra = [("ssd", BTreeMap::from([("read".to_string(), rising(5_000, 1.0))]))];
    let t = table(&place(&spectra, io::REPORTED));
    assert_eq!(
        t.header,
        [
            "configuration",
            "requests",
            "latencies",
            "p50 ms",
            "p90 ms",
            "p99 ms",
            "p99.9 ms",
            "p99.99 ms",
            "max ms"
        ]
    );
    let cells = &t.rows[0].cells;
    assert_eq!(cells[..4], ["ssd", "reads", "5,000", "2.00"]);
    assert_eq!(cells[6], "1,000.0", "p99.9 of 5,000 is measured");
    assert_eq!(cells[7], "—", "p99.99 of 5,000 is the maximum by another name");
    assert_eq!(cells[8], num(10f64.powf(5_000f64.log10()) * 1.0), "{cells:?}");
}
