//! Creating a test file and filling it with incompressible, non-dedupable data, so that
//! reads are real reads (no holes) and no storage layer can shrink what is written.

use super::{CheckedTarget, file};
use crate::engine::AlignedBuf;
use crate::files::{self, How};
use crate::run::StopFlag;
use crate::workload::io::verify::fill_random;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

const CHUNK: usize = 1 << 20;

/// Creates `plan.path` at `plan.size` and fills it; on any failure or a stop request the
/// partial file is removed, so a half-filled file is never mistaken for a ready one.
pub fn create_filled(
    plan: &CheckedTarget,
    seed: u64,
    progress: &mut dyn FnMut(u64, u64),
    stop: &StopFlag,
) -> crate::Result<()> {
    let result = create(plan).and_then(|f| fill(&f, plan.size, seed, progress, stop).map(|_| f));
    let io_err = |op, source| crate::Error::Io { op, path: plan.path.clone(), source };
    match result {
        Ok(f) if !stop.is_stopped() => {
            f.sync_all().map_err(|e| io_err("syncing", e))?;
            let done = file::Mark::Complete { size: plan.size };
            file::write_mark(&f, &plan.path, done).map_err(|e| io_err("marking", e))?;
            Ok(())
        }
        Ok(_) => {
            remove_partial(plan);
            Err(io_err("filling", io::Error::new(io::ErrorKind::Interrupted, "interrupted")))
        }
        Err(e) => {
            remove_partial(plan);
            Err(io_err("creating and filling", e))
        }
    }
}

/// Removes our file and its sidecar mark (a mark left alone would claim a file the user may
/// later put at that path). Only storbench's own files go: one this run created, or one whose
/// mark proves it storbench's.
fn remove_partial(plan: &CheckedTarget) {
    file::claim_marked(&plan.path);
    let _ = files::remove_own(&plan.path);
    let _ = files::remove_own(&file::sidecar(&plan.path));
}

fn create(plan: &CheckedTarget) -> io::Result<File> {
    remove_partial(plan);
    let f = files::create(&plan.path, How::WRITE.direct(plan.direct))?;
    // Ours from the first byte, and not ready until the fill's end says so: a fill killed
    // now leaves a file that the next run refills instead of measuring.
    file::write_mark(&f, &plan.path, file::Mark::Filling { size: plan.size })?;
    // Reserve the space up front so a full disk fails now, not halfway through.
    match rustix::fs::fallocate(&f, rustix::fs::FallocateFlags::empty(), 0, plan.size) {
        Ok(()) => {}
        Err(e) if e == rustix::io::Errno::NOSPC => return Err(e.into()),
        Err(_) => {}
    }
    Ok(f)
}

/// Writes `size` bytes of seeded random data to `file` in 1 MiB chunks.
pub fn fill(
    file: &File,
    size: u64,
    seed: u64,
    progress: &mut dyn FnMut(u64, u64),
    stop: &StopFlag,
) -> io::Result<()> {
    let mut buf = AlignedBuf::new(CHUNK)?;
    let mut done = 0u64;
    while done < size && !stop.is_stopped() {
        let len = ((size - done) as usize).min(CHUNK);
        let chunk = &mut buf.as_mut_slice()[..len.next_multiple_of(4096).min(CHUNK)];
        fill_random(chunk, seed ^ done);
        file.write_all_at(&chunk[..len.max(1).next_multiple_of(512).min(chunk.len())], done)?;
        done += len as u64;
        progress(done, size);
    }
    Ok(())
}
