//! The module's rules, each on real files: links, FIFOs and devices where a file is expected,
//! exclusive creation, removal by identity, replacing only storbench's own.

use super::*;
use std::os::unix::fs::symlink;
use std::path::Path;

fn fifo(path: &Path) {
    rustix::fs::mknodat(rustix::fs::CWD, path, rustix::fs::FileType::Fifo, 0o600.into(), 0).unwrap();
}

#[test]
fn create_never_replaces_what_is_there_a_dangling_link_included() {
    let dir = tempfile::tempdir().unwrap();
    let (file, link, pipe) = (dir.path().join("f"), dir.path().join("l"), dir.path().join("p"));
    std::fs::write(&file, b"mine").unwrap();
    symlink(dir.path().join("nowhere"), &link).unwrap();
    fifo(&pipe);
    let e = create(&file, How::WRITE).unwrap_err();
    assert!(matches!(e, FileError::Exists { kind: FileKind::File, .. }), "{e}");
    assert!(e.to_string().contains("already exists (a regular file) and storbench did not create it"), "{e}");
    assert!(matches!(create(&link, How::WRITE), Err(FileError::Link { .. })));
    assert!(matches!(create(&pipe, How::WRITE), Err(FileError::Exists { kind: FileKind::Fifo, .. })));
    assert_eq!(std::fs::read(&file).unwrap(), b"mine");
    assert!(!dir.path().join("nowhere").exists(), "the link's target was not created");
}

#[test]
fn a_link_anywhere_on_the_way_is_refused_by_name_and_resolve_follows_the_users_once() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real");
    std::fs::create_dir(&real).unwrap();
    let via = dir.path().join("via");
    symlink(&real, &via).unwrap();
    match create(&via.join("new"), How::WRITE) {
        Err(FileError::Link { path }) => assert_eq!(path, via),
        other => panic!("a link on the way must be refused: {other:?}"),
    }
    assert!(!real.join("new").exists());
    let resolved = resolve(&via.join("new")).unwrap();
    assert_eq!(resolved, real.canonicalize().unwrap().join("new"), "the user's link is followed once");
    create(&resolved, How::WRITE).expect("the resolved path has no link");
    assert_eq!(resolve_parent(&via).unwrap(), dir.path().canonicalize().unwrap().join("via"));
}

#[test]
fn open_takes_only_a_regular_file_and_never_waits_on_a_fifo() {
    let dir = tempfile::tempdir().unwrap();
    let pipe = dir.path().join("p");
    fifo(&pipe);
    let started = std::time::Instant::now();
    let e = open(&pipe, How::READ).unwrap_err();
    assert!(started.elapsed().as_secs() < 2, "a FIFO must be refused at once");
    assert!(e.to_string().contains("is a FIFO, not a regular file"), "{e}");
    assert!(matches!(open(Path::new("/dev/null"), How::WRITE), Err(FileError::NotRegular { .. })));
    assert!(matches!(open(dir.path(), How::READ), Err(FileError::NotRegular { kind: FileKind::Dir, .. })));
    let link = dir.path().join("l");
    std::fs::write(dir.path().join("f"), b"x").unwrap();
    symlink(dir.path().join("f"), &link).unwrap();
    assert!(matches!(open(&link, How::READ), Err(FileError::Link { .. })));
    assert!(open(&dir.path().join("f"), How::READ).is_ok());
}

#[test]
fn only_storbenchs_own_files_are_removed_or_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let theirs = dir.path().join("theirs");
    std::fs::write(&theirs, b"data").unwrap();
    assert!(matches!(remove_own(&theirs), Err(FileError::NotOurs { .. })));
    assert!(matches!(write_atomic(&theirs, b"over"), Err(FileError::Exists { .. })));
    assert_eq!(std::fs::read(&theirs).unwrap(), b"data");
    assert_eq!(dir.path().read_dir().unwrap().count(), 1, "no temporary file is left behind");

    let ours = dir.path().join("ours");
    write_atomic(&ours, b"one").unwrap();
    write_atomic(&ours, b"two").expect("storbench's own file may be replaced");
    assert_eq!(std::fs::read(&ours).unwrap(), b"two");
    // The name now holds another file (the user's): it is left alone.
    std::fs::remove_file(&ours).unwrap();
    std::fs::write(&ours, b"user").unwrap();
    assert!(matches!(remove_own(&ours), Err(FileError::NotOurs { .. })));
    assert_eq!(std::fs::read(&ours).unwrap(), b"user");
    claim(FileId::of(std::fs::File::open(&ours).unwrap()).unwrap());
    assert!(remove_own(&ours).unwrap(), "a claimed file may be removed");
    assert!(!remove_own(&ours).unwrap(), "nothing there");
}

#[test]
fn create_dirs_makes_what_is_missing_and_says_what_it_made() {
    let dir = tempfile::tempdir().unwrap();
    let deep = dir.path().join("a/b/c");
    let made = create_dirs(&deep).unwrap();
    let names: Vec<_> = made.iter().map(|(p, _)| p.strip_prefix(dir.path()).unwrap().to_owned()).collect();
    assert_eq!(names, ["a", "a/b", "a/b/c"].map(std::path::PathBuf::from));
    assert!(create_dirs(&deep).unwrap().is_empty(), "nothing to make");
    for (path, _) in made.iter().rev() {
        assert!(remove_own_dir(path).unwrap());
    }
    std::fs::write(dir.path().join("file"), b"").unwrap();
    assert!(matches!(create_dirs(&dir.path().join("file/x")), Err(FileError::NotDir { .. })));
}

#[test]
fn rename_moves_only_storbenchs_file_and_only_onto_nothing_or_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let (tmp, next, user) = (dir.path().join("tmp"), dir.path().join("next"), dir.path().join("user"));
    drop(create(&tmp, How::WRITE).unwrap());
    std::fs::write(&user, b"keep").unwrap();
    let e = rename(&tmp, &user).unwrap_err();
    assert!(matches!(e, FileError::Exists { .. }), "{e:?}");
    rename(&tmp, &next).unwrap();
    assert!(matches!(rename(&user, &tmp), Err(FileError::NotOurs { .. })));
    assert_eq!(std::fs::read(&user).unwrap(), b"keep");
    assert!(remove_own(&next).unwrap(), "the renamed file is still storbench's");
}

#[test]
fn open_or_create_leaves_an_existing_file_as_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.lock");
    std::fs::write(&path, b"someone's").unwrap();
    let (_, created) = open_or_create(&path, How::READ_WRITE).unwrap();
    assert!(!created);
    assert_eq!(std::fs::read(&path).unwrap(), b"someone's", "not truncated");
    let fresh = dir.path().join("y.lock");
    assert!(open_or_create(&fresh, How::READ_WRITE).unwrap().1);
}

#[test]
fn a_file_is_opened_with_exactly_the_sync_flags_asked_for() {
    use rustix::fs::{OFlags, fcntl_getfl};
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let path = dir.path().join("log");
    drop(create(&path, How::WRITE).unwrap());
    let flags = |how: How| fcntl_getfl(open(&path, how).unwrap()).unwrap();
    // O_DSYNC alone (rustix's OFlags::DSYNC is O_SYNC's value), O_SYNC, or neither.
    let (dsync, sync) =
        (OFlags::from_bits_retain(libc::O_DSYNC as u32), OFlags::from_bits_retain(libc::O_SYNC as u32));
    let d = flags(How::WRITE.dsync(true));
    assert!(d.contains(dsync) && !d.contains(sync), "{d:?}");
    assert!(flags(How::WRITE.sync(true)).contains(sync));
    assert!(!flags(How::WRITE).intersects(sync));
}
