//! The test's databases: created (every page with its checksum) or reused when they have the
//! shape asked for, checked for room and ownership before the first file is written, and
//! removed with the directories this process made for them.

use super::validate::MailboxSetup;
use super::{DbFiles, DbState, Manifest, layout};
use crate::Result;
use crate::error::Doing;
use crate::monitor::resolve_device;
use crate::run::StopFlag;
use crate::target::existing_ancestor;
use crate::target::free_space;
use std::path::Path;

/// The test's databases, ready: their manifest, whether this run created them, and a line
/// that says which.
pub struct Prepared {
    pub manifest: Manifest,
    pub created: bool,
    pub said: String,
}

/// Reuses the databases in the target when they have the shape asked for, else creates them
/// (`progress` gets the bytes written so far). Everything is checked before the first file is
/// written.
pub fn prepare(plan: &MailboxSetup, progress: &mut dyn FnMut(u64), stop: &StopFlag) -> Result<Prepared> {
    let existing = Manifest::load(&plan.db_dir).map_err(|e| e.to_string())?;
    if let Some(m) = existing {
        check_reusable(plan, &m)?;
        let said = format!("reusing {} database(s) in {}", m.databases.len(), plan.db_dir.display());
        return Ok(Prepared { manifest: m, created: false, said });
    }
    check_untouched(plan)?;
    check_space(plan)?;
    for dir in [&plan.db_dir, &plan.log_dir] {
        make_dirs(dir)?;
    }
    let manifest = Manifest {
        version: layout::MANIFEST_VERSION,
        preset: plan.preset.name().into(),
        page_size: plan.profile.page_size,
        log_file_size: plan.profile.log_file_size,
        log_dir: plan.log_dir.clone(),
        log_block: log_block(&plan.log_dir),
        seed: plan.seed,
        databases: (1..=plan.databases)
            .map(|id| DbState {
                id,
                initial_pages: plan.pages,
                pages: plan.pages,
                next_generation: 1,
                log_from: None,
                files: None,
            })
            .collect(),
        clean: true,
    };
    let total = plan.db_bytes() * u64::from(plan.databases);
    let t0 = std::time::Instant::now();
    let made = layout::create_all(&plan.db_dir, &manifest, plan.engine, stop, &mut |done, _| progress(done));
    if made.is_err() || stop.is_stopped() {
        remove_databases(plan, &manifest);
    }
    made.doing("creating the databases")?;
    let secs = t0.elapsed().as_secs_f64();
    let said = format!(
        "created {} database(s) of {} in {secs:.1} s ({:.0} MB/s), every page with its checksum",
        plan.databases,
        crate::units::human_bytes(plan.db_bytes()),
        total as f64 / secs.max(1e-9) / 1e6
    );
    Ok(Prepared { manifest, created: true, said })
}

/// Log writes go in whole sectors of the log volume.
fn log_block(log_dir: &Path) -> u32 {
    resolve_device(log_dir).ok().flatten().and_then(|d| d.logical_sector_size).unwrap_or(512).max(512)
}

fn check_reusable(plan: &MailboxSetup, m: &Manifest) -> Result<()> {
    let want = (plan.preset.name(), plan.profile.page_size, plan.databases as usize, plan.pages);
    let have = (
        m.preset.as_str(),
        m.page_size,
        m.databases.len(),
        m.databases.first().map_or(0, |d| d.initial_pages),
    );
    if want != have {
        refuse!(
            "{} holds {} database(s) of {} pages ({} KiB, preset {}) but this test asks for {} of {} pages \
             ({} KiB, preset {}); give the options they were created with, another --target, or remove the directory's \
             mailbox*.edb, log directories and {}",
            plan.db_dir.display(),
            have.2,
            have.3,
            have.1 / 1024,
            have.0,
            want.2,
            want.3,
            want.1 / 1024,
            want.0,
            layout::MANIFEST
        );
    }
    let same_logs = |a: &Path, b: &Path| {
        a == b || a.canonicalize().ok().zip(b.canonicalize().ok()).is_some_and(|(x, y)| x == y)
    };
    if !same_logs(&m.log_dir, &plan.log_dir) {
        refuse!(
            "the databases in {} keep their logs in {}, not {}; give --log-target {} (or leave it out if \
             that is the target), or remove the databases to create them with logs elsewhere",
            plan.db_dir.display(),
            m.log_dir.display(),
            plan.log_dir.display(),
            m.log_dir.display()
        );
    }
    if !m.clean {
        refuse!(
            "the databases in {} were not shut down cleanly (an interrupted or failed run); check them with \
             `storbench mailbox verify --target {}` and remove them to start afresh",
            plan.db_dir.display(),
            plan.db_dir.display()
        );
    }
    Ok(())
}

/// Without a manifest, none of the files the test would create may exist: they are not ours.
fn check_untouched(plan: &MailboxSetup) -> Result<()> {
    for id in 1..=plan.databases {
        let f = DbFiles::new(&plan.db_dir, &plan.log_dir, id);
        for p in [&f.db, &f.log_dir] {
            // symlink_metadata: a dangling link is something too, and not ours.
            if p.symlink_metadata().is_ok() {
                refuse!(
                    "{} exists but {} has no {}: storbench did not create it and will not overwrite it; \
                     choose another --target or --log-target",
                    p.display(),
                    plan.db_dir.display(),
                    layout::MANIFEST
                );
            }
        }
    }
    Ok(())
}

pub fn check_space(plan: &MailboxSetup) -> Result<()> {
    let (data, logs) = plan.space_needed();
    let db_at = existing_ancestor(&plan.db_dir);
    let log_at = existing_ancestor(&plan.log_dir);
    let same_fs = fs_id(db_at) == fs_id(log_at);
    let free_db = free_space(db_at).unwrap_or(u64::MAX);
    let need_db = if same_fs { data.saturating_add(logs) } else { data };
    let h = crate::units::human_bytes;
    if need_db > free_db {
        refuse!(
            "{} mailboxes of {} in {} database(s) need {} with room to grow{}, but {} has {} free; \
             give fewer --mailboxes, a smaller --mailbox-size, or another --target",
            plan.mailboxes,
            h(plan.mailbox_bytes),
            plan.databases,
            h(need_db),
            if same_fs { " and logs" } else { "" },
            db_at.display(),
            h(free_db)
        );
    }
    let free_log = free_space(log_at).unwrap_or(u64::MAX);
    if !same_fs && logs > free_log {
        refuse!(
            "the logs need {} but {} has {} free; choose another --log-target",
            h(logs),
            log_at.display(),
            h(free_log)
        );
    }
    Ok(())
}

fn fs_id(p: &Path) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(p).ok().map(|m| m.dev())
}

/// Directories this process made for databases and logs: only these are removed with the
/// databases (a directory the user made stays, even when empty).
static MADE_DIRS: std::sync::Mutex<Vec<std::path::PathBuf>> = std::sync::Mutex::new(Vec::new());

/// Creates `dir` and the directories above it that are missing, remembering each one made.
fn make_dirs(dir: &Path) -> Result<()> {
    let made_now = crate::files::create_dirs(dir).doing(&format!("creating {}", dir.display()))?;
    let mut made = MADE_DIRS.lock().unwrap_or_else(|p| p.into_inner());
    made.extend(made_now.into_iter().map(|(path, _)| path));
    Ok(())
}

/// Removes the directories `make_dirs` made, deepest first, where they are empty.
fn remove_made_dirs() {
    let mut made = MADE_DIRS.lock().unwrap_or_else(|p| p.into_inner());
    made.sort_by_key(|d| std::cmp::Reverse(d.components().count()));
    made.retain(|d| crate::files::remove_own_dir(d).is_err() && d.exists());
}

/// Removes what a test created: database files, log directories' log files, the manifest.
/// Only storbench's own go (made by this process, or recorded in the manifest by device and
/// inode, or a log file by its content).
pub fn remove_databases(plan: &MailboxSetup, m: &Manifest) {
    use crate::files::remove_own;
    let block = m.log_block as usize;
    for f in m.files(&plan.db_dir) {
        let _ = remove_own(&f.db);
        for g in f.log_generations() {
            let _ = DbFiles::remove_log_file(&f.log_path(g), g, block);
        }
        let _ = DbFiles::remove_log_file(&f.tmp_log_path(), 0, block);
        let _ = crate::files::remove_own_dir(&f.log_dir);
    }
    let _ = remove_own(&Manifest::path(&plan.db_dir));
    remove_made_dirs();
}
