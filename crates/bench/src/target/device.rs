//! May storbench write to this block device? And how big is it?
//!
//! A device target the user allowed is one a benchmark will overwrite. [`check_writable`]
//! refuses, always, a device that is mounted or held by another kernel user (device mapper,
//! md, swap, an exclusive opener), and, unless forced, one that has partitions,
//! a partition table or a filesystem/volume signature in its first [`HEAD_LEN`] bytes.
//! [`geometry`] reads its size and sector sizes.
//!
//! Nothing here writes to the device, prints or panics. System state (`/proc/self/mountinfo`,
//! `/proc/swaps`, `/sys`) is parsed by functions that take the text or a root directory, and the
//! byte-level detectors are pure, so every decision is testable with fixtures.

use std::fmt;
use std::fs::{self, File};
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use super::Remedy;
use crate::monitor::device::unescape;
use rustix::fs::{Mode, OFlags};

/// How many leading bytes of a device are read to look for partition tables and signatures.
/// 128 KiB covers every signature we know, the furthest being btrfs at 64 KiB + 64.
pub const HEAD_LEN: usize = 128 * 1024;

/// `kind` of [`DeviceRefusal::FilesystemSignature`] when the head could not be read: a device we
/// cannot inspect may hold data, so it is refused like one that does.
pub const UNREADABLE: &str = "unreadable";

const MOUNTINFO: &str = "/proc/self/mountinfo";
const SWAPS: &str = "/proc/swaps";
const SYS_ROOT: &str = "/sys";

/// A device number as (major, minor), the form mountinfo and sysfs use.
type DevNum = (u32, u32);

/// Why a device is refused. Where an option gets past the refusal ([`Remedy::Force`]),
/// [`DeviceRefusal::message`] lets the caller word it; `Display` words it neutrally.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeviceRefusal {
    /// The path does not exist or is not a block device.
    NotABlockDevice { path: PathBuf },
    /// The device or one of its partitions is mounted. No option overrides this.
    Mounted { device: String, mount_point: String },
    /// The kernel holds the device or a partition of it (dm, md, LVM, swap, an exclusive
    /// opener). No option overrides this.
    InUse { device: String, holders: Vec<String> },
    /// The kernel knows partitions on the device (`/sys/block/X/XN`).
    HasPartitions { device: String, partitions: Vec<String> },
    /// "MBR" or "GPT" found in the first sectors.
    PartitionTable { device: String, kind: &'static str },
    /// A filesystem or volume signature (see [`detect_signature`]), or [`UNREADABLE`].
    FilesystemSignature { device: String, kind: &'static str },
}

impl DeviceRefusal {
    /// The option that gets past this refusal: forcing, for what only may hold data.
    pub fn remedy(&self) -> Option<Remedy> {
        match self {
            Self::HasPartitions { .. } | Self::PartitionTable { .. } | Self::FilesystemSignature { .. } => {
                Some(Remedy::Force)
            }
            Self::NotABlockDevice { .. } | Self::Mounted { .. } | Self::InUse { .. } => None,
        }
    }

    /// The message, with `how` wording the remedy as an instruction ("pass --force").
    pub fn message(&self, how: &dyn Fn(Remedy) -> String) -> String {
        let force = how(Remedy::Force);
        match self {
            Self::NotABlockDevice { path } => format!(
                "{} is not a block device; a device target must name one (such as /dev/sdb)",
                path.display()
            ),
            Self::Mounted { device, mount_point } => format!(
                "{device} (or a partition on it) is mounted at {mount_point}; unmount it first \
                 (no option overrides this)"
            ),
            Self::InUse { device, holders } => format!(
                "{device} is in use by {}; release it first (no option overrides this)",
                holders.join(", ")
            ),
            Self::HasPartitions { device, partitions } => format!(
                "{device} has partitions ({}); name an unused device, or, to use it anyway (this \
                 destroys them), {force}",
                partitions.join(", ")
            ),
            Self::PartitionTable { device, kind } => format!(
                "{device} has a partition table ({kind}); to use it anyway (this destroys it), {force}"
            ),
            Self::FilesystemSignature { device, kind } if *kind == UNREADABLE => format!(
                "could not read the first {HEAD_LEN} bytes of {device} to look for a filesystem, \
                 so it may hold data; check the device, or, to use it anyway, {force}"
            ),
            Self::FilesystemSignature { device, kind } => format!(
                "{device} holds a {kind} signature (a filesystem or volume that may hold data); \
                 to use it anyway (this destroys it), {force}"
            ),
        }
    }
}

impl fmt::Display for DeviceRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message(&Remedy::neutral))
    }
}

impl std::error::Error for DeviceRefusal {}

/// Size and sector sizes of a block device, as the kernel reports them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceGeometry {
    pub size_bytes: u64,
    pub logical_sector_size: u32,
    pub physical_sector_size: u32,
}

/// `BLKGETSIZE64` is `_IOR(0x12, 114, size_t)`: the opcode encodes `size_t`, yet the kernel
/// always writes a `u64`.
const BLKGETSIZE64: rustix::ioctl::Opcode = rustix::ioctl::opcode::read::<usize>(0x12, 114);

/// Opens read-only, reads size (ioctl BLKGETSIZE64) and sector sizes (BLKSSZGET, BLKPBSZGET).
pub fn geometry(path: &Path) -> io::Result<DeviceGeometry> {
    let file = crate::files::open_device(path, crate::files::How::READ)?;
    Ok(DeviceGeometry {
        size_bytes: size_bytes(&file)?,
        logical_sector_size: rustix::fs::ioctl_blksszget(&file)?,
        physical_sector_size: rustix::fs::ioctl_blkpbszget(&file)?,
    })
}

fn size_bytes(file: &File) -> io::Result<u64> {
    // SAFETY: BLKGETSIZE64 is a valid getter opcode and its argument points to a u64.
    let getter = unsafe { rustix::ioctl::Getter::<BLKGETSIZE64, u64>::new() };
    // SAFETY: `file` is an open descriptor and the getter's output type matches the opcode.
    Ok(unsafe { rustix::ioctl::ioctl(file, getter) }?)
}

/// All the checks, in order: block device? mounted (any mountinfo entry whose major:minor is
/// this device or one of its partitions, or whose source resolves to it)? holders? partitions?
/// partition table? filesystem signature? `force` skips only the last three (partitions, table,
/// signature); mounted and in-use are always refused.
///
/// Call it before opening the device yourself: the in-use check includes an `O_EXCL` probe,
/// which an exclusive descriptor of ours would also trip.
pub fn check_writable(path: &Path, force: bool) -> Result<(), DeviceRefusal> {
    let dev = block_device_number(path)
        .ok_or_else(|| DeviceRefusal::NotABlockDevice { path: path.to_path_buf() })?;
    let device = path.display().to_string();
    let sys = read_sys_block(Path::new(SYS_ROOT), dev);
    let own: Vec<DevNum> = std::iter::once(dev).chain(sys.partitions.iter().filter_map(|p| p.dev)).collect();
    check_not_mounted(&device, &own)?;
    check_not_held(&device, path, &sys, &own)?;
    if force {
        return Ok(());
    }
    check_unpartitioned(&device, &sys)?;
    check_blank_head(&device, path)
}

fn check_not_mounted(device: &str, own: &[DevNum]) -> Result<(), DeviceRefusal> {
    // An unreadable mountinfo (no /proc) hides nothing for good: mounts also claim the device
    // exclusively, which the O_EXCL probe in check_not_held sees, even from other namespaces.
    let entries = parse_mountinfo(&fs::read_to_string(MOUNTINFO).unwrap_or_default());
    match find_mount(&entries, own, source_device) {
        Some(m) => {
            Err(DeviceRefusal::Mounted { device: device.to_owned(), mount_point: m.mount_point.clone() })
        }
        None => Ok(()),
    }
}

fn check_not_held(device: &str, path: &Path, sys: &SysBlock, own: &[DevNum]) -> Result<(), DeviceRefusal> {
    let swaps = fs::read_to_string(SWAPS).unwrap_or_default();
    let mut holders = held_by(sys, &swaps, own, source_device);
    if holders.is_empty() && exclusively_claimed(path) {
        holders.push("another exclusive user (open with O_EXCL failed with EBUSY)".to_owned());
    }
    if holders.is_empty() {
        return Ok(());
    }
    let device = device.to_owned();
    Err(DeviceRefusal::InUse { device, holders })
}

fn check_unpartitioned(device: &str, sys: &SysBlock) -> Result<(), DeviceRefusal> {
    if sys.partitions.is_empty() {
        return Ok(());
    }
    let partitions = sys.partitions.iter().map(|p| format!("/dev/{}", p.name));
    Err(DeviceRefusal::HasPartitions { device: device.to_owned(), partitions: partitions.collect() })
}

fn check_blank_head(device: &str, path: &Path) -> Result<(), DeviceRefusal> {
    let signature = |kind| DeviceRefusal::FilesystemSignature { device: device.to_owned(), kind };
    let head = read_head(path).map_err(|_| signature(UNREADABLE))?;
    if let Some(kind) = detect_partition_table(&head) {
        let device = device.to_owned();
        return Err(DeviceRefusal::PartitionTable { device, kind });
    }
    detect_signature(&head).map_or(Ok(()), |kind| Err(signature(kind)))
}

/// The first [`HEAD_LEN`] bytes (fewer on a smaller device), read through the page cache.
fn read_head(path: &Path) -> io::Result<Vec<u8>> {
    let mut head = Vec::with_capacity(HEAD_LEN);
    crate::files::open_device(path, crate::files::How::READ)?.take(HEAD_LEN as u64).read_to_end(&mut head)?;
    Ok(head)
}

/// True when the kernel refuses an exclusive open: mounted, swapped on, or claimed by dm, md or
/// another O_EXCL opener. On Linux, O_EXCL without O_CREAT means exactly this for block devices.
/// Whether someone holds `path` exclusively: an O_EXCL open fails with EBUSY, and still does
/// for a second. A probe like this one (another shard of the same run checking the device at
/// the same instant) holds it for microseconds and is not a user.
fn exclusively_claimed(path: &Path) -> bool {
    let flags = OFlags::RDONLY | OFlags::EXCL | OFlags::CLOEXEC;
    let busy = || matches!(rustix::fs::open(path, flags, Mode::empty()), Err(rustix::io::Errno::BUSY));
    (0..10).all(|attempt| {
        if attempt > 0 {
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        busy()
    })
}

/// The device number of `path` if it is a block device (following symlinks).
fn block_device_number(path: &Path) -> Option<DevNum> {
    let meta = fs::metadata(path).ok()?;
    let rdev = meta.rdev();
    let numbers = (rustix::fs::major(rdev), rustix::fs::minor(rdev));
    meta.file_type().is_block_device().then_some(numbers)
}

/// Resolves a mount or swap source such as `/dev/mapper/vg-root` to its device number. Only
/// absolute paths are looked at; `proc`, `tmpfs` or `host:/export` are not devices.
fn source_device(source: &str) -> Option<DevNum> {
    source.starts_with('/').then(|| block_device_number(Path::new(source))).flatten()
}

fn parse_dev_num(text: &str) -> Option<DevNum> {
    let (major, minor) = text.trim().split_once(':')?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}

/// One line of /proc/self/mountinfo, reduced to what the mounted check needs.
#[derive(Debug, Clone, PartialEq, Eq)]
struct MountEntry {
    dev: DevNum,
    mount_point: String,
    source: String,
}

fn parse_mountinfo(text: &str) -> Vec<MountEntry> {
    text.lines().filter_map(parse_mountinfo_line).collect()
}

/// `id parent major:minor root mount_point options [optional...] - fstype source super_options`
fn parse_mountinfo_line(line: &str) -> Option<MountEntry> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    // The optional fields vary in number, so the source is found from the "-" separator.
    let separator = 6 + fields.get(6..)?.iter().position(|f| *f == "-")?;
    Some(MountEntry {
        dev: parse_dev_num(fields[2])?,
        mount_point: unescape(fields[4]),
        source: unescape(fields.get(separator + 2)?),
    })
}

/// The first mount of one of `own`, matched by major:minor or by the source path, which catches
/// filesystems such as btrfs whose mountinfo shows an anonymous 0:N device.
fn find_mount<'a>(
    entries: &'a [MountEntry],
    own: &[DevNum],
    resolve: impl Fn(&str) -> Option<DevNum>,
) -> Option<&'a MountEntry> {
    entries.iter().find(|m| own.contains(&m.dev) || resolve(&m.source).is_some_and(|d| own.contains(&d)))
}

/// Active swap areas from /proc/swaps text that live on one of `own`.
fn swap_users(text: &str, own: &[DevNum], resolve: impl Fn(&str) -> Option<DevNum>) -> Vec<String> {
    text.lines()
        .skip(1) // the "Filename Type Size Used Priority" header
        .filter_map(|line| line.split_whitespace().next())
        .map(unescape)
        .filter(|name| resolve(name).is_some_and(|d| own.contains(&d)))
        .map(|name| format!("swap ({name})"))
        .collect()
}

/// What sysfs says about a block device: who holds it and which partitions it has.
#[derive(Debug, Default, PartialEq, Eq)]
struct SysBlock {
    holders: Vec<String>,
    partitions: Vec<SysPartition>,
}

#[derive(Debug, PartialEq, Eq)]
struct SysPartition {
    name: String,
    dev: Option<DevNum>,
    holders: Vec<String>,
}

/// Reads `<sys_root>/dev/block/MAJ:MIN`, which works for whole disks and partitions alike.
/// Missing entries read as empty; the O_EXCL probe still catches holders sysfs could not show.
fn read_sys_block(sys_root: &Path, dev: DevNum) -> SysBlock {
    let dir = sys_root.join(format!("dev/block/{}:{}", dev.0, dev.1));
    SysBlock { holders: list_dir_names(&dir.join("holders")), partitions: read_partitions(&dir) }
}

/// Partitions are the subdirectories with a `partition` attribute (sda1, nvme0n1p1, loop0p1).
fn read_partitions(dir: &Path) -> Vec<SysPartition> {
    list_dir_names(dir)
        .into_iter()
        .filter(|name| dir.join(name).join("partition").is_file())
        .map(|name| {
            let part = dir.join(&name);
            let dev = fs::read_to_string(part.join("dev")).ok();
            SysPartition {
                dev: dev.as_deref().and_then(parse_dev_num),
                holders: list_dir_names(&part.join("holders")),
                name,
            }
        })
        .collect()
}

/// Sorted entry names of a directory; empty if it cannot be read.
fn list_dir_names(dir: &Path) -> Vec<String> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries.filter_map(|e| e.ok()?.file_name().into_string().ok()).collect();
    names.sort();
    names
}

/// Everything that holds the device or one of its partitions: sysfs holders, then swap.
fn held_by(
    sys: &SysBlock,
    swaps: &str,
    own: &[DevNum],
    resolve: impl Fn(&str) -> Option<DevNum>,
) -> Vec<String> {
    let mut holders = sys.holders.clone();
    for part in &sys.partitions {
        holders.extend(part.holders.iter().map(|h| format!("{h} (on {})", part.name)));
    }
    holders.extend(swap_users(swaps, own, resolve));
    holders
}

/// Does `head` hold `magic` at `offset`? False when the buffer is too short.
fn has_at(head: &[u8], offset: usize, magic: &[u8]) -> bool {
    head.get(offset..offset + magic.len()) == Some(magic)
}

fn le_u32_at(head: &[u8], offset: usize) -> Option<u32> {
    let bytes = head.get(offset..offset + 4)?;
    Some(u32::from_le_bytes(bytes.try_into().ok()?))
}

/// Linux md superblock 1.x magic 0xa92b4efc, little-endian on disk.
const MD_MAGIC: [u8; 4] = 0xa92b_4efc_u32.to_le_bytes();

/// Signatures at one fixed offset: (offset, magic, kind). Kinds are blkid's TYPE names, so
/// users can compare with `blkid` and `wipefs`.
const FIXED_SIGNATURES: &[(usize, &[u8], &str)] = &[
    (0, b"LUKS\xba\xbe", "crypto_LUKS"),
    (0, b"XFSB", "xfs"),
    (0, &MD_MAGIC, "linux_raid_member"),    // md 1.1
    (4096, &MD_MAGIC, "linux_raid_member"), // md 1.2
    (65600, b"_BHRfS_M", "btrfs"),
    (3, b"NTFS    ", "ntfs"),
    (82, b"FAT32   ", "vfat"),
    (54, b"FAT12", "vfat"),
    (54, b"FAT16", "vfat"),
];

/// Pure: the filesystem/volume signature found in the first bytes of a device, if any.
///
/// Knows ext2/3/4, xfs, btrfs, swap, LVM2 PV, md 1.1/1.2, LUKS, vfat and NTFS. Signatures kept
/// at the end of a device (md 0.90/1.0) or beyond 128 KiB (ZFS uberblocks) are not seen.
pub fn detect_signature(head: &[u8]) -> Option<&'static str> {
    FIXED_SIGNATURES
        .iter()
        .find(|(offset, magic, _)| has_at(head, *offset, magic))
        .map(|(_, _, kind)| *kind)
        .or_else(|| detect_lvm2(head))
        .or_else(|| detect_swap(head))
        .or_else(|| detect_ext(head))
}

/// LVM2 writes its "LABELONE" label in one of the first four 512-byte sectors (the second by
/// default).
fn detect_lvm2(head: &[u8]) -> Option<&'static str> {
    (0..4).any(|sector| has_at(head, sector * 512, b"LABELONE")).then_some("LVM2_member")
}

/// Swap keeps its magic in the last 10 bytes of the first page, whose size is that of the
/// machine that ran mkswap; 4 KiB is the common one.
fn detect_swap(head: &[u8]) -> Option<&'static str> {
    let at_page_end =
        |page: usize| has_at(head, page - 10, b"SWAPSPACE2") || has_at(head, page - 10, b"SWAP-SPACE");
    [4096, 8192, 16384, 65536].into_iter().any(at_page_end).then_some("swap")
}

/// ext2/3/4 share a superblock at 1024 with magic 0xEF53 at 1080; the feature flags tell them
/// apart as blkid does.
fn detect_ext(head: &[u8]) -> Option<&'static str> {
    const SB: usize = 1024;
    // A 2-byte magic matches random data too easily, so also require a sane log2(block size).
    let log_block_size = le_u32_at(head, SB + 24)?;
    if !has_at(head, SB + 56, &[0x53, 0xEF]) || log_block_size > 6 {
        return None;
    }
    let compat = le_u32_at(head, SB + 0x5C)?;
    let incompat = le_u32_at(head, SB + 0x60)?;
    let ro_compat = le_u32_at(head, SB + 0x64)?;
    // Anything beyond ext3's feature set (filetype, recover, journal_dev, meta_bg; sparse_super,
    // large_file, btree_dir) is ext4: extents, 64bit, flex_bg, huge_file, metadata_csum...
    if incompat & !0x1E != 0 || ro_compat & !0x07 != 0 {
        Some("ext4")
    } else if compat & 0x04 != 0 {
        Some("ext3") // has_journal
    } else {
        Some("ext2")
    }
}

/// Pure: partition table kind in the first bytes (needs at least 4096+512 bytes to check GPT at
/// both sector sizes).
pub fn detect_partition_table(head: &[u8]) -> Option<&'static str> {
    // The GPT header sits at LBA 1, which is byte 512 or 4096 depending on the sector size.
    if has_at(head, 512, b"EFI PART") || has_at(head, 4096, b"EFI PART") {
        return Some("GPT");
    }
    is_mbr(head).then_some("MBR")
}

/// 0x55AA at 510, four entries with valid boot flags, at least one with a partition type.
/// FAT and NTFS boot sectors also end in 0x55AA, with boot code where the entries would be, so
/// a sector carrying their signature is not an MBR.
fn is_mbr(head: &[u8]) -> bool {
    let (Some(table), true) = (head.get(446..510), has_at(head, 510, &[0x55, 0xAA])) else {
        return false;
    };
    let entries = || table.chunks_exact(16);
    entries().all(|e| e[0] == 0x00 || e[0] == 0x80)
        && entries().any(|e| e[4] != 0)
        && !matches!(detect_signature(head), Some("vfat" | "ntfs"))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::os::fd::OwnedFd;
    use std::process::{Command, Stdio};

    fn zeros() -> Vec<u8> {
        vec![0; HEAD_LEN]
    }

    fn with(mut image: Vec<u8>, offset: usize, bytes: &[u8]) -> Vec<u8> {
        image[offset..offset + bytes.len()].copy_from_slice(bytes);
        image
    }

    /// A deterministic xorshift64 fill, so the "random" buffer is the same on every run.
    fn random_image(mut seed: u64) -> Vec<u8> {
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        (0..HEAD_LEN / 8).flat_map(|_| next().to_le_bytes()).collect()
    }

    /// An ext superblock with magic, 4 KiB blocks and the given (compat, incompat, ro_compat).
    fn ext_image(compat: u32, incompat: u32, ro_compat: u32) -> Vec<u8> {
        let image = with(zeros(), 1080, &[0x53, 0xEF]);
        let image = with(image, 1024 + 24, &2u32.to_le_bytes());
        let image = with(image, 1024 + 0x5C, &compat.to_le_bytes());
        let image = with(image, 1024 + 0x60, &incompat.to_le_bytes());
        with(image, 1024 + 0x64, &ro_compat.to_le_bytes())
    }

    #[test]
    fn each_signature_is_found_at_its_offset() {
        let cases: &[(usize, &[u8], &str)] = &[
            (0, b"XFSB", "xfs"),
            (65600, b"_BHRfS_M", "btrfs"),
            (4086, b"SWAPSPACE2", "swap"),
            (4086, b"SWAP-SPACE", "swap"),
            (65526, b"SWAPSPACE2", "swap"),
            (512, b"LABELONE", "LVM2_member"),
            (0, b"LABELONE", "LVM2_member"),
            (1536, b"LABELONE", "LVM2_member"),
            (0, &[0xfc, 0x4e, 0x2b, 0xa9], "linux_raid_member"),
            (4096, &[0xfc, 0x4e, 0x2b, 0xa9], "linux_raid_member"),
            (0, b"LUKS\xba\xbe", "crypto_LUKS"),
            (82, b"FAT32   ", "vfat"),
            (54, b"FAT12   ", "vfat"),
            (54, b"FAT16   ", "vfat"),
            (3, b"NTFS    ", "ntfs"),
        ];
        for (offset, magic, kind) in cases {
            let image = with(zeros(), *offset, magic);
            assert_eq!(detect_signature(&image), Some(*kind), "{kind} at {offset}");
            // One byte later is not the signature: offsets matter.
            let shifted = with(zeros(), offset + 1, magic);
            assert_ne!(detect_signature(&shifted), Some(*kind), "{kind} at {offset}+1");
        }
    }

    #[test]
    fn ext_generations_are_told_apart_by_features() {
        assert_eq!(detect_signature(&ext_image(0, 0x2, 0x3)), Some("ext2"));
        assert_eq!(detect_signature(&ext_image(0x4, 0x2, 0x3)), Some("ext3"));
        // extents + 64bit + flex_bg, as mkfs.ext4 sets them
        assert_eq!(detect_signature(&ext_image(0x4, 0x2c2, 0x3)), Some("ext4"));
        // metadata_csum alone (ro_compat) is ext4 as well
        assert_eq!(detect_signature(&ext_image(0x4, 0x2, 0x400)), Some("ext4"));
        // The magic with an absurd block size is not a superblock.
        let bogus = with(ext_image(0, 0, 0), 1024 + 24, &77u32.to_le_bytes());
        assert_eq!(detect_signature(&bogus), None);
    }

    #[test]
    fn blank_random_and_short_buffers_have_no_signature() {
        assert_eq!(detect_signature(&zeros()), None);
        assert_eq!(detect_signature(&random_image(0x5eed_1234_abcd_0001)), None);
        assert_eq!(detect_signature(&[]), None);
        // A btrfs magic cut short by the end of the buffer must not match or panic.
        let cut = with(zeros(), 65600, b"_BHRfS_M");
        assert_eq!(detect_signature(&cut[..65604]), None);
    }

    fn mbr_with_entry(boot_flag: u8, kind: u8) -> Vec<u8> {
        let image = with(zeros(), 510, &[0x55, 0xAA]);
        let image = with(image, 446, &[boot_flag]);
        let image = with(image, 446 + 4, &[kind]);
        let image = with(image, 446 + 8, &2048u32.to_le_bytes()); // first LBA
        with(image, 446 + 12, &4096u32.to_le_bytes()) // sectors
    }

    #[test]
    fn partition_tables_are_recognised() {
        assert_eq!(detect_partition_table(&mbr_with_entry(0x80, 0x83)), Some("MBR"));
        let protective = mbr_with_entry(0, 0xEE);
        let gpt512 = with(protective.clone(), 512, b"EFI PART");
        let gpt4k = with(protective, 4096, b"EFI PART");
        assert_eq!(detect_partition_table(&gpt512), Some("GPT"));
        assert_eq!(detect_partition_table(&gpt4k), Some("GPT"));
        assert_eq!(detect_partition_table(&zeros()), None);
        assert_eq!(detect_partition_table(&[]), None);
    }

    #[test]
    fn boot_signature_alone_or_a_fat_boot_sector_is_not_an_mbr() {
        let empty_table = with(zeros(), 510, &[0x55, 0xAA]);
        assert_eq!(detect_partition_table(&empty_table), None);
        assert_eq!(detect_partition_table(&mbr_with_entry(0x17, 0x83)), None);
        let fat = with(mbr_with_entry(0, 0x83), 82, b"FAT32   ");
        assert_eq!(detect_partition_table(&fat), None);
        assert_eq!(detect_signature(&fat), Some("vfat"));
        assert_eq!(detect_partition_table(&random_image(7)), None);
    }

    const MOUNTINFO_FIXTURE: &str = "\
22 27 0:21 / /proc rw,relatime - proc proc rw
27 1 254:0 / / rw,relatime shared:1 - ext4 /dev/mapper/vg-root rw,errors=remount-ro
30 27 8:1 / /boot rw,relatime shared:5 master:2 - ext2 /dev/sda1 rw
31 27 0:45 /vol /mnt/my\\040data rw - btrfs /dev/sdc rw,space_cache
garbage line
";

    fn no_resolve(_: &str) -> Option<DevNum> {
        None
    }

    #[test]
    fn mountinfo_is_parsed_with_any_number_of_optional_fields() {
        let entries = parse_mountinfo(MOUNTINFO_FIXTURE);
        assert_eq!(entries.len(), 4);
        let boot = MountEntry { dev: (8, 1), mount_point: "/boot".into(), source: "/dev/sda1".into() };
        assert_eq!(entries[2], boot);
        assert_eq!(entries[3].mount_point, "/mnt/my data");
        assert_eq!(entries[3].source, "/dev/sdc");
    }

    #[test]
    fn mounts_are_found_by_number_partition_or_source() {
        let entries = parse_mountinfo(MOUNTINFO_FIXTURE);
        let point = |own: &[DevNum]| find_mount(&entries, own, no_resolve).map(|m| &m.mount_point);
        assert_eq!(point(&[(254, 0)]).map(String::as_str), Some("/"));
        assert_eq!(point(&[(8, 1)]).map(String::as_str), Some("/boot"));
        // The whole disk sda (8:0) is mounted through its partition sda1.
        assert_eq!(point(&[(8, 0), (8, 1)]).map(String::as_str), Some("/boot"));
        assert_eq!(point(&[(8, 0)]), None);
        // btrfs shows 0:45, so only its source /dev/sdc (8:32) reveals the mount.
        let resolve = |s: &str| (s == "/dev/sdc").then_some((8, 32));
        let found = find_mount(&entries, &[(8, 32)], resolve).map(|m| m.mount_point.as_str());
        assert_eq!(found, Some("/mnt/my data"));
    }

    fn write(path: &Path, text: &str) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    #[test]
    fn sysfs_partitions_and_holders_are_read_from_a_fixture() {
        let root = tempfile::tempdir().unwrap();
        let disk = root.path().join("dev/block/8:0");
        fs::create_dir_all(disk.join("holders")).unwrap();
        fs::create_dir_all(disk.join("queue")).unwrap(); // not a partition
        write(&disk.join("sda1/partition"), "1\n");
        write(&disk.join("sda1/dev"), "8:1\n");
        fs::create_dir_all(disk.join("sda1/holders/dm-0")).unwrap();
        write(&disk.join("sda2/partition"), "2\n");
        write(&disk.join("sda2/dev"), "8:2\n");

        let sys = read_sys_block(root.path(), (8, 0));
        assert!(sys.holders.is_empty());
        let parts: Vec<_> = sys.partitions.iter().map(|p| (&p.name[..], p.dev)).collect();
        assert_eq!(parts, [("sda1", Some((8, 1))), ("sda2", Some((8, 2)))]);
        assert_eq!(sys.partitions[0].holders, ["dm-0"]);
        assert_eq!(read_sys_block(root.path(), (9, 9)), SysBlock::default());
    }

    #[test]
    fn holders_include_partition_holders_and_swap() {
        let sys = SysBlock {
            holders: vec!["md0".into()],
            partitions: vec![SysPartition {
                name: "sda1".into(),
                dev: Some((8, 1)),
                holders: vec!["dm-0".into()],
            }],
        };
        let swaps = "Filename\tType\tSize\tUsed\tPriority\n\
                     /dev/sda2 partition 1048572 0 -2\n/dev/sdb1 partition 1048572 0 -3\n";
        let resolve = |s: &str| (s == "/dev/sda2").then_some((8, 2));
        let own = [(8, 0), (8, 1), (8, 2)];
        let holders = held_by(&sys, swaps, &own, resolve);
        assert_eq!(holders, ["md0", "dm-0 (on sda1)", "swap (/dev/sda2)"]);
    }

    #[test]
    fn unescape_decodes_octal_escapes_only() {
        assert_eq!(unescape(r"/mnt/a\040b\011c\134d"), "/mnt/a b\tc\\d");
        assert_eq!(unescape(r"/plain\x"), r"/plain\x");
    }

    #[test]
    fn regular_files_and_missing_paths_are_not_block_devices() {
        let file = tempfile::NamedTempFile::new().unwrap();
        let refusal = check_writable(file.path(), true).unwrap_err();
        let expected = DeviceRefusal::NotABlockDevice { path: file.path().to_path_buf() };
        assert_eq!(refusal, expected);
        let missing = Path::new("/nonexistent/storbench-device");
        assert!(matches!(check_writable(missing, false), Err(DeviceRefusal::NotABlockDevice { .. })));
        assert!(geometry(file.path()).is_err());
    }

    #[test]
    fn force_is_offered_only_where_it_applies_in_the_callers_words() {
        let device = "/dev/sdz".to_owned();
        let forceable = [
            DeviceRefusal::HasPartitions { device: device.clone(), partitions: vec!["/dev/sdz1".into()] },
            DeviceRefusal::PartitionTable { device: device.clone(), kind: "GPT" },
            DeviceRefusal::FilesystemSignature { device: device.clone(), kind: "xfs" },
            DeviceRefusal::FilesystemSignature { device: device.clone(), kind: UNREADABLE },
        ];
        let flag = |r: Remedy| format!("pass the {r:?} flag");
        for refusal in &forceable {
            assert_eq!(refusal.remedy(), Some(Remedy::Force));
            let text = refusal.message(&flag);
            assert!(text.contains(&device) && text.contains("pass the Force flag"), "{text}");
            assert!(refusal.to_string().contains(&Remedy::Force.neutral()), "{refusal}");
        }
        let fixed = [
            DeviceRefusal::Mounted { device: device.clone(), mount_point: "/data".into() },
            DeviceRefusal::InUse { device: device.clone(), holders: vec!["dm-0".into()] },
        ];
        for refusal in &fixed {
            assert_eq!(refusal.remedy(), None);
            let text = refusal.message(&flag);
            assert!(text.contains("no option overrides this") && !text.contains("flag"), "{text}");
        }
        assert!(forceable[2].to_string().contains("xfs signature"));
    }

    /// Runs a command, returning stdout or a message naming the command and its stderr.
    pub(crate) fn run(program: &str, args: &[&str]) -> Result<String, String> {
        let out = Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("{program}: {e}"))?;
        if !out.status.success() {
            let stderr = String::from_utf8_lossy(&out.stderr);
            return Err(format!("{program} {args:?}: {}: {stderr}", out.status));
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
    }

    const LOOP_SIZE: u64 = 64 << 20;

    /// A loop device over a temp file; Drop unmounts and detaches it even when a test fails.
    struct LoopDevice {
        path: PathBuf,
        mount: Option<tempfile::TempDir>,
        _backing: tempfile::NamedTempFile,
    }

    impl LoopDevice {
        /// `image` is written at the start of a 64 MiB sparse backing file.
        fn attach(image: &[u8], partscan: bool) -> Result<Self, String> {
            let backing = tempfile::NamedTempFile::new().map_err(|e| e.to_string())?;
            fs::write(backing.path(), image).map_err(|e| e.to_string())?;
            backing.as_file().set_len(LOOP_SIZE).map_err(|e| e.to_string())?;
            let file = backing.path().to_str().ok_or("non-UTF-8 temp path")?;
            let mut args = vec!["--find", "--show"];
            args.extend(partscan.then_some("--partscan"));
            args.push(file);
            let path = PathBuf::from(run("losetup", &args)?);
            Ok(Self { path, mount: None, _backing: backing })
        }

        fn mount(&mut self) -> PathBuf {
            let dir = tempfile::tempdir().unwrap();
            let target = dir.path().to_str().unwrap();
            run("mount", &[self.path.to_str().unwrap(), target]).unwrap();
            let point = dir.path().canonicalize().unwrap();
            self.mount = Some(dir);
            point
        }
    }

    impl Drop for LoopDevice {
        fn drop(&mut self) {
            if let Some(dir) = &self.mount {
                let _ = run("umount", &[dir.path().to_str().unwrap_or_default()]);
            }
            let _ = run("losetup", &["--detach", self.path.to_str().unwrap_or_default()]);
        }
    }

    /// Attaches a loop device, or says why not so the caller can skip.
    fn loop_device(image: &[u8], partscan: bool) -> Option<LoopDevice> {
        LoopDevice::attach(image, partscan)
            .inspect_err(|why| println!("skipping loop-device test: {why}"))
            .ok()
    }

    fn open_exclusive(path: &Path) -> OwnedFd {
        let flags = OFlags::RDONLY | OFlags::EXCL | OFlags::CLOEXEC;
        rustix::fs::open(path, flags, Mode::empty()).unwrap()
    }

    #[test]
    fn loop_device_blank_then_ext4_then_mounted() {
        let Some(mut dev) = loop_device(&[], false) else {
            return;
        };
        let path = dev.path.clone();
        let name = path.display().to_string();
        let geo = geometry(&path).unwrap();
        assert_eq!((geo.size_bytes, geo.logical_sector_size), (LOOP_SIZE, 512));
        assert!(geo.physical_sector_size.is_power_of_two() && geo.physical_sector_size >= 512);
        assert_eq!(check_writable(&path, false), Ok(()));

        // Someone else holding it exclusively makes it in use, even when forced.
        let exclusive = open_exclusive(&path);
        let held = check_writable(&path, true);
        assert!(matches!(held, Err(DeviceRefusal::InUse { .. })), "{held:?}");
        drop(exclusive);

        // A probe of the device the close set off (udev, blkid) may hold it a moment longer,
        // and mkfs refuses a device in use: it gets a few tries, a quarter second apart.
        let mut tries = 0;
        while let Err(e) = run("mkfs.ext4", &["-q", "-F", &name]) {
            tries += 1;
            assert!(e.contains("in use") && tries < 20, "{e}");
            std::thread::sleep(std::time::Duration::from_millis(250));
        }
        let ext4 = DeviceRefusal::FilesystemSignature { device: name.clone(), kind: "ext4" };
        assert_eq!(check_writable(&path, false), Err(ext4));
        assert_eq!(check_writable(&path, true), Ok(()));

        let mount_point = dev.mount().display().to_string();
        let mounted = DeviceRefusal::Mounted { device: name, mount_point };
        assert_eq!(check_writable(&path, true), Err(mounted.clone()));
        assert_eq!(check_writable(&path, false), Err(mounted));
    }

    #[test]
    fn loop_device_with_an_mbr_is_refused_unless_forced() {
        let mbr = mbr_with_entry(0, 0x83);
        let Some(plain) = loop_device(&mbr[..512], false) else {
            return;
        };
        let table = DeviceRefusal::PartitionTable { device: plain.path.display().to_string(), kind: "MBR" };
        assert_eq!(check_writable(&plain.path, false), Err(table));
        assert_eq!(check_writable(&plain.path, true), Ok(()));

        // With --partscan the kernel may create loopNp1, which sysfs then lists. Kernels built
        // without the MBR parser (this test machine's) do not, so partx adds it through BLKPG.
        let scanned = loop_device(&mbr[..512], true).expect("losetup worked a moment ago");
        run("partx", &["--update", scanned.path.to_str().unwrap()]).unwrap();
        let kernel_name = scanned.path.file_name().unwrap().to_str().unwrap();
        let partitions = DeviceRefusal::HasPartitions {
            device: scanned.path.display().to_string(),
            partitions: vec![format!("/dev/{kernel_name}p1")],
        };
        assert_eq!(check_writable(&scanned.path, false), Err(partitions));
        assert_eq!(check_writable(&scanned.path, true), Ok(()));
    }
}
