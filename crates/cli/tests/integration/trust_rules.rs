//! Issue 21's rules on files, as a hostile user meets them: a link, a FIFO or a user's file at
//! a name storbench uses is refused by name or left exactly as it is, never followed,
//! truncated, replaced or removed. Each test plants something the earlier block-lists missed.

use crate::support::{disk_tempdir, refused, storbench};
use std::os::unix::fs::symlink;
use std::path::Path;
use std::time::{Duration, Instant};

fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo").arg(path).status().expect("mkfifo runs");
    assert!(status.success());
}

fn load_sqlite(db: &Path) -> assert_cmd::Command {
    let mut cmd = storbench();
    cmd.args(["oltp", "load", "--db-size", "1MB", "--path"]).arg(db).timeout(Duration::from_secs(120));
    cmd
}

#[test]
fn a_planted_lock_link_beside_a_sqlite_database_is_refused_and_its_target_untouched() {
    let dir = disk_tempdir();
    let victim = dir.path().join("precious.txt");
    std::fs::write(&victim, "the user's data\n").unwrap();
    let db = dir.path().join("x.db");
    symlink(&victim, dir.path().join("x.db.lock")).unwrap();
    let err = refused(&mut load_sqlite(&db), "x.db.lock is a symbolic link");
    assert!(err.contains("does not follow links"), "{err}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "the user's data\n", "emptied through the link");
    assert!(!db.exists(), "nothing was loaded");
    // A dangling one is refused too, and nothing is created where it points.
    std::fs::remove_file(dir.path().join("x.db.lock")).unwrap();
    symlink(dir.path().join("elsewhere"), dir.path().join("x.db.lock")).unwrap();
    refused(&mut load_sqlite(&db), "x.db.lock is a symbolic link");
    assert!(!dir.path().join("elsewhere").exists());
}

#[test]
fn a_users_own_file_at_the_lock_name_is_locked_as_it_is_never_rewritten() {
    let dir = disk_tempdir();
    let db = dir.path().join("mine.db");
    let lock = dir.path().join("mine.db.lock");
    std::fs::write(&lock, "notes I keep here\nsecond line\n").unwrap();
    load_sqlite(&db).assert().success();
    assert_eq!(std::fs::read_to_string(&lock).unwrap(), "notes I keep here\nsecond line\n");
    // storbench's own lock file is rewritten with its holder as before.
    let db2 = dir.path().join("ours.db");
    load_sqlite(&db2).assert().success();
    let text = std::fs::read_to_string(dir.path().join("ours.db.lock")).unwrap();
    assert!(text.starts_with("storbench pid "), "{text}");
}

#[test]
fn a_dangling_link_as_the_database_path_is_refused_and_kept() {
    let dir = disk_tempdir();
    let link = dir.path().join("link.db");
    symlink(dir.path().join("absent.db"), &link).unwrap();
    refused(&mut load_sqlite(&link), "link.db is a symbolic link");
    assert!(link.symlink_metadata().unwrap().file_type().is_symlink(), "the link was replaced");
    assert!(!dir.path().join("absent.db").exists(), "the link was followed");
}

#[test]
fn a_fifo_as_the_database_is_refused_at_once() {
    let dir = disk_tempdir();
    let fifo = dir.path().join("f.db");
    mkfifo(&fifo);
    let started = Instant::now();
    let mut run = storbench();
    run.args(["oltp", "check", "--path"]).arg(&fifo).timeout(Duration::from_secs(20));
    refused(&mut run, "f.db is a FIFO, not a regular file");
    assert!(started.elapsed() < Duration::from_secs(10), "it waited on the FIFO");
}

#[test]
fn a_reload_removes_sqlites_own_log_not_a_users_file_of_a_similar_name() {
    let dir = disk_tempdir();
    let db = dir.path().join("s.db");
    load_sqlite(&db).assert().success();
    // `s.db.wal` is not SQLite's log (that is `s.db-wal`): it is the user's.
    let users = dir.path().join("s.db.wal");
    std::fs::write(&users, "mine").unwrap();
    load_sqlite(&db).assert().success();
    assert_eq!(std::fs::read_to_string(&users).unwrap(), "mine");
}

#[test]
fn an_io_target_file_that_is_a_dangling_link_or_a_link_to_a_device_is_refused_without_force() {
    let dir = disk_tempdir();
    let data = dir.path().join("storbench-io.dat");
    let args = ["io", "--size", "4MiB", "--runtime", "1s", "--ramp", "0", "--rw", "randwrite"];
    for (to, what) in
        [(dir.path().join("gone"), "dangling"), (Path::new("/dev/null").to_path_buf(), "device")]
    {
        let _ = std::fs::remove_file(&data);
        symlink(&to, &data).unwrap();
        let mut cmd = storbench();
        cmd.args(args).arg("--target").arg(dir.path()).arg("--output-dir").arg(dir.path().join("r"));
        let err = refused(&mut cmd, "storbench-io.dat is a symbolic link");
        assert!(err.contains("never writes through a link or replaces one"), "{what}: {err}");
        assert!(data.symlink_metadata().unwrap().file_type().is_symlink(), "{what}: the link was replaced");
        assert!(!dir.path().join("gone").exists(), "{what}: the link was followed");
        // --force does not make a link a file either.
        let mut forced = storbench();
        forced.args(args).arg("--force").arg("--target").arg(dir.path());
        refused(&mut forced, "is a symbolic link");
    }
}

#[test]
fn an_io_target_that_is_a_fifo_is_refused_before_anything_waits() {
    let dir = disk_tempdir();
    let fifo = dir.path().join("pipe");
    mkfifo(&fifo);
    let started = Instant::now();
    let mut cmd = storbench();
    cmd.args(["io", "--runtime", "1s", "--ramp", "0", "--target"])
        .arg(&fifo)
        .timeout(Duration::from_secs(20));
    refused(&mut cmd, "pipe is a FIFO, not a regular file, directory or block device");
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[test]
fn a_sidecar_mark_planted_beside_a_users_file_does_not_make_it_storbenchs() {
    let dir = disk_tempdir();
    let data = dir.path().join("storbench-io.dat");
    std::fs::write(&data, vec![7u8; 1 << 20]).unwrap();
    // The mark of a storbench without xattrs, but not naming this file.
    std::fs::write(dir.path().join(".storbench-io.dat.storbench"), "v1 filling size=1048576").unwrap();
    let mut cmd = storbench();
    cmd.args(["io", "--runtime", "1s", "--ramp", "0", "--rw", "randwrite", "--target"]).arg(dir.path());
    refused(&mut cmd, "exists and storbench did not create it");
    assert_eq!(std::fs::read(&data).unwrap(), vec![7u8; 1 << 20], "the user's file was refilled");
}

#[test]
fn one_directory_given_twice_as_targets_is_refused_before_anything_runs() {
    let dir = disk_tempdir();
    let t = dir.path().join("t1");
    std::fs::create_dir(&t).unwrap();
    let results = dir.path().join("results");
    for second in [format!("{}/", t.display()), format!("{}/../t1/.", t.display())] {
        let mut cmd = storbench();
        cmd.args(["run", "--output-dir"]).arg(&results).arg("--target").arg(format!("a={}", t.display()));
        cmd.arg("--target").arg(format!("b={second}"));
        let err = refused(&mut cmd, "is the same place as configuration `a`'s");
        assert!(err.contains("configuration `b`'s target"), "{err}");
        assert!(!results.exists(), "nothing may be written: {second}");
        assert_eq!(std::fs::read_dir(&t).unwrap().count(), 0, "the target was touched");
    }
}

#[test]
fn a_plan_whose_integrity_runs_keep_their_files_and_repeat_is_refused_at_the_check() {
    let dir = disk_tempdir();
    let plan = dir.path().join("plan.toml");
    std::fs::write(
        &plan,
        format!(
            "name = \"k\"\n[[configuration]]\nname = \"here\"\ntarget = \"{}\"\n[[workload]]\nkind = \"integrity\"\nkeep = true\n",
            dir.path().display()
        ),
    )
    .unwrap();
    let results = dir.path().join("results");
    let mut cmd = storbench();
    cmd.args(["run", "--output-dir"]).arg(&results).arg(&plan);
    let err =
        refused(&mut cmd, "keeps its files (keep = true) on here, so run integrity.here.r2 would find them");
    assert!(err.contains("set repetitions = 1"), "{err}");
    assert!(!results.exists() && !dir.path().join("storbench-integrity").exists());
}

#[test]
fn a_usage_text_in_an_error_keeps_its_url_form_whole() {
    for (url, form) in [
        ("postgres://", "postgres://user[:password]@host[:port]/dbname"),
        ("mysql://", "mysql://user[:password]@host[:port]/dbname"),
    ] {
        let mut cmd = storbench();
        cmd.args(["oltp", "load", "--url", url]);
        let err = refused(&mut cmd, form);
        assert!(!err.contains("[:***@"), "{err}");
    }
}

#[test]
fn control_characters_in_a_plan_or_a_run_name_are_refused_and_in_a_path_shown_escaped() {
    let dir = disk_tempdir();
    let plan = dir.path().join("plan.toml");
    let target = dir.path().display().to_string();
    for (key_line, what) in [
        ("description = \"RAID\\u0000 10\"", "a description holds a control character (U+0000)"),
        ("", "the plan's name holds a control character (U+001B)"),
    ] {
        let name = if key_line.is_empty() { "\\u001b[2Jgone" } else { "ok" };
        let text = format!(
            "name = \"{name}\"\n[[configuration]]\nname = \"c\"\ntarget = \"{target}\"\n{key_line}\n[[workload]]\nkind = \"io\"\n"
        );
        std::fs::write(&plan, text).unwrap();
        let mut cmd = storbench();
        cmd.arg("run").arg(&plan).arg("--output-dir").arg(dir.path().join("results"));
        refused(&mut cmd, what);
    }
    let mut named = storbench();
    named.args(["io", "--name", "run\u{1b}[31m", "--target"]).arg(dir.path());
    refused(&mut named, "holds a control character (U+001B)");
    assert!(!dir.path().join("results").exists());

    // A directory name may hold anything; every message shows it escaped.
    let odd = dir.path().join("t\u{1b}[31mred\u{7}");
    std::fs::create_dir(&odd).unwrap();
    let out = storbench()
        .args(["io", "--size", "1MiB", "--runtime", "1s", "--ramp", "0", "--target"])
        .arg(&odd)
        .arg("--output-dir")
        .arg(dir.path().join("results"))
        .assert()
        .success();
    let err = crate::support::stderr_text(&out);
    assert!(err.contains("t\\u{1b}[31mred\\u{7}"), "{err}");
    let raw = [&out.get_output().stderr[..], &out.get_output().stdout[..]].concat();
    assert!(!raw.contains(&0x1b) && !raw.contains(&0x07), "a raw control character reached the terminal");
}

#[test]
fn a_dangling_link_at_an_integrity_files_name_is_refused_and_survives_the_clean_up() {
    let dir = disk_tempdir();
    let link = dir.path().join("storbench-integrity.mdf");
    symlink(dir.path().join("nowhere.mdf"), &link).unwrap();
    let mut cmd = storbench();
    cmd.args(["integrity", "--duration", "2s", "--target"]).arg(dir.path());
    cmd.args(crate::integrity::SMALL).arg("--output-dir").arg(dir.path().join("results"));
    refused(&mut cmd, "storbench-integrity.mdf already exists");
    assert!(link.symlink_metadata().is_ok_and(|m| m.file_type().is_symlink()), "the user's link was removed");
    assert!(!dir.path().join("nowhere.mdf").exists(), "the link was followed");
    assert!(!dir.path().join("storbench-integrity.json").exists(), "a manifest was made");
}

#[test]
fn integrity_verify_refuses_a_fifo_journal_at_once() {
    let dir = disk_tempdir();
    let results = dir.path().join("results");
    let mut keep = storbench();
    keep.args(["integrity", "--duration", "1s", "--keep", "--target"]).arg(dir.path());
    keep.args(crate::integrity::SMALL).arg("--output-dir").arg(&results).assert().success();
    let journal = dir.path().join("storbench-integrity.journal");
    std::fs::remove_file(&journal).unwrap();
    mkfifo(&journal);
    let started = Instant::now();
    let mut verify = storbench();
    verify.args(["integrity", "verify", "--target"]).arg(dir.path()).timeout(Duration::from_secs(20));
    refused(&mut verify, "storbench-integrity.journal is a FIFO, not a regular file");
    assert!(started.elapsed() < Duration::from_secs(10), "verify waited on the FIFO");
}

#[test]
fn a_run_on_a_database_that_is_not_there_leaves_nothing_behind() {
    let dir = disk_tempdir();
    let mut run = storbench();
    run.args(["oltp", "run", "--db-size", "1MB", "--run-time", "1s", "--path"])
        .arg(dir.path().join("none.db"));
    run.arg("--output-dir").arg(dir.path().join("results"));
    refused(&mut run, "no database at");
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn places_named_through_the_users_own_links_are_followed_once_and_work() {
    let dir = disk_tempdir();
    let real = dir.path().join("real");
    std::fs::create_dir(&real).unwrap();
    let via = dir.path().join("via");
    symlink(&real, &via).unwrap();
    let results = via.join("results");
    storbench()
        .args(["io", "--size", "1MiB", "--runtime", "1s", "--ramp", "0", "--target"])
        .arg(&via)
        .arg("--output-dir")
        .arg(&results)
        .assert()
        .success();
    assert!(real.join("storbench-io.dat").is_file() && real.join("results").is_dir());
    load_sqlite(&via.join("x.db")).assert().success();
    assert!(real.join("x.db").is_file());
    let mut keep = storbench();
    keep.args(["integrity", "--duration", "1s", "--keep", "--target"]).arg(via.join("integ"));
    keep.args(crate::integrity::SMALL).arg("--output-dir").arg(&results).assert().success();
    let mut verify = storbench();
    verify.args(["integrity", "verify", "--target"]).arg(via.join("integ")).assert().success();
}
