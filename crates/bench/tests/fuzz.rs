//! Fuzzing storbench_bench's readers of files on stable, inside `cargo test` (fuzz/harness.rs
//! says how; fuzz/checks/bench.rs holds what each target promises, shared with the cargo-fuzz
//! targets): the integrity journal and page checker, the integrity and mailbox manifests, the
//! latency histograms, a replay's request logs and the rebuild status readers (mdstat,
//! btrfs-progs' status output), from the files a short run wrote (fuzz/corpus/), damaged. Checksums
//! would stop nearly every damaged record or page at the first check, so the journal and page
//! targets also re-seal what they damaged, and build records and histograms field by field
//! from the edges of each field's type.

#[path = "../../../fuzz/checks/bench.rs"]
mod checks;
#[path = "../../../fuzz/harness.rs"]
mod harness;

use base64::Engine as _;
use harness::{checking, config, json_damaged, mutated, seeds};
use proptest::prelude::*;
use storbench_bench::workload::integrity::{Checked, PAGE, PageId, SECTOR, SECTORS, check_page, write_page};

fn corpus(target: &str) -> Vec<Vec<u8>> {
    seeds(env!("CARGO_MANIFEST_DIR"), target)
}

/// The journal's layout (journal.rs): an 8-byte header, then 24-byte records whose last 4
/// bytes are the crc32c of the 20 before.
const HEADER: usize = 8;
const RECORD: usize = 24;

/// `bytes` with every whole record's checksum made right again, so that damage to its fields
/// reaches the journal's rules instead of stopping at the checksum.
fn resealed_journal(mut bytes: Vec<u8>) -> Vec<u8> {
    for record in bytes.get_mut(HEADER..).unwrap_or_default().chunks_exact_mut(RECORD) {
        let crc = crc32c::crc32c(&record[..20]);
        record[20..].copy_from_slice(&crc.to_le_bytes());
    }
    bytes
}

/// A u64 where a reader's arithmetic breaks: small, near 2^32, 2^60 and 2^64, or any.
fn edge_u64() -> impl Strategy<Value = u64> {
    prop_oneof![
        0u64..300,
        (u64::MAX - 300)..=u64::MAX,
        (1u64 << 32) - 2..(1u64 << 32) + 2,
        (1u64 << 60) - 2..(1u64 << 60) + 2,
        any::<u64>(),
    ]
}

/// One journal record, sealed: (kind, page, generation, file, count byte).
fn record() -> impl Strategy<Value = [u8; RECORD]> {
    (0u8..6, edge_u64(), edge_u64(), prop_oneof![0u16..3, any::<u16>()], any::<u8>()).prop_map(
        |(kind, page, generation, file, count)| {
            let mut r = [0u8; RECORD];
            r[..8].copy_from_slice(&page.to_le_bytes());
            r[8..16].copy_from_slice(&generation.to_le_bytes());
            r[16..18].copy_from_slice(&file.to_le_bytes());
            r[18] = kind;
            r[19] = count;
            let crc = crc32c::crc32c(&r[..20]);
            r[20..].copy_from_slice(&crc.to_le_bytes());
            r
        },
    )
}

/// The page a page input holds (after its 10-byte place) with its checksum made right.
fn resealed_page(mut bytes: Vec<u8>) -> Vec<u8> {
    let (id, mut page) = checks::split_page(&bytes);
    const CRC_AT: usize = 20;
    let crc = crc32c::crc32c_append(crc32c::crc32c(&page[..CRC_AT]), &page[CRC_AT + 4..]);
    page[CRC_AT..CRC_AT + 4].copy_from_slice(&crc.to_le_bytes());
    bytes.truncate(0);
    bytes.extend_from_slice(&id.file.to_le_bytes());
    bytes.extend_from_slice(&id.page.to_le_bytes());
    bytes.extend_from_slice(&page);
    bytes
}

/// An uncompressed HdrHistogram V2 encoding from its header fields, then `payload`, as one
/// `.hlog` line.
fn hlog_line(payload_len: u32, digits: u32, low: u64, high: u64, payload: &[u8]) -> String {
    let mut b = Vec::new();
    b.extend_from_slice(&0x1c84_9313u32.to_be_bytes());
    b.extend_from_slice(&payload_len.to_be_bytes());
    b.extend_from_slice(&0u32.to_be_bytes());
    b.extend_from_slice(&digits.to_be_bytes());
    b.extend_from_slice(&low.to_be_bytes());
    b.extend_from_slice(&high.to_be_bytes());
    b.extend_from_slice(&1.0f64.to_be_bytes());
    b.extend_from_slice(payload);
    format!("Tag=read,0.000,1.000,0.000,{}\n", base64::engine::general_purpose::STANDARD.encode(b))
}

proptest! {
    #![proptest_config(config(2000))]

    #[test]
    fn a_damaged_journal_loads_or_is_refused(bytes in mutated(corpus("journal"), 6), reseal in any::<bool>()) {
        let bytes = if reseal { resealed_journal(bytes.0) } else { bytes.0 };
        checking(|| checks::journal(&bytes));
    }

    #[test]
    fn a_journal_of_any_records_loads_or_is_refused(
        records in proptest::collection::vec(record(), 0..40),
        tail in proptest::collection::vec(any::<u8>(), 0..RECORD * 2),
    ) {
        let mut bytes = corpus("journal")[0][..HEADER].to_vec();
        bytes.extend(records.iter().flatten());
        bytes.extend(tail);
        checking(|| checks::journal(&bytes));
    }

    #[test]
    fn a_damaged_page_is_named_by_its_class(bytes in mutated(corpus("page"), 6), reseal in any::<bool>()) {
        let bytes = if reseal { resealed_page(bytes.0) } else { bytes.0 };
        checking(|| checks::page(&bytes));
    }

    /// What the checker is for: a page damaged anywhere, its checksum left as the storage
    /// left it, is never taken for an intact page.
    #[test]
    fn a_page_damaged_anywhere_is_never_intact(
        pick in any::<proptest::sample::Index>(),
        damage in proptest::collection::vec((0..PAGE, 1u8..=255), 1..8),
    ) {
        let seeds = corpus("page");
        let (id, mut page) = checks::split_page(&seeds[pick.index(seeds.len())]);
        prop_assert!(matches!(check_page(&page, id), Checked::Ok { .. }), "the seed is an intact page");
        for (at, xor) in damage {
            page[at] ^= xor;
        }
        let checked = check_page(&page, id);
        prop_assert!(!matches!(checked, Checked::Ok { .. } | Checked::Unwritten), "{checked}");
    }

    /// Sectors of two writes of one page (a write torn by a crash) are named torn, with the
    /// generation of each sector; sectors of one write are that write.
    #[test]
    fn a_page_of_two_writes_is_torn_sector_by_sector(
        file in 0u16..2,
        page in edge_u64(),
        older in 1u64..u64::MAX,
        mask in any::<u16>(),
        seed in any::<u64>(),
    ) {
        let id = PageId { file, page };
        let newer = older + 1;
        let (mut a, mut b) = (vec![0u8; PAGE], vec![0u8; PAGE]);
        write_page(&mut a, id, older, seed);
        write_page(&mut b, id, newer, seed);
        let mut sectors = [older; SECTORS];
        for (i, s) in sectors.iter_mut().enumerate().filter(|(i, _)| mask & (1 << i) != 0) {
            a[i * SECTOR..(i + 1) * SECTOR].copy_from_slice(&b[i * SECTOR..(i + 1) * SECTOR]);
            *s = newer;
        }
        let expected = match mask {
            0 => Checked::Ok { generation: older },
            u16::MAX => Checked::Ok { generation: newer },
            _ => Checked::Torn { sectors },
        };
        prop_assert_eq!(check_page(&a, id), expected);
    }

    #[test]
    fn a_damaged_histogram_log_reads_or_is_refused(bytes in mutated(corpus("hlog"), 6)) {
        checking(|| checks::hlog(&bytes));
    }

    #[test]
    fn a_histogram_of_any_header_reads_or_is_refused(
        payload_len in prop_oneof![0u32..64, Just(u32::MAX), any::<u32>()],
        digits in prop_oneof![0u32..7, any::<u32>()],
        low in edge_u64(),
        high in edge_u64(),
        payload in proptest::collection::vec(any::<u8>(), 0..64),
    ) {
        let line = hlog_line(payload_len, digits, low, high, &payload);
        checking(|| checks::hlog(line.as_bytes()));
    }

    #[test]
    fn a_damaged_integrity_manifest_loads_or_is_refused(bytes in json_damaged(corpus("integrity_manifest"), 6)) {
        checking(|| checks::integrity_manifest(&bytes));
    }

    #[test]
    fn a_damaged_request_log_is_read_line_by_line_or_its_lines_named(bytes in mutated(corpus("replay_log"), 6)) {
        checking(|| checks::replay_log(&bytes));
    }

    #[test]
    fn a_damaged_block_trace_is_fingerprinted_or_refused(bytes in mutated(corpus("trace"), 6)) {
        checking(|| checks::trace(&bytes));
    }

    #[test]
    fn a_trace_of_records_from_the_edges_of_their_fields_is_fingerprinted_or_refused(
        records in proptest::collection::vec((edge_u64(), edge_u64(), any::<u32>(), any::<u32>(), 0u8..6), 1..12),
    ) {
        let mut bytes = corpus("trace").remove(0);
        let header_len = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
        bytes.truncate(16 + header_len);
        for (issue, sector, len, latency, op) in records {
            let mut r = [0u8; 32];
            r[..8].copy_from_slice(&issue.to_le_bytes());
            r[8..16].copy_from_slice(&sector.to_le_bytes());
            r[16..20].copy_from_slice(&len.to_le_bytes());
            r[20..24].copy_from_slice(&latency.to_le_bytes());
            r[24] = op;
            bytes.extend_from_slice(&r);
        }
        checking(|| checks::trace(&bytes));
    }

    #[test]
    fn a_damaged_mdstat_or_btrfs_status_gives_readings_in_range_or_none(bytes in mutated(corpus("rebuild_status"), 6)) {
        checking(|| checks::rebuild_status(&bytes));
    }

    #[test]
    fn a_damaged_mailbox_manifest_loads_or_is_refused(bytes in json_damaged(corpus("mailbox_manifest"), 6)) {
        checking(|| checks::mailbox_manifest(&bytes));
    }
}

#[test]
fn every_seed_is_what_storbench_wrote_and_reads() {
    for bytes in corpus("journal") {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("j"), &bytes).unwrap();
        let expected = storbench_bench::workload::integrity::Journal::load(&dir.path().join("j")).unwrap();
        assert!(expected.acknowledgements > 0 && expected.ignored_tail == 0);
    }
    for bytes in corpus("page") {
        let (id, page) = checks::split_page(&bytes);
        assert!(matches!(check_page(&page, id), Checked::Ok { .. }));
    }
    for bytes in corpus("hlog") {
        assert!(
            !storbench_bench::metrics::read_hlog(std::str::from_utf8(&bytes).unwrap()).unwrap().is_empty()
        );
    }
    for bytes in corpus("integrity_manifest") {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("storbench-integrity.json"), &bytes).unwrap();
        storbench_bench::workload::integrity::Layout::new(dir.path()).load().unwrap();
    }
    for bytes in corpus("replay_log") {
        let text = std::str::from_utf8(&bytes).unwrap();
        let format =
            storbench_bench::workload::replay::log::Format::detect(text).expect("a log of a known format");
        assert!(!format.name().is_empty());
    }
    for bytes in corpus("rebuild_status") {
        use storbench_bench::monitor::rebuild::btrfs;
        let text = std::str::from_utf8(&bytes).unwrap();
        let btrfs_running = [btrfs::parse_replace, btrfs::parse_balance, btrfs::parse_scrub]
            .iter()
            .any(|parse| matches!(parse(text), Some(btrfs::Status::Running(_))));
        let mdstat = storbench_bench::monitor::rebuild::md::parse_mdstat(text);
        assert!(btrfs_running || mdstat.len() == 1, "{text}");
    }
    for bytes in corpus("trace") {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("t.sbtrace"), &bytes).unwrap();
        let (_, f) =
            storbench_bench::blocktrace::fingerprint::of_file(&dir.path().join("t.sbtrace")).unwrap();
        assert_eq!(f.requests, 200);
    }
    for bytes in corpus("mailbox_manifest") {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("storbench-mailbox.json"), &bytes).unwrap();
        assert!(storbench_bench::workload::mailbox::Manifest::load(dir.path()).unwrap().is_some());
    }
}
