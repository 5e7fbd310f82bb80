//! Gathering the full-disclosure inventory ([`Disclosure`]) of the machine a run is on.
//!
//! Everything comes from procfs, sysfs and `/etc` as an unprivileged user can read them, under
//! roots given in [`Roots`] so the tests can build a fake machine. Every read may fail: a file
//! that is missing, unreadable or odd leaves its field `None` (or a list empty), never a panic
//! and never a guess. What only root can read (DIMM speeds from SMBIOS, a device-mapper table's
//! target types) is left out; DIMMs appear only where the EDAC driver lists them to all users.
//!
//! The walk from a path to its devices is [`super::device`]'s; this module adds what a report
//! must disclose about each device and the CPUs, memory, kernel and distribution around them.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use storbench_report::{
    BlockDevice, CpuCache, CpuInventory, DISCLOSURE_SCHEMA_VERSION, DatabaseInfo, Dimm, Disclosure, DmInfo,
    KernelInfo, MdInfo, MemoryInventory, Partition, TargetPath,
};

use super::device::{self, block_dir, kind_of, read_text, read_value, slaves};
use super::memory::field_bytes;

/// Where procfs, sysfs and `/etc` are mounted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Roots {
    pub proc: PathBuf,
    pub sys: PathBuf,
    pub etc: PathBuf,
}

impl Default for Roots {
    fn default() -> Self {
        Roots { proc: "/proc".into(), sys: "/sys".into(), etc: "/etc".into() }
    }
}

/// The inventory of this machine and of the devices under `targets` (files, directories or
/// block-device nodes). The `database` part is left empty for the database backend to fill.
pub fn gather(targets: &[&Path]) -> Disclosure {
    gather_with(&Roots::default(), targets)
}

/// [`gather`] with procfs, sysfs and `/etc` read under `roots`.
pub fn gather_with(roots: &Roots, targets: &[&Path]) -> Disclosure {
    let paths: Vec<TargetPath> = targets.iter().map(|path| target_path(roots, path)).collect();
    let mut names: Vec<String> = Vec::new();
    for top in paths.iter().flat_map(|t| &t.devices) {
        for name in device::layers(&roots.sys, top) {
            if !names.contains(&name) {
                names.push(name);
            }
        }
    }
    Disclosure {
        schema_version: DISCLOSURE_SCHEMA_VERSION,
        storbench_version: env!("CARGO_PKG_VERSION").to_owned(),
        cpu: cpu(roots),
        memory: memory(roots),
        devices: names.iter().map(|name| block_device(&roots.sys, name)).collect(),
        targets: paths,
        kernel: KernelInfo {
            release: text(&roots.proc.join("sys/kernel/osrelease")),
            version: text(&roots.proc.join("sys/kernel/version")),
        },
        distribution: fs::read_to_string(roots.etc.join("os-release")).ok().and_then(|t| pretty_name(&t)),
        database: DatabaseInfo::default(),
    }
}

/// The mount holding `path`, the top block device under it and every device its filesystem
/// spans (a multi-device btrfs's members). A path that does not exist
/// yet (a target file to be created) is judged by its nearest existing ancestor.
fn target_path(roots: &Roots, path: &Path) -> TargetPath {
    let mut out = TargetPath { path: path.display().to_string(), ..TargetPath::default() };
    let Some(existing) = path.ancestors().find(|p| !p.as_os_str().is_empty() && p.exists()) else {
        return out;
    };
    let mountinfo = roots.proc.join("self/mountinfo");
    let mount = fs::canonicalize(existing)
        .ok()
        .zip(fs::read_to_string(&mountinfo).ok())
        .and_then(|(canonical, text)| device::find_mount(&text, &canonical));
    if let Some(mount) = mount {
        out.mount_point = Some(mount.point);
        out.fstype = Some(mount.fstype);
        out.source = Some(mount.source);
        out.mount_options = Some(mount.options);
        out.super_options = Some(mount.super_options);
    }
    out.device = device::resolve_with(&roots.sys, &mountinfo, existing).ok().flatten().map(|d| d.name);
    out.devices = out.device.iter().flat_map(|top| device::spanned(&roots.sys, top)).collect();
    (out.block_size, out.fragment_size) = block_sizes(existing);
    out
}

/// The block and fragment sizes of the filesystem holding `path`; none for a block-device
/// node, whose statvfs would describe /dev's memory filesystem, not the device.
fn block_sizes(path: &Path) -> (Option<u64>, Option<u64>) {
    let is_device = fs::metadata(path).is_ok_and(|m| m.file_type().is_block_device());
    match rustix::fs::statvfs(path) {
        Ok(stat) if !is_device => (Some(stat.f_bsize), Some(stat.f_frsize)),
        _ => (None, None),
    }
}

/// What a report discloses about the device `name`. A partition has no queue and no hardware
/// of its own: those are its disk's, which follows it in the list.
fn block_device(sys: &Path, name: &str) -> BlockDevice {
    let dir = block_dir(sys, name);
    let dev = text(&dir.join("dev")).unwrap_or_default();
    let kind = kind_of(sys, name);
    let queue = dir.join("queue");
    BlockDevice {
        layer: device::describe(sys, name, dev),
        size_bytes: sectors_to_bytes(read_value(&dir.join("size"))),
        read_only: read_value::<u8>(&dir.join("ro")).map(|ro| ro != 0),
        model: text(&dir.join("device/model")),
        vendor: text(&dir.join("device/vendor")),
        firmware: text(&dir.join("device/rev")).or_else(|| text(&dir.join("device/firmware_rev"))),
        serial_sha256: serial(&dir).map(|s| sha256_hex(s.as_bytes())),
        scheduler: text(&queue.join("scheduler")).and_then(|s| active_scheduler(&s)),
        nr_requests: read_value(&queue.join("nr_requests")),
        write_cache: text(&queue.join("write_cache")),
        discard_granularity: read_value(&queue.join("discard_granularity")),
        discard_max_bytes: read_value(&queue.join("discard_max_bytes")),
        minimum_io_size: read_value(&queue.join("minimum_io_size")),
        optimal_io_size: read_value(&queue.join("optimal_io_size")),
        built_from: if matches!(kind, "dm" | "md") { slaves(&dir) } else { Vec::new() },
        // An md or dm device can be partitioned too (md0p1).
        partitions: if kind == "partition" { Vec::new() } else { partitions(&dir) },
        dm: (kind == "dm").then(|| DmInfo {
            name: text(&dir.join("dm/name")),
            subsystem: text(&dir.join("dm/uuid")).and_then(|u| Some(u.split_once('-')?.0.to_owned())),
        }),
        md: (kind == "md").then(|| MdInfo {
            chunk_size_bytes: read_value(&dir.join("md/chunk_size")),
            raid_disks: read_value(&dir.join("md/raid_disks")),
        }),
    }
}

/// The drive's serial number, wherever its driver publishes it: virtio under the disk, NVMe
/// under the controller, SCSI and SATA only in the unit serial number VPD page (0x80).
fn serial(dir: &Path) -> Option<String> {
    text(&dir.join("serial"))
        .or_else(|| text(&dir.join("device/serial")))
        .or_else(|| vpd_serial(&fs::read(dir.join("device/vpd_pg80")).ok()?))
}

/// The serial in a VPD page 0x80: a 4-byte header whose last two bytes are the length.
fn vpd_serial(page: &[u8]) -> Option<String> {
    let len = usize::from(u16::from_be_bytes([*page.get(2)?, *page.get(3)?]));
    let serial = String::from_utf8_lossy(page.get(4..4 + len)?).trim().to_owned();
    (!serial.is_empty()).then_some(serial)
}

/// SHA-256 of `bytes` as lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// The scheduler in brackets in `none [mq-deadline] kyber`; a lone name when there is no choice.
fn active_scheduler(list: &str) -> Option<String> {
    match list.split_once('[') {
        Some((_, rest)) => Some(rest.split_once(']')?.0.to_owned()),
        None => (!list.contains(' ')).then(|| list.to_owned()),
    }
}

/// A whole disk's partitions, by name, with where they start and whether that is aligned.
fn partitions(disk_dir: &Path) -> Vec<Partition> {
    subdirs(disk_dir, "")
        .into_iter()
        .filter(|(_, dir)| dir.join("partition").exists())
        .map(|(name, dir)| {
            let start: Option<u64> = read_value(&dir.join("start"));
            let offset = sectors_to_bytes(start);
            Partition {
                name,
                start_sector: start,
                size_bytes: sectors_to_bytes(read_value(&dir.join("size"))),
                aligned_4k: offset.map(|o| o % 4096 == 0),
                aligned_1m: offset.map(|o| o % (1 << 20) == 0),
            }
        })
        .collect()
}

/// sysfs counts sizes and offsets in 512-byte sectors whatever the device's sector size.
fn sectors_to_bytes(sectors: Option<u64>) -> Option<u64> {
    sectors?.checked_mul(512)
}

fn cpu(roots: &Roots) -> CpuInventory {
    let info = fs::read_to_string(roots.proc.join("cpuinfo")).unwrap_or_default();
    let blocks = cpuinfo_blocks(&info);
    let field = |b: &BTreeMap<String, String>, k: &str| b.get(k).cloned();
    let sockets: BTreeSet<String> = blocks.iter().filter_map(|b| field(b, "physical id")).collect();
    let cores: BTreeSet<(String, String)> =
        blocks.iter().filter_map(|b| Some((field(b, "physical id")?, field(b, "core id")?))).collect();
    let count = |n: usize| (n > 0).then(|| u32::try_from(n).unwrap_or(u32::MAX));
    let cpus = roots.sys.join("devices/system/cpu");
    let freq = cpus.join("cpu0/cpufreq");
    let khz_to_mhz = |path: &Path| read_value::<f64>(path).map(|khz| khz / 1000.0);
    CpuInventory {
        model: blocks.iter().find_map(|b| field(b, "model name")),
        sockets: count(sockets.len()),
        cores: count(cores.len()),
        threads: count(blocks.iter().filter(|b| b.contains_key("processor")).count()),
        mhz_current: khz_to_mhz(&freq.join("scaling_cur_freq"))
            .or_else(|| blocks.first()?.get("cpu MHz")?.parse().ok()),
        mhz_max: khz_to_mhz(&freq.join("cpuinfo_max_freq")),
        governor: text(&freq.join("scaling_governor")),
        caches: caches(&cpus),
    }
}

/// `/proc/cpuinfo` as one `key: value` map per logical CPU (blocks between blank lines).
fn cpuinfo_blocks(text: &str) -> Vec<BTreeMap<String, String>> {
    text.split("\n\n")
        .map(|block| {
            block
                .lines()
                .filter_map(|line| line.split_once(':'))
                .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
                .collect::<BTreeMap<_, _>>()
        })
        .filter(|block| !block.is_empty())
        .collect()
}

/// Each kind of cache once, counted by the distinct CPU sets that share an instance of it.
fn caches(cpus: &Path) -> Vec<CpuCache> {
    let mut kinds: BTreeMap<(u8, String, u64), BTreeSet<String>> = BTreeMap::new();
    for (_, cpu) in subdirs(cpus, "cpu") {
        for (_, index) in subdirs(&cpu.join("cache"), "index") {
            let level = read_value(&index.join("level"));
            let kind = text(&index.join("type"));
            let size = text(&index.join("size")).and_then(|s| parse_cache_size(&s));
            let (Some(level), Some(kind), Some(size)) = (level, kind, size) else { continue };
            // Without shared_cpu_list, count each CPU's cache as its own instance.
            let sharers = text(&index.join("shared_cpu_list")).unwrap_or_else(|| cpu.display().to_string());
            kinds.entry((level, kind, size)).or_default().insert(sharers);
        }
    }
    let instances = |set: BTreeSet<String>| u32::try_from(set.len()).unwrap_or(u32::MAX);
    kinds
        .into_iter()
        .map(|((level, kind, size_bytes), set)| CpuCache {
            level,
            kind,
            size_bytes,
            instances: instances(set),
        })
        .collect()
}

/// A cache size as sysfs writes it: `48K`, `2048K`, `1M` (binary units) or plain bytes.
fn parse_cache_size(text: &str) -> Option<u64> {
    let (digits, unit) = match text.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => text.split_at(i),
        None => (text, ""),
    };
    let scale = match unit {
        "" => 1,
        "K" => 1 << 10,
        "M" => 1 << 20,
        "G" => 1 << 30,
        _ => return None,
    };
    digits.parse::<u64>().ok()?.checked_mul(scale)
}

fn memory(roots: &Roots) -> MemoryInventory {
    let meminfo = fs::read_to_string(roots.proc.join("meminfo")).unwrap_or_default();
    MemoryInventory { total_bytes: field_bytes(&meminfo, "MemTotal"), dimms: dimms(&roots.sys) }
}

/// The modules the EDAC driver lists (world-readable, unlike SMBIOS); none without EDAC.
fn dimms(sys: &Path) -> Vec<Dimm> {
    let mut out = Vec::new();
    for (_, mc) in subdirs(&sys.join("devices/system/edac/mc"), "mc") {
        for (_, dimm) in subdirs(&mc, "dimm") {
            let size_mib: Option<u64> = read_value(&dimm.join("size"));
            out.push(Dimm {
                label: text(&dimm.join("dimm_label")),
                size_bytes: size_mib.and_then(|m| m.checked_mul(1 << 20)),
                mem_type: text(&dimm.join("dimm_mem_type")),
            });
        }
    }
    out
}

/// `PRETTY_NAME` from os-release text, its quotes removed.
fn pretty_name(os_release: &str) -> Option<String> {
    let value = os_release.lines().find_map(|l| l.strip_prefix("PRETTY_NAME="))?.trim();
    let value = value.trim_matches(|c| c == '"' || c == '\'');
    (!value.is_empty()).then(|| value.to_owned())
}

/// The entries of `dir` named `prefix` followed by digits (all entries for an empty prefix),
/// in numeric order; nothing when `dir` cannot be read.
fn subdirs(dir: &Path, prefix: &str) -> Vec<(String, PathBuf)> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<(u64, String, PathBuf)> = entries
        .filter_map(|e| {
            let e = e.ok()?;
            let name = e.file_name().into_string().ok()?;
            let number = if prefix.is_empty() { 0 } else { name.strip_prefix(prefix)?.parse().ok()? };
            Some((number, name, e.path()))
        })
        .collect();
    out.sort();
    out.into_iter().map(|(_, name, path)| (name, path)).collect()
}

/// A text attribute, `None` when missing, unreadable or empty.
fn text(path: &Path) -> Option<String> {
    read_text(path).filter(|t| !t.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::device::tests::{FakeSys, var_tmp_device};
    use std::os::unix::fs::MetadataExt;

    const SDA_SERIAL: &str = "WD-WCC6Y0ABCDEF";
    /// `printf WD-WCC6Y0ABCDEF | sha256sum`
    const SDA_SERIAL_SHA256: &str = "9f7d974855eabb06c738b6c285a9cd8df720108dcb3cb607a88c45f5b5eba927";

    /// A fake machine: two CPUs on one socket, a directory `data` on an LVM volume (dm-0) on an
    /// md raid10 of sda2 and sdb; sda also holds sda1, which starts at sector 63.
    struct FakeMachine {
        sys: FakeSys,
        host: tempfile::TempDir,
        data: PathBuf,
    }

    impl FakeMachine {
        fn new() -> Self {
            let host = tempfile::tempdir().unwrap();
            let data = host.path().join("data");
            fs::create_dir(&data).unwrap();
            let m = FakeMachine { sys: FakeSys::empty(), host, data: fs::canonicalize(&data).unwrap() };
            m.cpus();
            m.devices();
            m.host_files();
            m
        }

        fn roots(&self) -> Roots {
            let h = self.host.path();
            Roots { proc: h.join("proc"), sys: self.sys.root().to_owned(), etc: h.join("etc") }
        }

        fn write(&self, rel: &str, text: &str) {
            let path = self.host.path().join(rel);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, text).unwrap();
        }

        fn cpus(&self) {
            let mut info = String::new();
            for cpu in 0..2 {
                info += &format!(
                    "processor\t: {cpu}\nmodel name\t: Fake Xeon 1234\ncpu MHz\t\t: 2100.000\n\
                     physical id\t: 0\ncore id\t\t: {cpu}\n\n"
                );
                let caches =
                    [("1", "Data", "48K", cpu.to_string()), ("1", "Instruction", "32K", cpu.to_string())];
                let shared =
                    [("2", "Unified", "2048K", cpu.to_string()), ("3", "Unified", "32M", "0-1".to_owned())];
                for (i, (level, kind, size, sharers)) in caches.into_iter().chain(shared).enumerate() {
                    let dir = format!("devices/system/cpu/cpu{cpu}/cache/index{i}");
                    self.sys.write(&format!("{dir}/level"), &format!("{level}\n"));
                    self.sys.write(&format!("{dir}/type"), &format!("{kind}\n"));
                    self.sys.write(&format!("{dir}/size"), &format!("{size}\n"));
                    self.sys.write(&format!("{dir}/shared_cpu_list"), &format!("{sharers}\n"));
                }
            }
            self.write("proc/cpuinfo", &info);
            self.sys.write("devices/system/cpu/cpu0/cpufreq/scaling_cur_freq", "2400000\n");
            self.sys.write("devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", "3500000\n");
            self.sys.write("devices/system/cpu/cpu0/cpufreq/scaling_governor", "performance\n");
        }

        /// The device numbers of `data` lead to dm-0, as st_dev would on a real machine.
        fn devices(&self) {
            let (s, dev) = (&self.sys, fs::metadata(&self.data).unwrap().dev());
            s.disk("dm-0", &format!("{}:{}", libc::major(dev), libc::minor(dev)), "0", 512, 4096);
            s.write("devices/virtual/block/dm-0/dm/name", "vg0-data\n");
            s.write("devices/virtual/block/dm-0/dm/uuid", "LVM-k3FqAbCdEf\n");
            s.slave("dm-0", "md0", "md0");
            s.disk("md0", "1009:0", "0", 512, 4096);
            s.write("devices/virtual/block/md0/md/level", "raid10\n");
            s.write("devices/virtual/block/md0/md/chunk_size", "524288\n");
            s.write("devices/virtual/block/md0/md/raid_disks", "2\n");
            s.slave("md0", "sda2", "sda/sda2");
            s.slave("md0", "sdb", "sdb");
            s.disk("sda", "1008:0", "1", 512, 512);
            s.write("devices/virtual/block/sda/size", "1953525168\n");
            s.write("devices/virtual/block/sda/ro", "0\n");
            s.write("devices/virtual/block/sda/device/model", "WDC WD10EZEX-00B\n");
            s.write("devices/virtual/block/sda/device/vendor", "ATA     \n");
            s.write("devices/virtual/block/sda/device/rev", "1A01\n");
            let mut page = vec![0, 0x80, 0, SDA_SERIAL.len() as u8 + 4];
            page.extend_from_slice(format!("    {SDA_SERIAL}").as_bytes());
            fs::write(s.root().join("devices/virtual/block/sda/device/vpd_pg80"), page).unwrap();
            s.write("devices/virtual/block/sda/queue/scheduler", "none [mq-deadline] kyber bfq\n");
            s.write("devices/virtual/block/sda/queue/nr_requests", "64\n");
            s.write("devices/virtual/block/sda/queue/write_cache", "write back\n");
            s.write("devices/virtual/block/sda/queue/discard_granularity", "0\n");
            s.write("devices/virtual/block/sda/queue/discard_max_bytes", "0\n");
            s.write("devices/virtual/block/sda/queue/minimum_io_size", "512\n");
            s.write("devices/virtual/block/sda/queue/optimal_io_size", "0\n");
            s.write("devices/virtual/block/md0/queue/minimum_io_size", "524288\n");
            s.write("devices/virtual/block/md0/queue/optimal_io_size", "524288\n");
            s.write("devices/virtual/block/sdb/queue/discard_granularity", "4096\n");
            s.write("devices/virtual/block/sdb/queue/discard_max_bytes", "2147450880\n");
            for (part, dev, start, size) in
                [("sda1", "1008:1", "63", "2048"), ("sda2", "1008:2", "2048", "4096")]
            {
                s.partition("sda", part, dev);
                s.write(&format!("devices/virtual/block/sda/{part}/start"), &format!("{start}\n"));
                s.write(&format!("devices/virtual/block/sda/{part}/size"), &format!("{size}\n"));
            }
            s.disk("sdb", "1008:16", "0", 512, 4096);
            s.write("devices/virtual/block/sdb/queue/write_cache", "write through\n");
            s.write("devices/virtual/block/sdb/queue/scheduler", "none\n");
        }

        fn host_files(&self) {
            let data = self.data.display();
            self.write(
                "proc/self/mountinfo",
                &format!(
                    "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard\n\
                     50 27 253:0 / {data} rw,noatime shared:7 - ext4 /dev/mapper/vg0-data rw,stripe=128\n"
                ),
            );
            self.write("proc/meminfo", "MemTotal:       16303152 kB\nMemFree:  1000 kB\n");
            self.write("proc/sys/kernel/osrelease", "6.1.0-18-amd64\n");
            self.write("proc/sys/kernel/version", "#1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1\n");
            self.write(
                "etc/os-release",
                "NAME=\"Debian GNU/Linux\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n",
            );
            self.sys.write("devices/system/edac/mc/mc0/dimm0/size", "16384\n");
            self.sys.write("devices/system/edac/mc/mc0/dimm0/dimm_label", "CPU_SrcID#0_Chan#0_DIMM#0\n");
            self.sys.write("devices/system/edac/mc/mc0/dimm0/dimm_mem_type", "Registered-DDR4\n");
        }

        fn gather(&self) -> Disclosure {
            let later = self.data.join("not-yet/db.dat");
            gather_with(&self.roots(), &[&self.data, &later])
        }
    }

    fn device<'a>(d: &'a Disclosure, name: &str) -> &'a BlockDevice {
        d.devices.iter().find(|dev| dev.layer.name == name).unwrap()
    }

    #[test]
    fn cpus_are_counted_by_socket_core_and_thread_with_each_cache_kind_once() {
        let cpu = FakeMachine::new().gather().cpu;
        assert_eq!(cpu.model.as_deref(), Some("Fake Xeon 1234"));
        assert_eq!((cpu.sockets, cpu.cores, cpu.threads), (Some(1), Some(2), Some(2)));
        assert_eq!((cpu.mhz_current, cpu.mhz_max), (Some(2400.0), Some(3500.0)));
        assert_eq!(cpu.governor.as_deref(), Some("performance"));
        let cache = |level, kind: &str, size_bytes, instances| CpuCache {
            level,
            kind: kind.into(),
            size_bytes,
            instances,
        };
        let expected = vec![
            cache(1, "Data", 48 << 10, 2),
            cache(1, "Instruction", 32 << 10, 2),
            cache(2, "Unified", 2 << 20, 2),
            cache(3, "Unified", 32 << 20, 1),
        ];
        assert_eq!(cpu.caches, expected);
    }

    #[test]
    fn memory_kernel_and_distribution() {
        let d = FakeMachine::new().gather();
        assert_eq!(d.memory.total_bytes, Some(16_303_152 * 1024));
        assert_eq!(d.memory.dimms.len(), 1);
        assert_eq!(d.memory.dimms[0].size_bytes, Some(16 << 30));
        assert_eq!(d.memory.dimms[0].mem_type.as_deref(), Some("Registered-DDR4"));
        assert_eq!(d.kernel.release.as_deref(), Some("6.1.0-18-amd64"));
        assert!(d.kernel.version.as_deref().is_some_and(|v| v.contains("Debian 6.1.76-1")));
        assert_eq!(d.distribution.as_deref(), Some("Debian GNU/Linux 12 (bookworm)"));
        assert_eq!(d.storbench_version, env!("CARGO_PKG_VERSION"));
        assert_eq!(d.database, DatabaseInfo::default());
    }

    #[test]
    fn a_target_leads_through_its_mount_to_every_layer_once() {
        let m = FakeMachine::new();
        let d = m.gather();
        for target in &d.targets {
            assert_eq!(target.mount_point.as_deref(), Some(m.data.to_str().unwrap()));
            assert_eq!(target.fstype.as_deref(), Some("ext4"));
            assert_eq!(target.source.as_deref(), Some("/dev/mapper/vg0-data"));
            assert_eq!(target.mount_options.as_deref(), Some("rw,noatime"));
            assert_eq!(target.super_options.as_deref(), Some("rw,stripe=128"));
            assert_eq!(target.device.as_deref(), Some("dm-0"));
            // The statvfs of the real directory the fake mount stands for.
            assert!(target.block_size.is_some_and(|b| b >= 512 && b.is_power_of_two()), "{target:?}");
            assert!(target.fragment_size.is_some());
        }
        let names: Vec<&str> = d.devices.iter().map(|dev| dev.layer.name.as_str()).collect();
        assert_eq!(names, ["dm-0", "md0", "sda2", "sda", "sdb"]);
        let dm = device(&d, "dm-0");
        assert_eq!(dm.dm, Some(DmInfo { name: Some("vg0-data".into()), subsystem: Some("LVM".into()) }));
        assert_eq!(
            (dm.built_from.clone(), dm.layer.members.clone()),
            (vec!["md0".into()], vec!["sda".into(), "sdb".into()])
        );
        let md = device(&d, "md0");
        assert_eq!(md.layer.raid_level.as_deref(), Some("raid10"));
        assert_eq!(md.md, Some(MdInfo { chunk_size_bytes: Some(512 << 10), raid_disks: Some(2) }));
        assert_eq!(md.built_from, ["sda2", "sdb"]);
        assert_eq!(device(&d, "sda2").layer.parent.as_deref(), Some("sda"));
    }

    #[test]
    fn a_disk_discloses_its_hardware_queue_and_partition_alignment() {
        let d = FakeMachine::new().gather();
        let sda = device(&d, "sda");
        assert_eq!(sda.model.as_deref(), Some("WDC WD10EZEX-00B"));
        assert_eq!((sda.vendor.as_deref(), sda.firmware.as_deref()), (Some("ATA"), Some("1A01")));
        assert_eq!((sda.size_bytes, sda.read_only), (Some(1_953_525_168 * 512), Some(false)));
        assert_eq!(sda.layer.rotational, Some(true));
        assert_eq!((sda.scheduler.as_deref(), sda.nr_requests), (Some("mq-deadline"), Some(64)));
        assert_eq!(sda.write_cache.as_deref(), Some("write back"));
        assert_eq!((sda.discard_granularity, sda.discard_max_bytes), (Some(0), Some(0)));
        assert_eq!((sda.minimum_io_size, sda.optimal_io_size), (Some(512), Some(0)));
        let sdb = device(&d, "sdb");
        assert_eq!((sdb.discard_granularity, sdb.discard_max_bytes), (Some(4096), Some(2_147_450_880)));
        let md = device(&d, "md0");
        assert_eq!((md.minimum_io_size, md.optimal_io_size), (Some(512 << 10), Some(512 << 10)));
        assert_eq!(device(&d, "sda2").discard_max_bytes, None, "a partition has no queue of its own");
        let part = |name: &str, start, size: u64, aligned| Partition {
            name: name.into(),
            start_sector: Some(start),
            size_bytes: Some(size * 512),
            aligned_4k: Some(aligned),
            aligned_1m: Some(aligned),
        };
        assert_eq!(sda.partitions, vec![part("sda1", 63, 2048, false), part("sda2", 2048, 4096, true)]);
        let sdb = device(&d, "sdb");
        assert_eq!(
            (sdb.write_cache.as_deref(), sdb.scheduler.as_deref()),
            (Some("write through"), Some("none"))
        );
        assert_eq!((sdb.model.as_deref(), sdb.serial_sha256.as_deref()), (None, None));
    }

    #[test]
    fn the_serial_is_stored_only_as_its_sha256() {
        let d = FakeMachine::new().gather();
        assert_eq!(device(&d, "sda").serial_sha256.as_deref(), Some(SDA_SERIAL_SHA256));
        let json = serde_json::to_string(&d).unwrap();
        assert!(!json.contains(SDA_SERIAL), "{json}");
        assert_eq!(serde_json::from_str::<Disclosure>(&json).unwrap(), d);
        // The wire format: a device's layer fields sit beside its own, not nested.
        let value: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(value["devices"][3]["name"], "sda");
        assert_eq!(value["devices"][3]["serial_sha256"], SDA_SERIAL_SHA256);
        assert_eq!(value["devices"][3]["partitions"][0]["aligned_4k"], false);
    }

    #[test]
    fn an_empty_machine_gives_nothing_and_does_not_panic() {
        let empty = tempfile::tempdir().unwrap();
        let roots =
            Roots { proc: empty.path().join("p"), sys: empty.path().join("s"), etc: empty.path().join("e") };
        let d = gather_with(&roots, &[Path::new("/nonexistent/storbench"), Path::new("")]);
        assert_eq!(d.cpu, CpuInventory::default());
        assert_eq!(d.memory, MemoryInventory::default());
        assert!(d.devices.is_empty());
        assert!(d.targets.iter().all(|t| t.device.is_none() && t.mount_point.is_none()));
        assert_eq!((d.kernel.release, d.distribution), (None, None));
    }

    #[test]
    fn sysfs_formats() {
        assert_eq!(active_scheduler("none [mq-deadline] kyber").as_deref(), Some("mq-deadline"));
        assert_eq!(active_scheduler("[none] mq-deadline").as_deref(), Some("none"));
        assert_eq!(active_scheduler("none").as_deref(), Some("none"));
        assert_eq!(active_scheduler("none mq-deadline"), None);
        assert_eq!(parse_cache_size("48K"), Some(48 * 1024));
        assert_eq!(parse_cache_size("1M"), Some(1 << 20));
        assert_eq!(parse_cache_size("512"), Some(512));
        assert_eq!(parse_cache_size("12Q"), None);
        assert_eq!(vpd_serial(&[0, 0x80, 0, 3, b'A', b'B', b'C']).as_deref(), Some("ABC"));
        assert_eq!(vpd_serial(&[0, 0x80, 0, 9, b'A']), None);
        assert_eq!(vpd_serial(&[0, 0x80]), None);
        assert_eq!(
            pretty_name("ID=x\nPRETTY_NAME='Alpine Linux v3.19'\n").as_deref(),
            Some("Alpine Linux v3.19")
        );
        assert_eq!(pretty_name("PRETTY_NAME=\"\"\n"), None);
    }

    #[test]
    fn this_machine_has_a_device_with_a_size_under_var_tmp_and_a_kernel_release() {
        let d = gather(&[Path::new("/var/tmp")]);
        assert!(d.kernel.release.as_ref().is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit())));
        assert!(d.cpu.threads.is_some_and(|t| t >= 1));
        let Some((name, _)) = var_tmp_device() else {
            let missing = "/var/tmp is not on a block device here, for the device part";
            return crate::testing::skip(missing, "run on a machine whose /var/tmp is on a disk");
        };
        assert_eq!(d.targets[0].device.as_deref(), Some(name.as_str()));
        let top = device(&d, &name);
        assert!(top.size_bytes.is_some_and(|s| s > 0));
    }

    #[test]
    fn a_file_on_a_real_btrfs_raid1_discloses_both_members() {
        let Some(raid) = crate::monitor::rebuild::btrfs::tests::LoopRaid1::new() else { return };
        let later = raid.mount.join("not-yet.dat");
        let d = gather(&[&later]);
        assert_eq!(d.targets[0].devices, raid.devices);
        assert!(raid.devices.contains(d.targets[0].device.as_ref().unwrap()));
        for member in &raid.devices {
            assert!(device(&d, member).size_bytes.is_some_and(|s| s > 0), "{member}");
        }
    }
}

#[cfg(test)]
#[path = "disclosure_loop_tests.rs"]
mod loop_tests;
