//! The end of a report: the method followed, the configurations, the notes, and the full
//! disclosure of the system under test (what another person needs to judge or rebuild it).

use super::ReportInput;
use super::doc::{Block, Table, num};
use crate::disclosure::{BlockDevice, Disclosure};
use crate::evaluation::{Evaluation, Method};

pub(super) fn method(e: &Evaluation) -> Vec<Block> {
    let m = &e.method;
    let mut items = vec![
        format!(
            "Repetitions: {} per workload, configuration and sweep point. The reported run is the \
             median by the headline figure (of an even count, the less favourable middle run); \
             its power figures are its own.",
            m.repetitions
        ),
        window(m),
        if m.idle_settle_s > 0.0 {
            format!("Idle settle: {} s of quiet before each run's idle window.", num(m.idle_settle_s))
        } else {
            "Idle settle: none (each run started straight after the one before).".into()
        },
        if m.idle_power_s > 0.0 {
            format!("Idle power: averaged over {} s before each run.", num(m.idle_power_s))
        } else {
            "Idle power: not measured.".into()
        },
        match m.precondition_passes {
            0 => "Preconditioning: none.".into(),
            n => format!(
                "Preconditioning: {n} pass(es) of sequential 128 KiB writes over each target before its first run."
            ),
        },
        match &m.power_source {
            Some(p) => format!("Power source: {p}."),
            None => "No power source: power not measured.".into(),
        },
        own_meters(e),
        format!("Seed: {} (every random choice derives from it).", m.seed),
    ];
    items.retain(|i| !i.is_empty());
    if !e.complete {
        items.push("The evaluation did not finish: runs still pending are listed as such.".into());
    }
    // Optional columns, shown where any configuration has a value.
    let optional: [(&str, ListOf); 2] =
        [("its own workload values", |c| &c.own_values), ("background streams", |c| &c.background)];
    let shown: Vec<_> =
        optional.iter().filter(|(_, of)| e.configurations.iter().any(|c| !of(c).is_empty())).collect();
    let mut header = vec!["configuration", "target", "description"];
    header.extend(shown.iter().map(|(name, _)| *name));
    let mut configs = Table::new(&header);
    for c in &e.configurations {
        let mut row = vec![c.name.clone(), c.target.clone(), c.description.clone().unwrap_or_default()];
        row.extend(shown.iter().map(|(_, of)| of(c).join("; ")));
        configs.push(row);
    }
    vec![Block::Heading(2, "Method".into()), Block::List(items), Block::Table(configs)]
}

/// The configurations whose watts came from a meter of their own, where any did.
fn own_meters(e: &Evaluation) -> String {
    let own: Vec<String> = e
        .configurations
        .iter()
        .filter_map(|c| Some(format!("{}: {}", c.name, c.power_source.as_ref()?)))
        .collect();
    match own.as_slice() {
        [] => String::new(),
        _ => format!("Meters of their own (their runs' watts come from these alone): {}.", own.join("; ")),
    }
}

/// A configuration's list for one column of the method table.
type ListOf = fn(&crate::evaluation::Configuration) -> &Vec<String>;

fn window(m: &Method) -> String {
    match (&m.steady_state, m.window.as_str()) {
        (Some(r), _) => format!(
            "Measurement window: steady state (SNIA PTS rule): rounds of {} s until the last {} \
             rounds lie within {} % of their mean and their trend changes by at most {} % of it; \
             at most {} rounds.",
            num(r.round_s),
            r.rounds,
            num(r.range_pct),
            num(r.slope_pct),
            r.max_rounds
        ),
        (None, "fixed") | (None, "") => {
            "Measurement window: each workload's own measured phase (fixed length).".into()
        }
        (None, other) => format!("Measurement window: {other}."),
    }
}

pub(super) fn notes(input: &ReportInput) -> Vec<Block> {
    let items: Vec<String> = input.evaluation.notes.iter().chain(&input.problems).cloned().collect();
    if items.is_empty() {
        return Vec::new();
    }
    vec![Block::Heading(2, "Notes".into()), Block::List(items)]
}

pub(super) fn disclosure(d: Option<&Disclosure>) -> Vec<Block> {
    let mut out = vec![Block::Heading(2, "Appendix: the system under test".into())];
    let Some(d) = d else {
        out.push(Block::Para("No disclosure.json in the bundle: the system is not described.".into()));
        return out;
    };
    out.push(Block::Table(system(d)));
    out.push(Block::Heading(3, "Targets and mounts".into()));
    let mut targets = Table::new(&["path", "mount point", "fstype", "source", "mount options", "device"]);
    for t in &d.targets {
        let cells = [&t.mount_point, &t.fstype, &t.source, &t.mount_options, &t.device];
        let mut row = vec![t.path.clone()];
        row.extend(cells.map(|c| c.clone().unwrap_or_else(|| "—".into())));
        targets.push(row);
    }
    out.push(Block::Table(targets));
    out.push(Block::Heading(3, "Devices, top layer first".into()));
    let mut devices = Table::new(&[
        "name",
        "kind",
        "model",
        "firmware",
        "size",
        "rotational",
        "sectors",
        "scheduler",
        "write cache",
        "layers",
    ]);
    for dev in &d.devices {
        devices.push(device_row(dev));
    }
    out.push(Block::Table(devices));
    out.extend(database(d));
    out
}

fn system(d: &Disclosure) -> Table {
    let c = &d.cpu;
    let counts =
        format!("{} socket(s), {} cores, {} threads", known(c.sockets), known(c.cores), known(c.threads));
    let caches: Vec<String> = c
        .caches
        .iter()
        .map(|k| format!("L{} {} {} × {}", k.level, k.kind, bytes(k.size_bytes), k.instances))
        .collect();
    let dimms: Vec<String> = d
        .memory
        .dimms
        .iter()
        .map(|m| {
            format!(
                "{} {}",
                m.size_bytes.map(bytes).unwrap_or_default(),
                m.mem_type.clone().unwrap_or_default()
            )
        })
        .collect();
    Table::pairs(
        ["component", "as found"],
        vec![
            ("CPU", c.model.clone()),
            ("CPU count", Some(counts)),
            ("clock", c.mhz_current.map(|m| clock(m, c.mhz_max))),
            ("governor", c.governor.clone()),
            ("caches", (!caches.is_empty()).then(|| caches.join("; "))),
            ("memory", d.memory.total_bytes.map(bytes)),
            ("DIMMs", (!dimms.is_empty()).then(|| dimms.join("; "))),
            ("kernel", d.kernel.release.clone()),
            ("kernel build", d.kernel.version.clone()),
            ("distribution", d.distribution.clone()),
            ("storbench", Some(d.storbench_version.clone())),
        ],
    )
}

fn device_row(d: &BlockDevice) -> Vec<String> {
    let l = &d.layer;
    let sectors = format!(
        "{}/{}",
        l.logical_sector_size.map_or("?".into(), |s| s.to_string()),
        l.physical_sector_size.map_or("?".into(), |s| s.to_string())
    );
    let mut layers: Vec<String> = Vec::new();
    layers.extend(l.parent.as_ref().map(|p| format!("on {p}")));
    layers.extend(l.raid_level.clone());
    if !d.built_from.is_empty() {
        layers.push(format!("built from {}", d.built_from.join(", ")));
    }
    layers.extend(d.dm.as_ref().and_then(|m| m.subsystem.clone()).map(|s| format!("dm {s}")));
    for p in &d.partitions {
        let aligned = if p.aligned_1m == Some(true) {
            "1 MiB-aligned"
        } else if p.aligned_4k == Some(true) {
            "4 KiB-aligned"
        } else {
            "not aligned"
        };
        layers.push(format!("{} {aligned}", p.name));
    }
    let model = [&d.vendor, &d.model].iter().filter_map(|s| s.as_deref()).collect::<Vec<_>>().join(" ");
    vec![
        l.name.clone(),
        l.kind.clone(),
        if model.is_empty() { "—".into() } else { model },
        d.firmware.clone().unwrap_or_else(|| "—".into()),
        d.size_bytes.map_or("—".into(), bytes),
        l.rotational.map_or("—".into(), |r| if r { "yes" } else { "no" }.into()),
        sectors,
        d.scheduler.clone().unwrap_or_else(|| "—".into()),
        d.write_cache.clone().unwrap_or_else(|| "—".into()),
        layers.join("; "),
    ]
}

fn database(d: &Disclosure) -> Vec<Block> {
    let db = &d.database;
    let Some(kind) = &db.kind else { return Vec::new() };
    let mut t = Table::new(&["setting", "value"]);
    for (k, v) in &db.non_default_settings {
        t.push(vec![k.clone(), v.clone()]);
    }
    vec![
        Block::Heading(3, "Database".into()),
        Block::Para(format!(
            "{kind} {}; settings that differ from the server's defaults:",
            db.version.clone().unwrap_or_default()
        )),
        Block::Table(t),
    ]
}

fn known(v: Option<u32>) -> String {
    v.map_or("?".into(), |v| v.to_string())
}

/// Binary units, as the tool's own options take them.
fn bytes(b: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    format!("{} {}", num(v), UNITS[u])
}

fn clock(now: f64, max: Option<f64>) -> String {
    match max {
        Some(max) => format!("{} MHz when gathered, {} MHz max", num(now), num(max)),
        None => format!("{} MHz when gathered", num(now)),
    }
}
