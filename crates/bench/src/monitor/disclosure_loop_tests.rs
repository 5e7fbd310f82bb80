//! The setup checks on a real disclosure: a loop device with one partition and ext4 on it,
//! gathered as a run gathers it, once misconfigured on purpose and once as a clean default.

use super::*;
use crate::target::device::tests::run;
use storbench_report::setup::{self, PageSize, Status};

const IMAGE_SIZE: u64 = 48 << 20;

/// A loop device over an image holding an MBR with one Linux partition at `start` (in
/// 512-byte sectors), with ext4 of `block` bytes on it mounted with `atime`. Drop unmounts
/// and detaches it even when the test fails.
struct LoopPartition {
    mount: PathBuf,
    device: Option<String>,
    mounted: bool,
    _dir: tempfile::TempDir,
}

impl LoopPartition {
    /// Made and mounted, or `None` after [`crate::testing::skip`] said what is missing.
    fn new(start: u32, block: u32, atime: &str) -> Option<LoopPartition> {
        if !rustix::process::geteuid().is_root() {
            crate::testing::skip("a partitioned loop device needs root", "run the tests as root");
            return None;
        }
        let dir = tempfile::tempdir_in("/var/tmp").ok()?;
        let mount = dir.path().join("mnt");
        let mut made = LoopPartition { mount, device: None, mounted: false, _dir: dir };
        match made.make(start, block, atime) {
            Ok(()) => Some(made),
            Err(why) => {
                crate::testing::skip(&why, "install util-linux (losetup, partx) and e2fsprogs (mkfs.ext4)");
                None
            }
        }
    }

    fn make(&mut self, start: u32, block: u32, atime: &str) -> Result<(), String> {
        let image = self._dir.path().join("disk.img");
        fs::write(&image, mbr(start, (IMAGE_SIZE / 512) as u32 - start)).map_err(|e| e.to_string())?;
        fs::OpenOptions::new()
            .write(true)
            .open(&image)
            .and_then(|f| f.set_len(IMAGE_SIZE))
            .map_err(|e| e.to_string())?;
        let node = run("losetup", &["--find", "--show", "--partscan", image.to_str().unwrap()])?;
        self.device = Some(node.clone());
        let part = format!("{node}p1");
        // A kernel without the MBR parser (CONFIG_MSDOS_PARTITION unset) scans nothing:
        // partx reads the table and adds the partition itself.
        if !Path::new(&part).exists() {
            let _ = run("partx", &["--add", &node]);
        }
        crate::testing::wait_until(
            "the loop device's partition node",
            std::time::Duration::from_secs(10),
            || Path::new(&part).exists(),
        );
        let block = block.to_string();
        run("mkfs.ext4", &["-q", "-F", "-b", &block, "-E", "nodiscard", &part])?;
        fs::create_dir(&self.mount).map_err(|e| e.to_string())?;
        run("mount", &["-o", atime, &part, self.mount.to_str().unwrap()])?;
        self.mounted = true;
        Ok(())
    }

    /// The setup checks of the mounted filesystem as a target, for a PostgreSQL database.
    fn warnings(&self) -> Vec<&'static str> {
        let d = gather(&[&self.mount.join("storbench-ds3.db")]);
        let pages = [PageSize { owner: "PostgreSQL".into(), bytes: 8 << 10 }];
        let input =
            setup::SetupInput { disclosure: &d, target: &d.targets[0], page_sizes: &pages, data: &[] };
        let checks = setup::check(&input);
        assert!(checks.iter().any(|c| c.check == "partition-alignment"), "{checks:#?}");
        assert!(checks.iter().all(|c| c.status != Status::Unknown), "{checks:#?}");
        checks.into_iter().filter(|c| c.status == Status::Warn).map(|c| c.check).collect()
    }
}

impl Drop for LoopPartition {
    fn drop(&mut self) {
        if self.mounted {
            let _ = run("umount", &[self.mount.to_str().unwrap_or_default()]);
        }
        if let Some(node) = &self.device {
            let _ = run("losetup", &["--detach", node]);
        }
    }
}

/// A master boot record with one Linux partition of `sectors` starting at sector `start`.
fn mbr(start: u32, sectors: u32) -> Vec<u8> {
    let mut sector = vec![0u8; 512];
    let entry = &mut sector[446..462];
    entry[4] = 0x83;
    entry[8..12].copy_from_slice(&start.to_le_bytes());
    entry[12..16].copy_from_slice(&sectors.to_le_bytes());
    sector[510..].copy_from_slice(&[0x55, 0xAA]);
    sector
}

#[test]
fn a_misaligned_partition_with_1k_blocks_and_strictatime_is_found_and_a_clean_one_is_not() {
    let Some(bad) = LoopPartition::new(63, 1024, "strictatime") else { return };
    assert_eq!(bad.warnings(), ["partition-alignment", "block-size", "atime"]);
    drop(bad);
    let Some(clean) = LoopPartition::new(2048, 4096, "relatime") else { return };
    assert_eq!(clean.warnings(), Vec::<&str>::new());
}
