//! Helpers shared by the integration tests.

use assert_cmd::Command;
use std::path::{Path, PathBuf};

/// The storbench binary with a clean, predictable environment.
pub fn storbench() -> Command {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin!("storbench"));
    cmd.env("RUST_BACKTRACE", "1")
        .env_remove("RUST_LIB_BACKTRACE");
    cmd
}

/// A temp dir on the real disk (not tmpfs), so O_DIRECT and disk counters are exercised.
pub fn disk_tempdir() -> tempfile::TempDir {
    let base = std::env::var_os("STORBENCH_TEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/tmp"));
    tempfile::Builder::new()
        .prefix("storbench-test-")
        .tempdir_in(base)
        .expect("temp dir")
}

/// The only bundle directory under `root` (for single-job runs).
pub fn only_bundle(root: &Path) -> PathBuf {
    let dirs: Vec<PathBuf> = std::fs::read_dir(root)
        .expect("results dir")
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(
        dirs.len(),
        1,
        "expected one bundle in {}: {dirs:?}",
        root.display()
    );
    dirs[0].clone()
}

pub fn json(bytes: &[u8]) -> serde_json::Value {
    serde_json::from_slice(bytes)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(bytes)))
}
