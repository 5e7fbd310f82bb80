//! Finding the block device under a path, and describing it with its layers.
//!
//! The device number of a file (`st_dev`) or of a block-device node (`st_rdev`) leads to
//! `/sys/dev/block/MAJ:MIN`, whose link names the kernel device. Filesystems that report an
//! anonymous device number (btrfs, overlayfs) are found through the mount source in
//! `/proc/self/mountinfo` instead; memory filesystems (tmpfs, ramfs) have no device at all.
//! A multi-device btrfs spans more than its mount source: [`filesystem_devices`] lists all its
//! members (`/sys/fs/btrfs/UUID/devices`).
//! Everything about the device is read from sysfs under a root given as an argument, so the
//! tests can run on a fake tree.

use std::fs;
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::str::FromStr;

use storbench_report::DeviceInfo;

const SYSFS: &str = "/sys";
const MOUNTINFO: &str = "/proc/self/mountinfo";

/// Stacking deeper than this (dm over md over dm ...) is taken for a loop in a broken tree.
const MAX_DEPTH: usize = 16;

/// The block device the data of `path` lives on: the device itself for a block-device node,
/// else the device of the filesystem holding the file or directory.
///
/// `Ok(None)` when there is no block device behind it (tmpfs and other memory filesystems,
/// network filesystems). An error only when `path` itself cannot be examined.
pub fn resolve_device(path: &Path) -> io::Result<Option<DeviceInfo>> {
    resolve_with(Path::new(SYSFS), Path::new(MOUNTINFO), path)
}

/// [`resolve_device`] with the sysfs root and mountinfo file given.
pub(crate) fn resolve_with(sys: &Path, mountinfo: &Path, path: &Path) -> io::Result<Option<DeviceInfo>> {
    let meta = fs::metadata(path)?;
    let dev = if meta.file_type().is_block_device() { meta.rdev() } else { meta.dev() };
    let (major, minor) = (rustix::fs::major(dev), rustix::fs::minor(dev));
    if let Some(info) = describe_dev(sys, major, minor) {
        return Ok(Some(info));
    }
    // An anonymous device number: ask which device the mount was made from.
    let canonical = fs::canonicalize(path)?;
    let text = fs::read_to_string(mountinfo)?;
    Ok(mount_source(&text, &canonical)
        .filter(|source| source.starts_with("/dev/"))
        .and_then(|source| describe_node(sys, Path::new(&source))))
}

/// Every block device the filesystem holding `path` spans: each member of a multi-device
/// btrfs (listed in `/sys/fs/btrfs/UUID/devices`, sorted by name), else the one device
/// [`resolve_device`] finds. A block-device node is its own one device. Empty where there is
/// no block device (tmpfs); an error only when `path` itself cannot be examined.
///
/// [`resolve_device`] names a btrfs RAID1 of loop0 and loop1 by its mount source alone; this
/// names both, so that the counters of every disk the data and a rebuild touch can be read.
pub fn filesystem_devices(path: &Path) -> io::Result<Vec<DeviceInfo>> {
    let Some(first) = resolve_device(path)? else {
        return Ok(Vec::new());
    };
    if fs::metadata(path)?.file_type().is_block_device() {
        return Ok(vec![first]);
    }
    Ok(with_btrfs_members(Path::new(SYSFS), first))
}

/// The members of the btrfs filesystem `device` belongs to, or `device` alone when it belongs
/// to none (or sysfs lists no member).
fn with_btrfs_members(sys: &Path, device: DeviceInfo) -> Vec<DeviceInfo> {
    let members = spanned(sys, &device.name);
    if members == [device.name.as_str()] {
        return vec![device];
    }
    let number = |name: &str| read_text(&block_dir(sys, name).join("dev")).unwrap_or_default();
    members.iter().map(|name| describe(sys, name, number(name))).collect()
}

/// The kernel names of every device the filesystem on `name` spans: the members of the btrfs
/// filesystem it belongs to, sorted, or `name` alone.
pub(crate) fn spanned(sys: &Path, name: &str) -> Vec<String> {
    let members = super::rebuild::btrfs::fsid_of_device(sys, name)
        .map(|fsid| super::rebuild::btrfs::members(sys, &fsid))
        .unwrap_or_default();
    if members.is_empty() { vec![name.to_owned()] } else { members }
}

/// Describes the device behind a `/dev` node named as a mount source.
///
/// `None` when the node is missing (`/dev/root` often is) or not a block device: the mount
/// source was only a hint, so failing to follow it means "unknown", not an error.
fn describe_node(sys: &Path, node: &Path) -> Option<DeviceInfo> {
    let meta = fs::metadata(node).ok()?;
    if !meta.file_type().is_block_device() {
        return None;
    }
    let rdev = meta.rdev();
    describe_dev(sys, rustix::fs::major(rdev), rustix::fs::minor(rdev))
}

/// Describes the block device numbered `major:minor`; `None` when sysfs does not list it.
pub fn describe_dev(sys: &Path, major: u32, minor: u32) -> Option<DeviceInfo> {
    let link = sys.join(format!("dev/block/{major}:{minor}"));
    let name = file_name(&fs::read_link(link).ok()?)?;
    Some(describe(sys, &name, format!("{major}:{minor}")))
}

/// Everything storbench reports about the device called `name` (its `/proc/diskstats` name).
pub(crate) fn describe(sys: &Path, name: &str, dev: String) -> DeviceInfo {
    let kind = kind_of(sys, name);
    let parent = if kind == "partition" { parent_disk(sys, name) } else { None };
    // Queue limits, members and RAID level belong to the whole device; a partition has no
    // queue/ or slaves/ of its own and inherits its disk's.
    let owner = block_dir(sys, parent.as_deref().unwrap_or(name));
    let queue = owner.join("queue");
    DeviceInfo {
        name: name.to_owned(),
        kind: kind.to_owned(),
        dev,
        parent,
        members: members(sys, &owner),
        logical_sector_size: read_value(&queue.join("logical_block_size")),
        physical_sector_size: read_value(&queue.join("physical_block_size")),
        rotational: read_value::<u8>(&queue.join("rotational")).map(|r| r != 0),
        raid_level: read_text(&owner.join("md/level")).filter(|level| !level.is_empty()),
    }
}

/// The sysfs directory of a device. `class/block` lists partitions as well as whole disks,
/// where `/sys/block` lists whole disks only.
pub(crate) fn block_dir(sys: &Path, name: &str) -> PathBuf {
    sys.join("class/block").join(name)
}

/// `partition`, `dm`, `md` or `disk`, by sysfs's `partition` file and the kernel's naming.
pub(crate) fn kind_of(sys: &Path, name: &str) -> &'static str {
    if block_dir(sys, name).join("partition").exists() {
        "partition"
    } else if name.starts_with("dm-") {
        "dm"
    } else if name.starts_with("md") {
        "md"
    } else {
        "disk"
    }
}

/// The whole disk a partition is on: sysfs nests a partition's directory in its disk's.
pub(crate) fn parent_disk(sys: &Path, name: &str) -> Option<String> {
    let dir = fs::canonicalize(block_dir(sys, name)).ok()?;
    file_name(dir.parent()?)
}

/// The names in a device's `slaves/` directory (the devices it is built from), sorted.
pub(crate) fn slaves(dir: &Path) -> Vec<String> {
    entry_names(&dir.join("slaves"))
}

/// The names in a sysfs directory, sorted; empty when it cannot be read.
pub(crate) fn entry_names(dir: &Path) -> Vec<String> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries.filter_map(|e| e.ok()?.file_name().into_string().ok()).collect();
    names.sort();
    names
}

/// The whole disks under a stacked device, or nothing for a device that is not stacked.
fn members(sys: &Path, dir: &Path) -> Vec<String> {
    let mut disks = Vec::new();
    for slave in slaves(dir) {
        push_whole_disks(sys, &slave, 0, &mut disks);
    }
    disks.sort();
    disks.dedup();
    disks
}

/// Adds the whole disks `name` rests on: a partition's disk, a stacked device's members
/// (recursively), or `name` itself.
fn push_whole_disks(sys: &Path, name: &str, depth: usize, out: &mut Vec<String>) {
    if depth > MAX_DEPTH {
        return;
    }
    if kind_of(sys, name) == "partition" {
        out.push(parent_disk(sys, name).unwrap_or_else(|| name.to_owned()));
        return;
    }
    let below = slaves(&block_dir(sys, name));
    if below.is_empty() {
        out.push(name.to_owned());
    }
    for slave in below {
        push_whole_disks(sys, &slave, depth + 1, out);
    }
}

/// Every device from `name` down to the whole disks: `name` first, then each partition's disk
/// and each stacked device's members in turn, every device once.
pub(crate) fn layers(sys: &Path, name: &str) -> Vec<String> {
    let mut out = Vec::new();
    push_layers(sys, name, 0, &mut out);
    out
}

fn push_layers(sys: &Path, name: &str, depth: usize, out: &mut Vec<String>) {
    if depth > MAX_DEPTH || out.iter().any(|seen| seen == name) {
        return;
    }
    out.push(name.to_owned());
    let below = if kind_of(sys, name) == "partition" {
        parent_disk(sys, name).into_iter().collect()
    } else {
        slaves(&block_dir(sys, name))
    };
    for next in below {
        push_layers(sys, &next, depth + 1, out);
    }
}

/// One line of `/proc/self/mountinfo`, unescaped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    pub point: String,
    pub source: String,
    pub fstype: String,
    /// Per-mount options (`rw,relatime`).
    pub options: String,
    /// The filesystem's own options (`rw,discard`).
    pub super_options: String,
}

/// The source of the mount that holds `path` (already canonical), from mountinfo text.
pub fn mount_source(mountinfo: &str, path: &Path) -> Option<String> {
    find_mount(mountinfo, path).map(|mount| mount.source)
}

/// The mount that holds `path` (already canonical), from mountinfo text.
///
/// The mount point that is the longest prefix of `path` wins; among mounts on the same point
/// the later line wins, since it is stacked on top and hides the earlier ones.
pub fn find_mount(mountinfo: &str, path: &Path) -> Option<Mount> {
    let mut best: Option<(usize, Mount)> = None;
    for line in mountinfo.lines() {
        let Some(mount) = parse_mount_line(line) else {
            continue;
        };
        let point = Path::new(&mount.point);
        if !path.starts_with(point) {
            continue;
        }
        let depth = point.components().count();
        if best.as_ref().is_none_or(|(d, _)| depth >= *d) {
            best = Some((depth, mount));
        }
    }
    best.map(|(_, mount)| mount)
}

/// One mountinfo line (see proc(5)):
/// `id parent maj:min root mount-point options [optional...] - fstype source super-options`.
fn parse_mount_line(line: &str) -> Option<Mount> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    let point = fields.get(4)?;
    let separator = fields.iter().skip(6).position(|f| *f == "-")? + 6;
    let source = fields.get(separator + 2)?;
    Some(Mount {
        point: unescape(point),
        source: unescape(source),
        fstype: unescape(fields.get(separator + 1)?),
        options: unescape(fields.get(5)?),
        super_options: fields.get(separator + 3).map_or_else(String::new, |o| unescape(o)),
    })
}

/// Undoes the octal escapes (`\040` for a space, `\134` for a backslash ...) the kernel uses in
/// mountinfo and /proc/swaps.
pub(crate) fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes.get(i + 1..i + 4).filter(|d| d.iter().all(|b| (b'0'..=b'7').contains(b)));
        match octal {
            Some(d) if bytes[i] == b'\\' => {
                let value = d.iter().fold(0u32, |v, b| v * 8 + u32::from(b - b'0'));
                out.push(u8::try_from(value).unwrap_or(b'?'));
                i += 4;
            }
            _ => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A sysfs attribute's text without the trailing newline; `None` when it cannot be read.
pub(crate) fn read_text(path: &Path) -> Option<String> {
    Some(fs::read_to_string(path).ok()?.trim().to_owned())
}

/// A numeric sysfs attribute; `None` when it is missing or not a number.
pub(crate) fn read_value<T: FromStr>(path: &Path) -> Option<T> {
    read_text(path)?.parse().ok()
}

pub(crate) fn file_name(path: &Path) -> Option<String> {
    Some(path.file_name()?.to_str()?.to_owned())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// A fake sysfs: sda (rotating, 512/4096) with sda1, sdb (SSD) with sdb1, sdc, dm-0 built
    /// on sda1 and sdb1, and md0 (raid1) built on dm-0 and sdc.
    pub(crate) struct FakeSys {
        dir: tempfile::TempDir,
    }

    impl FakeSys {
        /// A sysfs with no devices, to build on.
        pub(crate) fn empty() -> Self {
            FakeSys { dir: tempfile::tempdir().unwrap() }
        }

        fn new() -> Self {
            let fake = FakeSys::empty();
            fake.disk("sda", "8:0", "1", 512, 4096);
            fake.partition("sda", "sda1", "8:1");
            fake.disk("sdb", "8:16", "0", 512, 512);
            fake.partition("sdb", "sdb1", "8:17");
            fake.disk("sdc", "8:32", "0", 4096, 4096);
            fake.disk("dm-0", "253:0", "0", 512, 4096);
            fake.slave("dm-0", "sda1", "sda/sda1");
            fake.slave("dm-0", "sdb1", "sdb/sdb1");
            fake.disk("md0", "9:0", "0", 512, 4096);
            fake.slave("md0", "dm-0", "dm-0");
            fake.slave("md0", "sdc", "sdc");
            fake.write("devices/virtual/block/md0/md/level", "raid1\n");
            fake
        }

        pub(crate) fn root(&self) -> &Path {
            self.dir.path()
        }

        pub(crate) fn write(&self, rel: &str, text: &str) {
            let path = self.root().join(rel);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, text).unwrap();
        }

        /// Links `class/block/NAME` and `dev/block/DEV` to the device directory, as sysfs does.
        pub(crate) fn register(&self, name: &str, dev: &str, rel_dir: &str) {
            for link in [format!("class/block/{name}"), format!("dev/block/{dev}")] {
                let link = self.root().join(link);
                fs::create_dir_all(link.parent().unwrap()).unwrap();
                symlink(format!("../../devices/virtual/block/{rel_dir}"), link).unwrap();
            }
            self.write(&format!("devices/virtual/block/{rel_dir}/dev"), &format!("{dev}\n"));
        }

        pub(crate) fn disk(&self, name: &str, dev: &str, rotational: &str, logical: u32, physical: u32) {
            self.register(name, dev, name);
            let queue = format!("devices/virtual/block/{name}/queue");
            self.write(&format!("{queue}/rotational"), &format!("{rotational}\n"));
            self.write(&format!("{queue}/logical_block_size"), &format!("{logical}\n"));
            self.write(&format!("{queue}/physical_block_size"), &format!("{physical}\n"));
        }

        pub(crate) fn partition(&self, disk: &str, name: &str, dev: &str) {
            self.register(name, dev, &format!("{disk}/{name}"));
            self.write(&format!("devices/virtual/block/{disk}/{name}/partition"), "1\n");
        }

        pub(crate) fn slave(&self, holder: &str, name: &str, rel_target: &str) {
            let link = self.root().join(format!("devices/virtual/block/{holder}/slaves/{name}"));
            fs::create_dir_all(link.parent().unwrap()).unwrap();
            symlink(format!("../../{rel_target}"), link).unwrap();
        }
    }

    #[test]
    fn a_partition_reports_its_disk_and_the_disks_queue() {
        let sys = FakeSys::new();
        let info = describe_dev(sys.root(), 8, 1).unwrap();
        assert_eq!(info.name, "sda1");
        assert_eq!(info.kind, "partition");
        assert_eq!(info.dev, "8:1");
        assert_eq!(info.parent.as_deref(), Some("sda"));
        assert!(info.members.is_empty());
        assert_eq!(info.logical_sector_size, Some(512));
        assert_eq!(info.physical_sector_size, Some(4096));
        assert_eq!(info.rotational, Some(true));
        assert_eq!(info.raid_level, None);
    }

    #[test]
    fn a_dm_device_on_two_partitions_has_their_two_disks_as_members() {
        let sys = FakeSys::new();
        let info = describe_dev(sys.root(), 253, 0).unwrap();
        assert_eq!(info.name, "dm-0");
        assert_eq!(info.kind, "dm");
        assert_eq!(info.parent, None);
        assert_eq!(info.members, vec!["sda".to_owned(), "sdb".to_owned()]);
        assert_eq!(info.rotational, Some(false));
    }

    #[test]
    fn an_md_device_resolves_stacked_members_down_to_whole_disks() {
        let sys = FakeSys::new();
        let info = describe_dev(sys.root(), 9, 0).unwrap();
        assert_eq!(info.kind, "md");
        assert_eq!(info.raid_level.as_deref(), Some("raid1"));
        assert_eq!(info.members, vec!["sda", "sdb", "sdc"]);
    }

    #[test]
    fn a_plain_disk_and_an_unknown_number() {
        let sys = FakeSys::new();
        let info = describe_dev(sys.root(), 8, 32).unwrap();
        assert_eq!((info.name.as_str(), info.kind.as_str()), ("sdc", "disk"));
        assert_eq!(info.logical_sector_size, Some(4096));
        assert!(info.members.is_empty());
        assert_eq!(describe_dev(sys.root(), 8, 99), None);
    }

    const MOUNTINFO_TEXT: &str = "\
22 27 0:21 / /proc rw,relatime - proc proc rw
27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard
24 27 0:6 / /dev rw,relatime - devtmpfs devtmpfs rw,mode=755
25 24 0:23 / /dev/shm rw,relatime - tmpfs tmpfs rw
30 25 0:27 / /dev/shm rw,relatime - tmpfs other rw
40 27 0:45 /@home /home rw,relatime shared:5 master:1 - btrfs /dev/sdb2 rw,ssd
41 27 0:46 / /mnt/my\\040disk rw - xfs /dev/mapper/vg-my\\040lv rw
";

    #[test]
    fn mount_source_takes_the_longest_and_topmost_mount() {
        let src = |p: &str| mount_source(MOUNTINFO_TEXT, Path::new(p));
        assert_eq!(src("/home/alice/db").as_deref(), Some("/dev/sdb2"));
        assert_eq!(src("/homework").as_deref(), Some("/dev/vda"));
        assert_eq!(src("/dev/shm/x").as_deref(), Some("other"));
        assert_eq!(src("/dev/sda").as_deref(), Some("devtmpfs"));
        assert_eq!(src("/mnt/my disk/f").as_deref(), Some("/dev/mapper/vg-my lv"));
        assert_eq!(mount_source("", Path::new("/")), None);
        assert_eq!(mount_source("garbage line\n", Path::new("/")), None);
        let home = find_mount(MOUNTINFO_TEXT, Path::new("/home/alice")).unwrap();
        assert_eq!((home.point.as_str(), home.fstype.as_str()), ("/home", "btrfs"));
        assert_eq!((home.options.as_str(), home.super_options.as_str()), ("rw,relatime", "rw,ssd"));
    }

    /// The kernel name and number of the block device holding /var/tmp, read independently
    /// of the code under test (st_dev and the /sys/dev/block link); None off a block device.
    pub(crate) fn var_tmp_device() -> Option<(String, String)> {
        use std::os::unix::fs::MetadataExt;
        let dev = fs::metadata("/var/tmp").ok()?.dev();
        let num = format!("{}:{}", libc::major(dev), libc::minor(dev));
        let link = fs::read_link(format!("/sys/dev/block/{num}")).ok()?;
        Some((link.file_name()?.to_string_lossy().into_owned(), num))
    }

    #[test]
    fn a_file_on_disk_resolves_to_the_device_its_filesystem_is_on() {
        let Some((name, num)) = var_tmp_device() else {
            return crate::testing::skip(
                "/var/tmp is not on a block device here",
                "run on a machine whose /var/tmp is on a disk",
            );
        };
        let file = tempfile::NamedTempFile::new_in("/var/tmp").unwrap();
        let info = resolve_device(file.path()).unwrap().unwrap();
        assert_eq!((info.name.as_str(), info.dev.as_str()), (name.as_str(), num.as_str()));
        assert!(info.logical_sector_size.is_some_and(|s| s >= 512));
        assert!(info.rotational.is_some());
    }

    #[test]
    fn the_block_device_node_itself_resolves_to_its_device() {
        let Some((name, _)) = var_tmp_device() else { return };
        let info = resolve_device(&Path::new("/dev").join(&name)).unwrap().unwrap();
        assert_eq!(info.name, name);
    }

    #[test]
    fn tmpfs_has_no_device() {
        assert_eq!(resolve_device(Path::new("/dev/shm")).unwrap(), None);
    }

    #[test]
    fn a_missing_path_is_an_error() {
        assert!(resolve_device(Path::new("/nonexistent/storbench/x")).is_err());
    }

    #[test]
    fn a_btrfs_member_brings_every_member_of_its_filesystem() {
        let sys = FakeSys::new();
        sys.disk("loop0", "7:0", "0", 512, 512);
        sys.disk("loop1", "7:1", "0", 512, 512);
        for name in ["loop1", "loop0"] {
            let link = sys.root().join(format!("fs/btrfs/0f7e-uuid/devices/{name}"));
            fs::create_dir_all(link.parent().unwrap()).unwrap();
            symlink(format!("../../../../devices/virtual/block/{name}"), link).unwrap();
        }
        let first = describe_dev(sys.root(), 7, 0).unwrap();
        let all = with_btrfs_members(sys.root(), first);
        let names: Vec<(&str, &str)> = all.iter().map(|d| (d.name.as_str(), d.dev.as_str())).collect();
        assert_eq!(names, [("loop0", "7:0"), ("loop1", "7:1")]);
        // A device no btrfs lists stays alone.
        let sdc = describe_dev(sys.root(), 8, 32).unwrap();
        assert_eq!(with_btrfs_members(sys.root(), sdc.clone()), vec![sdc]);
    }

    #[test]
    fn a_file_on_a_real_btrfs_raid1_resolves_to_both_loop_devices() {
        let Some(raid) = crate::monitor::rebuild::btrfs::tests::LoopRaid1::new() else { return };
        let file = raid.mount.join("data");
        fs::write(&file, b"x").unwrap();
        let all = filesystem_devices(&file).unwrap();
        assert_eq!(all.iter().map(|d| d.name.clone()).collect::<Vec<_>>(), raid.devices);
        assert!(all.iter().all(|d| d.dev.starts_with("7:") && d.kind == "disk"), "{all:?}");
        // resolve_device keeps naming one device (its callers are unchanged).
        let one = resolve_device(&file).unwrap().unwrap();
        assert!(raid.devices.contains(&one.name), "{one:?}");
        // The loop device's node is one device, not the filesystem on it.
        let node = Path::new("/dev").join(&raid.devices[1]);
        assert_eq!(filesystem_devices(&node).unwrap().len(), 1);
    }

    #[test]
    fn a_file_on_ext4_or_tmpfs_has_its_one_device_or_none() {
        assert!(filesystem_devices(Path::new("/dev/shm")).unwrap().is_empty());
        assert!(filesystem_devices(Path::new("/nonexistent/storbench/x")).is_err());
        let Some((name, _)) = var_tmp_device() else { return };
        let file = tempfile::NamedTempFile::new_in("/var/tmp").unwrap();
        let all = filesystem_devices(file.path()).unwrap();
        assert_eq!(all.iter().map(|d| d.name.as_str()).collect::<Vec<_>>(), [name.as_str()]);
    }

    #[test]
    fn an_anonymous_device_falls_back_to_the_mount_source() {
        // /dev/shm has an anonymous device number, like a btrfs subvolume; a mountinfo that
        // says it was mounted from /dev/vda must lead to vda.
        let dir = tempfile::tempdir().unwrap();
        let fake = dir.path().join("mountinfo");
        fs::write(&fake, "25 24 0:23 / /dev/shm rw - btrfs /dev/vda rw\n").unwrap();
        let info = resolve_with(Path::new(SYSFS), &fake, Path::new("/dev/shm")).unwrap();
        assert_eq!(info.map(|i| i.name).as_deref(), Some("vda"));
        // A source that is not a block-device node gives nothing.
        fs::write(&fake, "25 24 0:23 / /dev/shm rw - btrfs /dev/null rw\n").unwrap();
        let info = resolve_with(Path::new(SYSFS), &fake, Path::new("/dev/shm")).unwrap();
        assert_eq!(info, None);
    }
}
