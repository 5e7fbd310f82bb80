//! What storbench_bench's readers of files promise on any bytes, one function per fuzz target,
//! shared by the cargo-fuzz targets (fuzz/fuzz_targets/) and the property tests that
//! `cargo test` runs (crates/bench/tests/fuzz.rs). Each reads its input the way storbench reads
//! the file, from a file of its own, and panics when a promise does not hold; a panic inside
//! the reader is a defect too.

use std::path::Path;
use storbench_bench::metrics::read_hlog;
use storbench_bench::workload::integrity::layout::MANIFEST_FILE;
use storbench_bench::workload::integrity::{
    Checked, Journal, JournalError, Layout, PAGE, PageId, check_page, classify,
};
use storbench_bench::workload::mailbox;

/// `bytes` written as `name` in a new directory, handed to `read`.
fn as_file<T>(name: &str, bytes: &[u8], read: impl FnOnce(&Path) -> T) -> T {
    let dir = tempfile::tempdir().expect("a temporary directory");
    std::fs::write(dir.path().join(name), bytes).expect("writing the input");
    read(dir.path())
}

/// The integrity journal (`integrity verify` and the end of a run read it): loaded or refused
/// as not matching, and what it loads keeps the rule verification applies: no acknowledged
/// generation above the reservation.
pub fn journal(bytes: &[u8]) {
    let loaded = as_file("journal", bytes, |dir| Journal::load(&dir.join("journal")));
    match loaded {
        Ok(expected) => {
            for (id, generation) in expected.pages() {
                assert!(
                    generation <= expected.issued_limit,
                    "{id}: {generation} > {}",
                    expected.issued_limit
                );
            }
            assert!(expected.pages().count() as u64 <= expected.acknowledgements);
            assert!(expected.ignored_tail <= bytes.len() as u64);
        }
        Err(JournalError::Damaged { offset, .. }) => assert!(offset <= bytes.len() as u64),
        Err(JournalError::Io(e)) => panic!("a readable journal file is loaded or refused: {e}"),
        Err(JournalError::Behind { .. }) => {}
    }
}

/// The place a page input is checked as (its first 10 bytes: file, page number) and the page
/// (the rest, cut or padded with zeros to one page).
pub fn split_page(bytes: &[u8]) -> (PageId, Vec<u8>) {
    let mut head = [0u8; 10];
    let n = bytes.len().min(10);
    head[..n].copy_from_slice(&bytes[..n]);
    let id = PageId {
        file: u16::from_le_bytes([head[0], head[1]]),
        page: u64::from_le_bytes(head[2..10].try_into().expect("8 bytes")),
    };
    let mut page = bytes[n..].to_vec();
    page.resize(PAGE, 0);
    (id, page)
}

/// The page checker (every read of the integrity workload, and the audit): whatever a page
/// holds, it is named as one of its classes, consistently, and judged against any journal.
pub fn page(bytes: &[u8]) {
    let (id, page) = split_page(bytes);
    let checked = check_page(&page, id);
    match checked {
        Checked::Ok { generation } => assert!(generation > 0, "generation 0 is never written"),
        Checked::Torn { sectors } => assert!(sectors.iter().any(|&g| g != sectors[0]), "{sectors:?}"),
        Checked::Misplaced { found, .. } => assert_ne!(found, id),
        Checked::Unwritten => assert!(page.iter().all(|&b| b == 0), "only zeros are unwritten"),
        Checked::Corrupt => {}
    }
    assert!(!checked.to_string().is_empty());
    let generation = checked.generations().iter().copied().max().unwrap_or(0);
    for acknowledged in [None, Some(0), Some(generation), Some(generation.saturating_add(1)), Some(u64::MAX)]
    {
        for seen in [None, Some(generation), Some(u64::MAX)] {
            for limit in [0, generation, u64::MAX] {
                let _ = classify(acknowledged, checked, seen, limit);
            }
        }
    }
}

/// The latency histograms (`latency.hlog`): read back or refused, and what is read summarizes.
pub fn hlog(bytes: &[u8]) {
    if let Ok(histograms) = read_hlog(&String::from_utf8_lossy(bytes)) {
        for (_, _, _, h) in histograms {
            let _ = h.summary();
        }
    }
}

/// The integrity manifest (`integrity verify` reads it first): loaded or refused, and the
/// regions verify then reads are laid out from it, in files or on its device.
pub fn integrity_manifest(bytes: &[u8]) {
    as_file(MANIFEST_FILE, bytes, |dir| {
        if let Ok(manifest) = Layout::new(dir).load() {
            let _ = Layout::new(dir).regions(&manifest.sizes);
            let _ = Layout::on_device(dir, Path::new("/dev/null")).regions(&manifest.sizes);
        }
    });
}

/// The mailbox manifest (every mailbox run on existing databases reads it): loaded or refused.
pub fn mailbox_manifest(bytes: &[u8]) {
    as_file(mailbox::layout::MANIFEST, bytes, |dir| {
        if let Ok(Some(manifest)) = mailbox::Manifest::load(dir) {
            assert_eq!(manifest.files(dir).len(), manifest.databases.len());
        }
    });
}

/// A replay's request logs (`storbench replay LOG` reads them): every reader ends on any
/// bytes, without a panic, and names a line of the input for every request and every line it
/// could not read; detection never panics.
pub fn replay_log(bytes: &[u8]) {
    use storbench_bench::workload::replay::log::web::{Mapping, MappingFile, RouteFile, WebLog};
    use storbench_bench::workload::replay::log::{Format, mysql, postgres, storbench};
    let lines = bytes.split(|b| *b == b'\n').count() as u64;
    let _ = Format::detect(&String::from_utf8_lossy(bytes));
    let line_of = |r: &storbench_bench::workload::replay::log::Read| match r {
        Ok(e) => e.line,
        Err(e) => e.line,
    };
    // Any path, a call type and parameters from the query.
    let route = RouteFile {
        path: "/(?P<page>[a-z]+).*".into(),
        method: None,
        query: Default::default(),
        kind: "browse_by_{page}".into(),
        params: [("category", "{c}"), ("title", "{t*}"), ("batch", "{b}")]
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .into(),
    };
    let file = MappingFile { session: Default::default(), routes: vec![route] };
    let mapping = Mapping::new(file).expect("the fuzz mapping is valid");
    let readers: Vec<Box<dyn Iterator<Item = storbench_bench::workload::replay::log::Read>>> = vec![
        Box::new(postgres::CsvLog::new(bytes)),
        Box::new(postgres::StderrLog::new(bytes, postgres::DEFAULT_PREFIX).expect("the default prefix")),
        Box::new(mysql::GeneralLog::new(bytes)),
        Box::new(mysql::SlowLog::new(bytes)),
        Box::new(storbench::RequestLog::new(bytes)),
        Box::new(WebLog::new(bytes, mapping)),
    ];
    for reader in readers {
        for read in reader.take(1 << 20) {
            let line = line_of(&read);
            assert!((1..=lines).contains(&line), "line {line} of {lines}");
        }
    }
}

/// A block trace (`storbench fingerprint`, `replay-trace` and `io --like` read them): its
/// fingerprint is made or the file refused, without a panic and with memory bounded by
/// what a real capture can hold, and a fingerprint made holds together.
pub fn trace(bytes: &[u8]) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("t.sbtrace");
    std::fs::write(&path, bytes).expect("the trace written");
    if let Ok((_, f)) = storbench_bench::blocktrace::fingerprint::of_file(&path) {
        assert!(f.reads + f.writes + f.flushes + f.discards <= f.requests, "{f:?}");
        assert!(f.read_fraction.is_finite() && (0.0..=1.0).contains(&f.read_fraction), "{f:?}");
        assert!(f.duration_s.is_finite() && f.duration_s >= 0.0, "{f:?}");
    }
}

/// What a rebuild reading reads (`/proc/mdstat`, btrfs-progs' replace, balance and scrub
/// status): any bytes give readings whose percent is 0 to 100, or nothing; never a panic.
pub fn rebuild_status(bytes: &[u8]) {
    use storbench_bench::monitor::rebuild::{RebuildActivity, btrfs, md};
    let in_range = |r: &RebuildActivity| {
        assert!(r.done_pct.is_none_or(|p| (0.0..=100.0).contains(&p)), "{r:?}");
    };
    let dir = tempfile::tempdir().expect("a temporary directory");
    std::fs::create_dir(dir.path().join("proc")).expect("proc/");
    std::fs::write(dir.path().join("proc/mdstat"), bytes).expect("writing the input");
    let text = String::from_utf8_lossy(bytes);
    let mut names: Vec<String> = md::parse_mdstat(&text).into_iter().map(|e| e.name).collect();
    names.push("md0".into());
    for reading in md::sample(dir.path(), &names) {
        in_range(&reading);
    }
    for parse in [btrfs::parse_replace, btrfs::parse_balance, btrfs::parse_scrub] {
        if let Some(btrfs::Status::Running(reading)) = parse(&text) {
            in_range(&reading);
        }
    }
}
