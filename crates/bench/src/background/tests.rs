use super::*;
use crate::workload::io::Pattern;

const NULL: Place<'static> =
    Place { dir: None, target: None, bundle: None, null: true, wait: false, say: &|_| {} };

fn io_of(text: &str) -> IoBackground {
    match text.parse::<Background>().unwrap().kind {
        StreamKind::Io(io) => io,
        other => panic!("{other:?}"),
    }
}

fn rebuild_of(text: &str) -> RebuildBackground {
    match text.parse::<Background>().unwrap().kind {
        StreamKind::Rebuild(r) => r,
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_spec_reads_its_keys_and_its_defaults_are_a_1_mib_sequential_write() {
    let b = io_of("io:rate=10MiB/s,bs=64k,rw=read,iodepth=4,direct=no");
    assert_eq!((b.rate, b.bs, b.read, b.iodepth, b.direct), (Some(10 << 20), 65536, true, 4, false));
    let d = io_of("io");
    assert_eq!((d.rate, d.bs, d.read, d.size, d.dir), (None, 1 << 20, false, 256 << 20, None));
    let spec = io::io_spec("bg1", &b, true);
    assert_eq!(spec.rate_iops, Some(160.0), "10 MiB/s in 64 KiB requests");
    assert_eq!(spec.pattern, Pattern::Sequential);
}

#[test]
fn a_stream_of_a_run_on_a_database_server_needs_a_directory_of_its_own() {
    let specs = ["io:rate=1MiB".parse().unwrap()];
    let server = Place { null: false, ..NULL };
    let err = build(&specs, server, &StopFlag::new()).err().expect("refused").to_string();
    assert!(err.contains("bg1") && err.contains("dir=PATH"), "{err}");
    let (streams, entries) = build(&specs, NULL, &StopFlag::new()).unwrap();
    assert!(!streams.is_empty(), "a run on the null engine runs its stream there too");
    assert_eq!(entries[0].spec, "io:rate=1MiB");
    let specs = ["rebuild:rate=1MiB".parse().unwrap()];
    let err = build(&specs, server, &StopFlag::new()).err().expect("refused").to_string();
    assert!(err.contains("source=PATH and dest=PATH"), "{err}");
    let (_, entries) = build(&specs, NULL, &StopFlag::new()).unwrap();
    assert_eq!(entries[0].kind, "rebuild");
}

#[test]
fn a_rebuild_spec_reads_its_keys_and_copies_whole_blocks_at_its_rate() {
    let r = rebuild_of("rebuild:rate=40MiB,bs=256k,size=10M,source=/tmp,dest=/tmp");
    assert_eq!((r.rate, r.bs, r.size, r.direct), (Some(40 << 20), 256 << 10, 10 << 20, true));
    let spec = rebuild::copy_spec(&r, true);
    assert_eq!((spec.block, spec.len, spec.blocks_per_sec), (256 << 10, 10 << 20, Some(160.0)));
    let d = rebuild_of("rebuild");
    assert_eq!((d.rate, d.bs, d.size, d.source, d.dest), (None, 1 << 20, 256 << 20, None, None));
    let odd = rebuild::copy_spec(&rebuild_of("rebuild:bs=1M,size=2500k"), false);
    assert_eq!(odd.len, 2 << 20, "the copy wraps after its last whole block");
    for (bad, says) in [
        ("rebuild:speed=1M", "the keys are source="),
        ("rebuild:bs=1M,size=4k", "less than one block"),
        ("rebuild:rate=0", "above 0"),
        ("cmd:", "give the command"),
    ] {
        let err = bad.parse::<Background>().unwrap_err();
        assert!(err.contains(says), "{bad}: {err}");
    }
}

#[test]
fn a_command_spec_keeps_its_whole_text_commas_and_colons_included() {
    let b: Background = "cmd:echo a,b; sleep 1:2".parse().unwrap();
    assert_eq!(b.kind, StreamKind::Cmd("echo a,b; sleep 1:2".into()));
    assert_eq!(b.text, "cmd:echo a,b; sleep 1:2");
}
