//! Setup checks: what the disclosure shows about one configuration's storage stack that is
//! known to cost performance or durability, as DBAs check it first and the reference reports
//! recommend (004: "check disk alignment, allocation unit size and stripe size").
//!
//! Pure: [`check`] takes the disclosure, the configuration's target in it and what its runs
//! used (database page sizes, data sets), and returns one [`SetupCheck`] per check and thing
//! checked, each with a stable id, a status, what it found, why it matters and what to change.
//! A check that lacks what it needs says `unknown` rather than guessing; a default, clean
//! setup (1 MiB-aligned partitions, 4 KiB blocks, relatime, flushes on) gives no warning.
//!
//! The checks (ids): `partition-alignment` (1 MiB), `stripe-alignment` (the RAID's full
//! stripe), `fs-stripe` (ext4 or XFS told that stripe), `block-size` (the filesystem's block against 4 KiB and the physical sector),
//! `block-vs-page` (a database page not a multiple of the block, or a block larger than the
//! page), `raid-chunk` (an md chunk smaller than a page, or not a multiple of it), `flush`
//! (barriers off over a volatile write cache), `data-mode` (ext4 `data=writeback` or
//! `data=journal`), `io-scheduler`, `discard`, `atime`, `fits-in-memory` (a data set read
//! through the page cache that memory could hold, or that a database server's own cache holds) and `data-location` (a database's data on
//! another device than the configuration's target).

use serde::Serialize;

use crate::disclosure::{BlockDevice, Disclosure, TargetPath};

const KIB: u64 = 1024;
const MIB: u64 = 1 << 20;
/// A stated optimal I/O size above this is taken for a placeholder (many SATA drives report
/// 65535 sectors), not a stripe.
const MAX_STRIPE: u64 = 16 * MIB;

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Warn,
    /// The disclosure lacks what the check needs.
    Unknown,
}

/// One check of one thing (a partition, a disk, the filesystem, a data set).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SetupCheck {
    /// Stable id (`partition-alignment`), listed in the module doc.
    pub check: &'static str,
    pub status: Status,
    /// What was checked: a device's kernel name, a mount point, a workload.
    pub subject: String,
    pub found: String,
    /// Why it matters; empty for an `ok`.
    pub why: String,
    /// What to change; empty for an `ok`.
    pub change: String,
}

/// A database page size the configuration's workloads use, and whose it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageSize {
    /// `PostgreSQL`, `the mailbox databases`, ...
    pub owner: String,
    pub bytes: u64,
}

/// A run's data as the checks need it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DataSet {
    /// The workload label (`oltp`).
    pub workload: String,
    pub bytes: u64,
    /// Read through the page cache (not O_DIRECT), so memory can hold it.
    pub cached: bool,
    /// The device a database server's data directory is on, where the run found it; None
    /// for data storbench itself places on the target.
    pub server_device: Option<String>,
    /// A database server's data, whose location the run looked up.
    pub on_server: bool,
    /// That server's own cache of pages, where its settings state it.
    pub server_cache: Option<ServerCache>,
}

/// A database server's own cache of pages, as its settings state it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerCache {
    /// The setting that sizes it (`shared_buffers`, `innodb_buffer_pool_size`).
    pub setting: &'static str,
    pub bytes: u64,
    /// The server reads its data files with O_DIRECT (InnoDB's `innodb_flush_method`
    /// O_DIRECT or O_DIRECT_NO_FSYNC): the page cache holds none of it, its own cache is all
    /// the memory the data has.
    pub direct: bool,
}

impl ServerCache {
    /// The cache a `kind` server's settings state: PostgreSQL's `shared_buffers` (its units:
    /// 8 kB blocks when bare, else kB, MB, GB, TB of 1024), InnoDB's buffer pool in bytes and
    /// its flush method. None for SQLite (it has no server) or a setting not stated.
    pub fn of(kind: &str, settings: &std::collections::BTreeMap<String, String>) -> Option<ServerCache> {
        match kind {
            "postgres" => {
                let bytes = postgres_size(settings.get("shared_buffers")?)?;
                Some(ServerCache { setting: "shared_buffers", bytes, direct: false })
            }
            "mysql" => {
                let bytes = settings.get("innodb_buffer_pool_size")?.trim().parse().ok()?;
                let method = settings.get("innodb_flush_method").map(|m| m.to_ascii_uppercase());
                let direct = method.is_some_and(|m| m.starts_with("O_DIRECT"));
                Some(ServerCache { setting: "innodb_buffer_pool_size", bytes, direct })
            }
            _ => None,
        }
    }
}

/// A PostgreSQL memory setting as `current_setting` prints it (`128MB`, `1GB`, `8kB`), or a
/// bare count of 8 kB blocks.
fn postgres_size(text: &str) -> Option<u64> {
    let text = text.trim();
    let split = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let n: u64 = number.parse().ok()?;
    let scale = match unit.trim() {
        "" => 8 * KIB,
        "B" => 1,
        "kB" => KIB,
        "MB" => MIB,
        "GB" => 1 << 30,
        "TB" => 1 << 40,
        _ => return None,
    };
    n.checked_mul(scale)
}

/// What the checks of one configuration look at.
#[derive(Debug, Clone, Copy)]
pub struct SetupInput<'a> {
    pub disclosure: &'a Disclosure,
    pub target: &'a TargetPath,
    pub page_sizes: &'a [PageSize],
    pub data: &'a [DataSet],
}

/// Every check of one configuration, in the order of the module doc.
pub fn check(input: &SetupInput) -> Vec<SetupCheck> {
    let layers = layers_under(input.disclosure, input.target);
    let mut out = Vec::new();
    out.extend(alignment(&layers));
    out.extend(fs_stripe(input.target, &layers));
    out.extend(block_size(input.target, &layers));
    out.extend(block_vs_page(input.target, input.page_sizes));
    out.extend(raid_chunk(&layers, input.page_sizes));
    out.extend(flush(input.target, &layers));
    out.extend(data_mode(input.target));
    out.extend(scheduler(&layers));
    out.extend(discard(input.target, &layers));
    out.extend(atime(input.target));
    out.extend(memory(input.disclosure, input.data));
    out.extend(data_location(input.target, &layers, input.data));
    out
}

/// The page size of a `kind` database (`sqlite`, `postgres`, `mysql`): the one its settings
/// state, else the one it is built or initialised with by default.
pub fn database_page_size(
    kind: &str,
    settings: &std::collections::BTreeMap<String, String>,
) -> Option<PageSize> {
    let (owner, key, default) = match kind {
        "sqlite" => ("SQLite", "page_size", 4 * KIB),
        "postgres" => ("PostgreSQL", "block_size", 8 * KIB),
        "mysql" => ("InnoDB", "innodb_page_size", 16 * KIB),
        _ => return None,
    };
    Some(match settings.get(key).and_then(|v| v.trim().parse().ok()) {
        Some(bytes) => PageSize { owner: owner.into(), bytes },
        None => PageSize { owner: format!("{owner} (default)"), bytes: default },
    })
}

/// Every device under the target, top first: its filesystem's devices, then what each is
/// built from and each partition's disk, each once.
fn layers_under<'a>(d: &'a Disclosure, target: &TargetPath) -> Vec<&'a BlockDevice> {
    let mut names: Vec<String> = target.devices.clone();
    if names.is_empty() {
        names.extend(target.device.clone());
    }
    let mut out: Vec<&BlockDevice> = Vec::new();
    let mut i = 0;
    while i < names.len() {
        if let Some(dev) = device(d, &names[i]).filter(|dev| !out.contains(dev)) {
            out.push(dev);
            names.extend(dev.built_from.iter().cloned());
            names.extend(dev.layer.parent.clone());
        }
        i += 1;
    }
    out
}

/// The RAID under `target` (an md array's kernel name and level, `raid5`), the first found
/// going down its layers; None where no layer says it is one.
pub fn raid_under(d: &Disclosure, target: &TargetPath) -> Option<(String, String)> {
    let layers = layers_under(d, target);
    layers.iter().find_map(|l| Some((l.layer.name.clone(), l.layer.raid_level.clone()?)))
}

fn device<'a>(d: &'a Disclosure, name: &str) -> Option<&'a BlockDevice> {
    d.devices.iter().find(|dev| dev.layer.name == name)
}

fn ok(check: &'static str, subject: &str, found: String) -> SetupCheck {
    SetupCheck {
        check,
        status: Status::Ok,
        subject: subject.into(),
        found,
        why: String::new(),
        change: String::new(),
    }
}

fn warn(check: &'static str, subject: &str, found: String, why: &str, change: String) -> SetupCheck {
    SetupCheck { check, status: Status::Warn, subject: subject.into(), found, why: why.into(), change }
}

fn unknown(check: &'static str, subject: &str, found: &str) -> SetupCheck {
    SetupCheck {
        check,
        status: Status::Unknown,
        subject: subject.into(),
        found: found.into(),
        why: String::new(),
        change: String::new(),
    }
}

/// Each partition under the target against 1 MiB and against its disk's RAID stripe.
fn alignment(layers: &[&BlockDevice]) -> Vec<SetupCheck> {
    let mut out = Vec::new();
    for part in layers.iter().filter(|l| l.layer.kind == "partition") {
        let name = part.layer.name.as_str();
        let disk = layers.iter().find(|l| Some(&l.layer.name) == part.layer.parent.as_ref());
        let start = disk
            .and_then(|disk| disk.partitions.iter().find(|p| p.name == name))
            .and_then(|p| p.start_sector);
        let Some(start) = start else {
            out.push(unknown("partition-alignment", name, "its start sector is not in the disclosure"));
            continue;
        };
        let at = format!("starts at sector {start} ({})", bytes(start.saturating_mul(512)));
        out.push(if start.saturating_mul(512).is_multiple_of(MIB) {
            ok("partition-alignment", name, format!("{at}, on a 1 MiB boundary"))
        } else {
            warn(
                "partition-alignment",
                name,
                format!("{at}, not on a 1 MiB boundary"),
                "a misaligned partition splits every page and block the filesystem writes across two \
                 physical sectors, flash pages or RAID chunks: one write becomes two, or a \
                 read-modify-write",
                format!(
                    "recreate {name} to start at a multiple of 2048 sectors (1 MiB), as parted and \
                         fdisk do by default, and copy the data back"
                ),
            )
        });
        out.extend(
            disk.and_then(|disk| stripe(disk)).map(|(width, how)| stripe_check(name, start, width, &how)),
        );
    }
    out
}

fn stripe_check(name: &str, start: u64, width: u64, how: &str) -> SetupCheck {
    let found =
        format!("starts at {}; the stripe is {} ({how})", bytes(start.saturating_mul(512)), bytes(width));
    if start.saturating_mul(512).is_multiple_of(width) {
        ok("stripe-alignment", name, found + ", a whole number of stripes")
    } else {
        warn(
            "stripe-alignment",
            name,
            found + ", not a whole number of stripes",
            "a full-stripe write that starts mid-stripe touches two stripes, so RAID 5 and 6 read \
             old data and parity to write it (a read-modify-write on every such write)",
            format!("recreate {name} to start at a multiple of {}", bytes(width)),
        )
    }
}

/// Whether the filesystem was told the RAID stripe under it (ext4 `stripe=`, in blocks; XFS
/// `swidth=`, in 512-byte units), so it places files and allocation groups on whole stripes.
fn fs_stripe(target: &TargetPath, layers: &[&BlockDevice]) -> Option<SetupCheck> {
    let subject = filesystem(target)?;
    let (width, how) = layers.iter().find_map(|l| stripe(l))?;
    let opts = options(target);
    let value = |key: &str| opts.iter().find_map(|o| o.strip_prefix(key)?.parse::<u64>().ok());
    let told = match target.fstype.as_deref()? {
        "ext4" => value("stripe=").zip(target.block_size).map(|(blocks, block)| blocks.saturating_mul(block)),
        "xfs" => value("swidth=").map(|sectors| sectors.saturating_mul(512)),
        _ => return None,
    };
    let found = format!(
        "the stripe is {} ({how}); the filesystem's is {}",
        bytes(width),
        told.map_or("not set".into(), bytes)
    );
    Some(if told == Some(width) {
        ok("fs-stripe", &subject, found)
    } else {
        warn(
            "fs-stripe",
            &subject,
            found,
            "a filesystem that does not know the stripe places files and writes its blocks \
             without regard to it, so large writes straddle stripes and RAID 5 and 6 turn them \
             into read-modify-writes",
            format!(
                "tell the filesystem the stripe: mkfs.ext4 -E stride=CHUNK/BLOCK,stripe-width={} \
                 blocks (or tune2fs -E stripe-width=); mkfs.xfs -d su=CHUNK,sw=DATA-DISKS",
                width / target.block_size.filter(|&b| b > 0).unwrap_or(4096)
            ),
        )
    })
}

/// The full stripe width of a RAID device: an md's chunk times its data disks, else what the
/// device states as its optimal I/O size (a hardware RAID's stripe).
fn stripe(dev: &BlockDevice) -> Option<(u64, String)> {
    if let Some(md) = &dev.md {
        let (chunk, disks) = (md.chunk_size_bytes.filter(|&c| c > 0)?, md.raid_disks?);
        let data = data_disks(dev.layer.raid_level.as_deref()?, disks)?;
        let how = format!("{} chunk × {data} data disks", bytes(chunk));
        return Some((chunk.saturating_mul(u64::from(data)), how));
    }
    let optimal = dev.optimal_io_size.filter(|&o| o > 0 && o <= MAX_STRIPE)?;
    let minimum = dev.minimum_io_size.filter(|&m| m > 0)?;
    (optimal > minimum && optimal.is_multiple_of(minimum))
        .then(|| (optimal, "the device's optimal I/O size".into()))
}

/// The disks of an md array of `level` that hold distinct data; None for a level without
/// striping (RAID 1) or unknown.
fn data_disks(level: &str, disks: u32) -> Option<u32> {
    let data = match level {
        "raid0" => disks,
        "raid4" | "raid5" => disks.checked_sub(1)?,
        "raid6" => disks.checked_sub(2)?,
        "raid10" => disks / 2,
        _ => return None,
    };
    (data > 1).then_some(data)
}

/// The filesystem's block size against 4 KiB and the physical sector of every disk under it.
fn block_size(target: &TargetPath, layers: &[&BlockDevice]) -> Option<SetupCheck> {
    let subject = filesystem(target)?;
    let Some(block) = target.block_size.filter(|&b| b > 0) else {
        return Some(unknown("block-size", &subject, "the filesystem's block size is not in the disclosure"));
    };
    let sector = layers.iter().filter_map(|l| l.layer.physical_sector_size).map(u64::from).max();
    let found = format!("{} blocks", bytes(block));
    if let Some(sector) = sector.filter(|&s| block < s) {
        return Some(warn(
            "block-size",
            &subject,
            format!("{found} on a disk with {} physical sectors", bytes(sector)),
            "every block write smaller than the physical sector makes the drive read, merge and \
             rewrite the whole sector",
            format!("recreate the filesystem with blocks of at least {} (mkfs.ext4 -b 4096)", bytes(sector)),
        ));
    }
    Some(if block < 4 * KIB {
        warn(
            "block-size",
            &subject,
            found,
            "blocks smaller than 4 KiB (the default) spread each database page and file over more \
             blocks: more metadata and extents to track, more fragmentation, smaller I/Os",
            "recreate the filesystem with 4 KiB blocks (mkfs.ext4 -b 4096; the allocation unit \
             on other filesystems)"
                .into(),
        )
    } else {
        ok("block-size", &subject, found)
    })
}

/// The filesystem as a subject: its mount point and type; None where the target is not on a
/// mounted filesystem with a device (a raw device, a memory filesystem).
fn filesystem(target: &TargetPath) -> Option<String> {
    target.device.as_ref()?;
    let point = target.mount_point.as_deref()?;
    Some(format!("{point} ({})", target.fstype.as_deref().unwrap_or("?")))
}

/// Each database page size against the filesystem's block.
fn block_vs_page(target: &TargetPath, pages: &[PageSize]) -> Vec<SetupCheck> {
    let (Some(subject), Some(block)) = (filesystem(target), target.block_size.filter(|&b| b > 0)) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for page in pages.iter().filter(|p| p.bytes > 0) {
        let found = format!("{} pages of {} on {} blocks", page.owner, bytes(page.bytes), bytes(block));
        out.push(if block > page.bytes {
            warn(
                "block-vs-page",
                &subject,
                found,
                "a block larger than the page makes every page write a partial-block write: the \
                 filesystem reads and rewrites the whole block (or copies it, on copy-on-write \
                 filesystems)",
                format!("use a block (ZFS recordsize, allocation unit) of {} or less", bytes(page.bytes)),
            )
        } else if !page.bytes.is_multiple_of(block) {
            warn(
                "block-vs-page",
                &subject,
                found,
                "a page that is not a whole number of blocks shares a block with the next page, so \
                 writing one reads and rewrites part of its neighbour",
                format!("use a block size that divides {} (4 KiB)", bytes(page.bytes)),
            )
        } else {
            ok("block-vs-page", &subject, found)
        });
    }
    out
}

/// Each md array's chunk against each page size.
fn raid_chunk(layers: &[&BlockDevice], pages: &[PageSize]) -> Vec<SetupCheck> {
    let mut out = Vec::new();
    for dev in layers {
        let Some(chunk) = dev.md.as_ref().and_then(|m| m.chunk_size_bytes).filter(|&c| c > 0) else {
            continue;
        };
        for page in pages.iter().filter(|p| p.bytes > 0) {
            let found = format!("{} chunk, {} pages of {}", bytes(chunk), page.owner, bytes(page.bytes));
            out.push(if chunk < page.bytes || !chunk.is_multiple_of(page.bytes) {
                warn(
                    "raid-chunk",
                    &dev.layer.name,
                    found,
                    "a page that does not fit whole in one chunk is split across two member disks: \
                     one page read or write costs two disk I/Os",
                    format!(
                        "recreate the array with a chunk that is a multiple of {} (mdadm --chunk)",
                        bytes(page.bytes)
                    ),
                )
            } else {
                ok("raid-chunk", &dev.layer.name, found)
            });
        }
    }
    out
}

/// The mount's options, per-mount and the filesystem's own, one list.
fn options(target: &TargetPath) -> Vec<&str> {
    [&target.mount_options, &target.super_options].into_iter().flatten().flat_map(|o| o.split(',')).collect()
}

/// Barriers (cache flushes) against the write caches under them.
fn flush(target: &TargetPath, layers: &[&BlockDevice]) -> Option<SetupCheck> {
    let subject = filesystem(target)?;
    let opts = options(target);
    let off = opts.iter().find(|o| matches!(**o, "nobarrier" | "barrier=0" | "barrier=off"));
    let caches: Vec<String> = layers
        .iter()
        .filter(|l| l.layer.kind == "disk")
        .map(|l| format!("{} {}", l.layer.name, l.write_cache.as_deref().unwrap_or("unknown")))
        .collect();
    let volatile = layers
        .iter()
        .filter(|l| l.layer.kind == "disk")
        .any(|l| l.write_cache.as_deref() != Some("write through"));
    let found =
        format!("write cache: {}", if caches.is_empty() { "unknown".into() } else { caches.join(", ") });
    Some(match off {
        Some(option) if volatile => warn(
            "flush",
            &subject,
            format!("{found}; mounted {option}: the filesystem sends no cache flushes"),
            "a volatile write cache acknowledges writes it still holds: without flushes a commit \
             is not on stable storage, and a power loss loses or tears it (the figures then \
             measure the cache, not a durable commit)",
            format!(
                "mount without {option} (barriers are on by default), or turn the cache off \
                     with a battery- or capacitor-backed controller only"
            ),
        ),
        Some(option) => ok("flush", &subject, format!("{found}; {option}, but no volatile cache")),
        None => ok("flush", &subject, format!("{found}; flushes on")),
    })
}

/// ext3/ext4's data journalling mode.
fn data_mode(target: &TargetPath) -> Option<SetupCheck> {
    let subject = filesystem(target)?;
    if !matches!(target.fstype.as_deref(), Some("ext3" | "ext4")) {
        return None;
    }
    let mode = options(target).into_iter().find_map(|o| o.strip_prefix("data=")).unwrap_or("ordered");
    let found = format!("data={mode}");
    Some(match mode {
        "writeback" => warn(
            "data-mode",
            &subject,
            found,
            "metadata may reach the journal before the data it points to: after a crash a file \
             can hold stale blocks, and the figures are those of a weaker guarantee than the default",
            "mount with data=ordered (the default)".into(),
        ),
        "journal" => warn(
            "data-mode",
            &subject,
            found,
            "every data block is written twice, once to the journal: write throughput roughly halves",
            "mount with data=ordered (the default) unless the double write is the point".into(),
        ),
        _ => ok("data-mode", &subject, found),
    })
}

/// Each whole disk's I/O scheduler against its kind.
fn scheduler(layers: &[&BlockDevice]) -> Vec<SetupCheck> {
    let mut out = Vec::new();
    // A loop device passes its requests to the filesystem holding its backing file, whose
    // disk's scheduler orders them; its own (and its copied rotational flag) decide nothing.
    let disks = layers.iter().filter(|l| l.layer.kind == "disk" && !l.layer.name.starts_with("loop"));
    for disk in disks {
        let (name, Some(sched), Some(rotational)) =
            (&disk.layer.name, &disk.scheduler, disk.layer.rotational)
        else {
            continue;
        };
        let kind = if rotational { "rotational disk" } else { "non-rotational device" };
        let found = format!("{kind} under {sched}");
        out.push(match (rotational, sched.as_str()) {
            (true, "none") => warn(
                "io-scheduler",
                name,
                found,
                "with no scheduler a spinning disk serves requests in arrival order: no sorting \
                 by position or merging, so it seeks more and a stream of writes can starve reads",
                format!("echo mq-deadline > /sys/block/{name}/queue/scheduler (or bfq on a desktop)"),
            ),
            (false, "bfq") => warn(
                "io-scheduler",
                name,
                found,
                "bfq spends CPU time and idles per request to share the device fairly: on an SSD \
                 or NVMe device it caps IOPS and adds latency the device itself does not have",
                format!("echo none > /sys/block/{name}/queue/scheduler (or mq-deadline)"),
            ),
            _ => ok("io-scheduler", name, found),
        });
    }
    out
}

/// TRIM: the online `discard` mount option, and a non-rotational device the filesystem cannot
/// tell which blocks are free.
fn discard(target: &TargetPath, layers: &[&BlockDevice]) -> Vec<SetupCheck> {
    let Some(subject) = filesystem(target) else { return Vec::new() };
    let mut out = Vec::new();
    if options(target).contains(&"discard") {
        out.push(warn(
            "discard",
            &subject,
            "mounted with discard (online TRIM)".into(),
            "every delete, truncate and file shrink sends its TRIMs as it happens: they cost time \
             in the run (a database dropping or shrinking files, a log recycling) and some drives \
             stall while trimming",
            "mount without discard and trim periodically (fstrim.timer, fstrim weekly); on btrfs \
             discard=async batches them"
                .into(),
        ));
    }
    // The top device: a partition has no queue of its own, its disk's stands for it.
    let top = layers.first().map(|top| {
        layers.iter().find(|l| Some(&l.layer.name) == top.layer.parent.as_ref()).copied().unwrap_or(top)
    });
    let Some(top) = top else { return out };
    let (Some(false), Some(max)) = (top.layer.rotational, top.discard_max_bytes) else { return out };
    out.push(if max == 0 {
        warn(
            "discard",
            &top.layer.name,
            "non-rotational, no discard support through this stack (discard_max_bytes 0)".into(),
            "the filesystem cannot tell the SSD which blocks are free: as the drive fills, \
             garbage collection copies dead data, so write amplification and latency rise over \
             the runs",
            "let TRIM through every layer (dm-crypt allow_discards, a controller or driver that \
             passes it) or use a device that supports it"
                .into(),
        )
    } else {
        ok("discard", &top.layer.name, format!("supported (up to {} at once)", bytes(max)))
    });
    out
}

/// Access-time updates.
fn atime(target: &TargetPath) -> Option<SetupCheck> {
    let subject = filesystem(target)?;
    let opts = options(target);
    let lazy = opts.contains(&"lazytime");
    let mode = ["noatime", "relatime"].into_iter().find(|o| opts.contains(o));
    Some(match mode {
        Some(mode) => ok("atime", &subject, mode.into()),
        None if lazy => ok("atime", &subject, "strictatime with lazytime".into()),
        None => warn(
            "atime",
            &subject,
            "strictatime (neither relatime nor noatime)".into(),
            "every read updates the file's access time: a read-only workload writes inodes and \
             journal, and those writes count in the figures",
            "mount with relatime (the default) or noatime".into(),
        ),
    })
}

/// Each data set read through the page cache, or held in a database server's own cache,
/// against the memory that can hold it.
fn memory(d: &Disclosure, data: &[DataSet]) -> Vec<SetupCheck> {
    let mut out = Vec::new();
    for set in data.iter().filter(|s| (s.cached || s.server_cache.is_some()) && s.bytes > 0) {
        if let Some(check) = set.server_cache.as_ref().and_then(|c| in_server_cache(set, c)) {
            out.push(check);
            continue;
        }
        if set.on_server && set.server_device.is_none() {
            let found = "the database server is not on this machine (or its data directory was not found): its memory is not disclosed";
            out.push(unknown("fits-in-memory", &set.workload, found));
            continue;
        }
        let Some(total) = d.memory.total_bytes else {
            out.push(unknown(
                "fits-in-memory",
                &set.workload,
                "the machine's memory is not in the disclosure",
            ));
            continue;
        };
        let cache = set
            .server_cache
            .as_ref()
            .map(|c| format!(", {} {}", c.setting, gib(c.bytes)))
            .unwrap_or_default();
        let found = format!(
            "{} of data read through the page cache, {} of memory{cache}",
            gib(set.bytes),
            gib(total)
        );
        out.push(if set.bytes <= total {
            warn(
                "fits-in-memory",
                &set.workload,
                found,
                "data that memory can hold is soon read from the page cache (or the database's own \
                 cache), not the storage: the figures then measure memory (000 sizes its database \
                 larger than the server's memory for this reason)",
                format!("size the data above {} (the database size), or limit the memory", gib(total)),
            )
        } else {
            ok("fits-in-memory", &set.workload, found)
        });
    }
    out
}

/// The server's own cache against its data, where that alone decides: the data fits in it
/// (wherever the server runs), or the server bypasses the page cache (so its cache is all the
/// memory the data has). None where the machine's memory decides.
fn in_server_cache(set: &DataSet, c: &ServerCache) -> Option<SetupCheck> {
    let bypass = if c.direct { " (read with O_DIRECT: the page cache holds none of it)" } else { "" };
    let found = format!("{} of data, {} {}{bypass}", gib(set.bytes), c.setting, gib(c.bytes));
    if set.bytes <= c.bytes {
        return Some(warn(
            "fits-in-memory",
            &set.workload,
            found,
            "the database server's own cache holds all its data: once warm, its reads never reach \
             the storage, and the figures measure memory (000 sizes its database larger than the \
             server's memory for this reason)",
            format!("size the data above {} ({}), or lower {}", gib(c.bytes), c.setting, c.setting),
        ));
    }
    c.direct.then(|| ok("fits-in-memory", &set.workload, found))
}

/// A database server's data directory against the configuration's target.
fn data_location(target: &TargetPath, layers: &[&BlockDevice], data: &[DataSet]) -> Vec<SetupCheck> {
    let mut out = Vec::new();
    for set in data.iter().filter(|s| s.on_server) {
        let subject = set.workload.as_str();
        let Some(server) = &set.server_device else {
            out.push(unknown(
                "data-location",
                subject,
                "the server's data directory is not on this machine, or its device is unknown",
            ));
            continue;
        };
        let on_target = layers.iter().any(|l| &l.layer.name == server);
        let found =
            format!("the server's data is on {server}; the target {} is on {}", target.path, names(layers));
        out.push(if on_target {
            ok("data-location", subject, found)
        } else {
            warn(
                "data-location",
                subject,
                found,
                "the database server keeps its data elsewhere than the configuration's storage: \
                 the figures are of that other device",
                "point the server's data directory (PostgreSQL data_directory, MySQL datadir) at \
                 the target, or set the target to where the server keeps its data"
                    .into(),
            )
        });
    }
    out
}

fn names(layers: &[&BlockDevice]) -> String {
    if layers.is_empty() {
        return "no known device".into();
    }
    layers.iter().map(|l| l.layer.name.as_str()).collect::<Vec<_>>().join(", ")
}

/// A size in the largest binary unit that holds it exactly: `512 B`, `4 KiB`, `192 KiB`.
fn bytes(b: u64) -> String {
    let units = [(1u64 << 40, "TiB"), (1 << 30, "GiB"), (MIB, "MiB"), (KIB, "KiB")];
    match units.iter().find(|(unit, _)| b >= *unit && b.is_multiple_of(*unit)) {
        Some((unit, name)) => format!("{} {name}", b / unit),
        None => format!("{b} B"),
    }
}

/// A large size, to a tenth of a GiB.
fn gib(b: u64) -> String {
    format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64)
}

#[cfg(test)]
#[path = "setup_tests.rs"]
mod tests;
