//! Helpers shared by the integration tests.

use assert_cmd::Command;
use std::path::{Path, PathBuf};

/// The storbench binary with a clean, predictable environment.
pub fn storbench() -> Command {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin!("storbench"));
    cmd.env("RUST_BACKTRACE", "1").env_remove("RUST_LIB_BACKTRACE");
    cmd
}

/// A temp dir on the real disk (not tmpfs), so O_DIRECT and disk counters are exercised.
pub fn disk_tempdir() -> tempfile::TempDir {
    let base = std::env::var_os("STORBENCH_TEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/tmp"));
    tempfile::Builder::new().prefix("storbench-test-").tempdir_in(base).expect("temp dir")
}

/// The only bundle directory under `root` (for single-job runs).
pub fn only_bundle(root: &Path) -> PathBuf {
    let dirs: Vec<PathBuf> =
        std::fs::read_dir(root).expect("results dir").map(|e| e.unwrap().path()).collect();
    assert_eq!(dirs.len(), 1, "expected one bundle in {}: {dirs:?}", root.display());
    dirs[0].clone()
}

pub fn json(bytes: &[u8]) -> serde_json::Value {
    serde_json::from_slice(bytes)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(bytes)))
}

/// `storbench io --target DIR --output-dir DIR/results --ramp 0 ARGS`, expected to succeed.
pub fn io_in(dir: &Path, args: &[&str]) -> assert_cmd::assert::Assert {
    storbench()
        .args(["io", "--ramp", "0", "--target"])
        .arg(dir)
        .arg("--output-dir")
        .arg(dir.join("results"))
        .args(args)
        .assert()
        .success()
}

/// Standard output parsed as JSON.
pub fn stdout_json(a: &assert_cmd::assert::Assert) -> serde_json::Value {
    json(&a.get_output().stdout)
}

pub fn stderr_text(a: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&a.get_output().stderr).into_owned()
}
