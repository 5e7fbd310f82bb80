//! The setup checks on constructed disclosures: a clean setup gives no warning, and each
//! problem planted in it gives exactly its own.

use super::*;
use crate::DeviceInfo;
use crate::disclosure::{MdInfo, MemoryInventory, Partition};

/// A clean setup: `/data` (ext4, relatime) on sda1, 1 MiB-aligned on an SSD with 4 KiB
/// sectors, discard and a write-back cache; 16 GiB of memory, a 64 GiB PostgreSQL database.
struct Setup {
    disclosure: Disclosure,
    target: TargetPath,
    pages: Vec<PageSize>,
    data: Vec<DataSet>,
}

fn layer(name: &str, kind: &str, parent: Option<&str>) -> DeviceInfo {
    DeviceInfo {
        name: name.into(),
        kind: kind.into(),
        parent: parent.map(Into::into),
        physical_sector_size: Some(4096),
        rotational: Some(false),
        ..DeviceInfo::default()
    }
}

fn clean() -> Setup {
    let sda = BlockDevice {
        layer: layer("sda", "disk", None),
        scheduler: Some("none".into()),
        write_cache: Some("write back".into()),
        discard_max_bytes: Some(2 << 30),
        minimum_io_size: Some(4096),
        optimal_io_size: Some(0),
        partitions: vec![Partition { name: "sda1".into(), start_sector: Some(2048), ..Partition::default() }],
        ..BlockDevice::default()
    };
    let sda1 = BlockDevice { layer: layer("sda1", "partition", Some("sda")), ..BlockDevice::default() };
    let disclosure = Disclosure {
        schema_version: 1,
        storbench_version: "0.1.0".into(),
        cpu: Default::default(),
        memory: MemoryInventory { total_bytes: Some(16 << 30), dimms: Vec::new() },
        targets: Vec::new(),
        devices: vec![sda1, sda],
        kernel: Default::default(),
        distribution: None,
        database: Default::default(),
    };
    let target = TargetPath {
        path: "/data".into(),
        mount_point: Some("/data".into()),
        fstype: Some("ext4".into()),
        mount_options: Some("rw,relatime".into()),
        super_options: Some("rw".into()),
        device: Some("sda1".into()),
        devices: vec!["sda1".into()],
        block_size: Some(4096),
        ..TargetPath::default()
    };
    let postgres = database_page_size("postgres", &Default::default()).unwrap();
    let pages = vec![postgres, PageSize { owner: "the mailbox databases".into(), bytes: 32 << 10 }];
    let data = vec![DataSet {
        workload: "oltp".into(),
        bytes: 64 << 30,
        cached: true,
        server_device: Some("sda1".into()),
        on_server: true,
        server_cache: None,
    }];
    Setup { disclosure, target, pages, data }
}

impl Setup {
    fn checks(&self) -> Vec<SetupCheck> {
        check(&SetupInput {
            disclosure: &self.disclosure,
            target: &self.target,
            page_sizes: &self.pages,
            data: &self.data,
        })
    }

    /// The ids of the checks that warned.
    fn warned(&self) -> Vec<&'static str> {
        self.checks().into_iter().filter(|c| c.status == Status::Warn).map(|c| c.check).collect()
    }

    fn disk(&mut self) -> &mut BlockDevice {
        self.disclosure.devices.iter_mut().find(|d| d.layer.name == "sda").unwrap()
    }
}

#[test]
fn a_clean_setup_gives_no_warning_and_checks_everything_it_can() {
    let checks = clean().checks();
    assert!(checks.iter().all(|c| c.status == Status::Ok), "{checks:#?}");
    let ids: Vec<&str> = checks.iter().map(|c| c.check).collect();
    for id in [
        "partition-alignment",
        "block-size",
        "block-vs-page",
        "flush",
        "data-mode",
        "io-scheduler",
        "discard",
        "atime",
        "fits-in-memory",
        "data-location",
    ] {
        assert!(ids.contains(&id), "{id} not checked: {ids:?}");
    }
}

/// Each planted problem, and the one check that must warn of it.
#[test]
fn each_planted_problem_is_found_by_its_own_check() {
    type Plant = fn(&mut Setup);
    let plants: [(&str, Plant); 16] = [
        ("partition-alignment", |s| s.disk().partitions[0].start_sector = Some(63)),
        ("stripe-alignment", |s| {
            // A hardware RAID 5 of 4 disks with 64 KiB chunks: a 192 KiB stripe, which 1 MiB
            // is not a multiple of.
            s.disk().minimum_io_size = Some(64 << 10);
            s.disk().optimal_io_size = Some(192 << 10);
            s.target.super_options = Some("rw,stripe=48".into());
        }),
        ("fs-stripe", |s| {
            // The same RAID on a partition at 3 MiB, but ext4 was never told its stripe.
            s.disk().minimum_io_size = Some(64 << 10);
            s.disk().optimal_io_size = Some(192 << 10);
            s.disk().partitions[0].start_sector = Some(6144);
        }),
        ("block-size", |s| s.target.block_size = Some(1024)),
        ("block-vs-page", |s| s.target.block_size = Some(128 << 10)),
        ("block-vs-page", |s| s.pages = vec![PageSize { owner: "odd".into(), bytes: 6 << 10 }]),
        ("raid-chunk", |s| {
            // /data on an md RAID 10 of sda1 with 4 KiB chunks, smaller than an 8 KiB page.
            let md = BlockDevice {
                layer: DeviceInfo { raid_level: Some("raid10".into()), ..layer("md0", "md", None) },
                built_from: vec!["sda1".into()],
                discard_max_bytes: Some(1 << 30),
                md: Some(MdInfo { chunk_size_bytes: Some(4 << 10), raid_disks: Some(2) }),
                ..BlockDevice::default()
            };
            s.disclosure.devices.insert(0, md);
            s.target.devices = vec!["md0".into()];
            s.data[0].server_device = Some("md0".into());
        }),
        ("flush", |s| s.target.super_options = Some("rw,nobarrier".into())),
        ("data-mode", |s| s.target.super_options = Some("rw,data=writeback".into())),
        ("io-scheduler", |s| s.disk().layer.rotational = Some(true)),
        ("io-scheduler", |s| s.disk().scheduler = Some("bfq".into())),
        ("discard", |s| s.target.super_options = Some("rw,discard".into())),
        ("discard", |s| s.disk().discard_max_bytes = Some(0)),
        ("atime", |s| s.target.mount_options = Some("rw".into())),
        ("fits-in-memory", |s| s.data[0].bytes = 8 << 30),
        ("data-location", |s| s.data[0].server_device = Some("nvme0n1".into())),
    ];
    for (id, plant) in plants {
        let mut setup = clean();
        plant(&mut setup);
        let warned = setup.warned();
        assert!(!warned.is_empty() && warned.iter().all(|w| *w == id), "planted {id}, warned {warned:?}");
        let found = setup.checks().into_iter().find(|c| c.check == id && c.status == Status::Warn).unwrap();
        assert!(!found.found.is_empty() && !found.why.is_empty() && !found.change.is_empty(), "{found:#?}");
    }
}

#[test]
fn a_loop_devices_scheduler_is_not_judged_its_backing_disks_orders_its_requests() {
    let mut s = clean();
    s.disk().layer.rotational = Some(true);
    s.disk().layer.name = "loop0".into();
    s.disclosure.devices[0].layer.parent = Some("loop0".into());
    assert_eq!(s.warned(), Vec::<&str>::new());
    assert!(s.checks().iter().all(|c| c.check != "io-scheduler"));
}

#[test]
fn what_a_check_says_names_the_figures() {
    let mut s = clean();
    s.disk().partitions[0].start_sector = Some(63);
    s.target.block_size = Some(1024);
    let checks = s.checks();
    let said = |id: &str| checks.iter().find(|c| c.check == id).unwrap().clone();
    assert_eq!(said("partition-alignment").found, "starts at sector 63 (32256 B), not on a 1 MiB boundary");
    assert_eq!(said("block-size").found, "1 KiB blocks on a disk with 4 KiB physical sectors");
    assert_eq!(said("block-size").subject, "/data (ext4)");
    assert!(said("partition-alignment").change.contains("multiple of 2048 sectors"));
}

#[test]
fn a_filesystem_told_its_stripe_is_ok_in_ext4_blocks_and_xfs_sectors() {
    let mut s = clean();
    s.disk().minimum_io_size = Some(64 << 10);
    s.disk().optimal_io_size = Some(192 << 10);
    s.disk().partitions[0].start_sector = Some(6144);
    s.target.super_options = Some("rw,stripe=48".into());
    assert_eq!(s.warned(), Vec::<&str>::new());
    s.target.fstype = Some("xfs".into());
    s.target.super_options = Some("rw,attr2,inode64,sunit=128,swidth=384".into());
    assert_eq!(s.warned(), Vec::<&str>::new());
    let said = s.checks().into_iter().find(|c| c.check == "fs-stripe").unwrap();
    assert_eq!(
        said.found,
        "the stripe is 192 KiB (the device's optimal I/O size); the filesystem's is 192 KiB"
    );
    s.target.super_options = Some("rw,swidth=256".into());
    assert_eq!(s.warned(), ["fs-stripe"]);
}

#[test]
fn an_md_stripe_is_its_chunk_times_its_data_disks() {
    let md = |level: &str, disks| BlockDevice {
        layer: DeviceInfo { raid_level: Some(level.into()), ..layer("md0", "md", None) },
        md: Some(MdInfo { chunk_size_bytes: Some(512 << 10), raid_disks: Some(disks) }),
        ..BlockDevice::default()
    };
    assert_eq!(stripe(&md("raid5", 4)).map(|s| s.0), Some(1536 << 10));
    assert_eq!(stripe(&md("raid6", 6)).map(|s| s.0), Some(2 << 20));
    assert_eq!(stripe(&md("raid10", 4)).map(|s| s.0), Some(1 << 20));
    assert_eq!(stripe(&md("raid1", 2)), None);
    // A drive's placeholder optimal I/O size (65535 sectors) is no stripe.
    let sata = BlockDevice {
        minimum_io_size: Some(512),
        optimal_io_size: Some(33_553_920),
        ..BlockDevice::default()
    };
    assert_eq!(stripe(&sata), None);
}

#[test]
fn what_the_disclosure_lacks_is_unknown_never_a_warning() {
    let mut s = clean();
    s.target.block_size = None;
    s.disk().partitions[0].start_sector = None;
    s.disclosure.memory.total_bytes = None;
    s.data[0].server_device = None;
    let checks = s.checks();
    assert!(checks.iter().all(|c| c.status != Status::Warn), "{checks:#?}");
    let unknown: Vec<&str> = checks.iter().filter(|c| c.status == Status::Unknown).map(|c| c.check).collect();
    assert_eq!(unknown, ["partition-alignment", "block-size", "fits-in-memory", "data-location"]);
    // A remote server's memory is not this machine's, however small its database.
    let mut remote = clean();
    remote.data[0].server_device = None;
    remote.data[0].bytes = 1 << 30;
    let memory = remote.checks().into_iter().find(|c| c.check == "fits-in-memory").unwrap();
    assert_eq!(memory.status, Status::Unknown, "{memory:?}");
    // A raw device or a memory filesystem has no filesystem to check.
    let mut raw = clean();
    raw.target.mount_point = None;
    assert!(raw.checks().iter().all(|c| !matches!(c.check, "block-size" | "atime" | "flush")));
}

#[test]
fn database_page_sizes_are_stated_or_the_defaults() {
    let none = Default::default();
    let size = |kind, settings| database_page_size(kind, settings).map(|p| p.bytes);
    assert_eq!(database_page_size("postgres", &none).unwrap().owner, "PostgreSQL (default)");
    assert_eq!(size("postgres", &none), Some(8192));
    assert_eq!(size("mysql", &none), Some(16384));
    assert_eq!(size("sqlite", &none), Some(4096));
    let stated = [("page_size".to_string(), "16384".to_string())].into_iter().collect();
    assert_eq!(size("sqlite", &stated), Some(16384));
    assert_eq!(database_page_size("sqlite", &stated).unwrap().owner, "SQLite");
    assert_eq!(size("io", &none), None);
}

#[test]
fn a_servers_own_cache_that_holds_its_data_warns_wherever_the_server_runs_and_o_direct_leaves_it_alone() {
    let settings = |pairs: &[(&str, &str)]| -> std::collections::BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    };
    // PostgreSQL's shared_buffers as current_setting prints it, or in 8 kB blocks.
    for (text, bytes) in [("128MB", 128 << 20), ("16384", 128 << 20), ("1GB", 1 << 30), ("512kB", 512 << 10)]
    {
        let c = ServerCache::of("postgres", &settings(&[("shared_buffers", text)])).unwrap();
        assert_eq!((c.setting, c.bytes, c.direct), ("shared_buffers", bytes, false), "{text}");
    }
    assert_eq!(ServerCache::of("postgres", &settings(&[("shared_buffers", "lots")])), None);
    assert_eq!(ServerCache::of("sqlite", &settings(&[("cache_size", "-2000")])), None);
    let innodb = settings(&[("innodb_buffer_pool_size", "134217728"), ("innodb_flush_method", "O_DIRECT")]);
    let pool = ServerCache::of("mysql", &innodb).unwrap();
    assert_eq!((pool.bytes, pool.direct), (128 << 20, true));
    let judged = |setup: &Setup| setup.checks().into_iter().find(|c| c.check == "fits-in-memory").unwrap();
    // A remote PostgreSQL whose shared_buffers holds the data: a warning, where the machine's
    // memory alone could not say.
    let mut remote = clean();
    remote.data[0] = DataSet {
        bytes: 64 << 20,
        server_device: None,
        server_cache: ServerCache::of("postgres", &settings(&[("shared_buffers", "128MB")])),
        ..remote.data[0].clone()
    };
    let c = judged(&remote);
    assert_eq!(c.status, Status::Warn, "{c:?}");
    assert!(c.found.contains("shared_buffers 0.1 GiB") && c.change.contains("lower shared_buffers"), "{c:?}");
    remote.data[0].bytes = 1 << 30;
    assert_eq!(judged(&remote).status, Status::Unknown, "larger than its cache, on a machine not disclosed");
    // InnoDB with O_DIRECT on this machine: 8 GiB of data would fit the machine's memory, but the
    // page cache holds none of it and the pool is 128 MiB: not in memory.
    let mut local = clean();
    local.data[0].bytes = 8 << 30;
    assert_eq!(judged(&local).status, Status::Warn, "without the pool's facts, memory holds it");
    local.data[0].server_cache = Some(pool.clone());
    let c = judged(&local);
    assert_eq!(c.status, Status::Ok, "{c:?}");
    assert!(c.found.contains("O_DIRECT"), "{c:?}");
    local.data[0].bytes = 100 << 20;
    assert_eq!(judged(&local).status, Status::Warn, "the pool holds it all");
}
