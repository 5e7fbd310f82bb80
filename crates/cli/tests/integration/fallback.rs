//! Where the kernel refuses io_uring (a seccomp policy, io_uring_disabled), storbench falls
//! back to psync with a warning and still measures. The refusal is made real for one child
//! process with a seccomp filter that fails io_uring_setup with EPERM, as container runtimes
//! do, so no other test is disturbed.

use crate::support::{disk_tempdir, stderr_text, stdout_json};
use assert_cmd::assert::OutputAssertExt;
use std::os::unix::process::CommandExt;

/// io_uring_setup's syscall number (the same on x86_64 and aarch64).
const SYS_IO_URING_SETUP: u32 = 425;

/// Installs, in the calling process, a filter that makes io_uring_setup fail with EPERM.
fn deny_io_uring() -> std::io::Result<()> {
    use libc::{BPF_ABS, BPF_JEQ, BPF_JMP, BPF_K, BPF_LD, BPF_RET, BPF_W, sock_filter, sock_fprog};
    const SECCOMP_RET_ALLOW: u32 = 0x7fff_0000;
    const SECCOMP_RET_ERRNO: u32 = 0x0005_0000;
    let stmt = |code: u32, k: u32| sock_filter { code: code as u16, jt: 0, jf: 0, k };
    let filter = [
        // Load the syscall number (offset 0 of seccomp_data).
        stmt(BPF_LD | BPF_W | BPF_ABS, 0),
        sock_filter { code: (BPF_JMP | BPF_JEQ | BPF_K) as u16, jt: 0, jf: 1, k: SYS_IO_URING_SETUP },
        stmt(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | libc::EPERM as u32),
        stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    ];
    let prog = sock_fprog { len: filter.len() as u16, filter: filter.as_ptr() as *mut sock_filter };
    // SAFETY: prctl with these arguments only changes this process's syscall policy; `prog`
    // and `filter` outlive the call, which copies them into the kernel.
    unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
            || libc::prctl(libc::PR_SET_SECCOMP, libc::SECCOMP_MODE_FILTER, &prog as *const sock_fprog) != 0
        {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

#[test]
fn without_io_uring_the_job_runs_on_psync_and_says_so() {
    let dir = disk_tempdir();
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin!("storbench"));
    cmd.args(["io", "--ramp", "0", "--runtime", "1s", "--size", "8MiB", "--json", "--target"])
        .arg(dir.path())
        .arg("--output-dir")
        .arg(dir.path().join("results"));
    // SAFETY: the closure runs between fork and exec and calls only prctl, which is
    // async-signal-safe.
    unsafe {
        cmd.pre_exec(deny_io_uring);
    }
    let a = cmd.assert().success();
    let s = stdout_json(&a);
    assert_eq!(s["engine"], "psync");
    assert!(s["results"]["read"]["ios"].as_u64().unwrap() > 0);
    let warned = s["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w.as_str().unwrap().contains("io_uring is unavailable"));
    assert!(warned, "{s}");
    assert!(stderr_text(&a).contains("using psync"), "{}", stderr_text(&a));
}
