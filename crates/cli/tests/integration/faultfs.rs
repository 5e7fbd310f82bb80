//! A FUSE filesystem for the integrity tests: a passthrough over a backing directory that
//! makes, through the kernel and on real files, the faults storbench's in-process fault engine
//! makes: a write acknowledged but dropped, a write torn after some sectors, a write landing on
//! the neighbouring block, a write failed with EIO, a read served from before the last write;
//! and a file that fails every read and write (a device that died).
//!
//! Faults touch only whole-page requests on files whose name ends in `.mdf` (the integrity
//! workload's data file), and only once the file has taken `arm_after` bytes of writes (its
//! initial fill), so that the workload starts. A rule faults every `every`-th eligible request.
//! Each injection is logged with its place, so a test can match every error the checker
//! reports with a fault that explains it. Files are opened with FOPEN_DIRECT_IO: every read and
//! write reaches the filesystem with its own offset and length.

use fuser::{
    Config, Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags, Generation, INodeNo, LockOwner,
    MountOption, OpenFlags, RenameFlags, ReplyAttr, ReplyCreate, ReplyData, ReplyDirectory, ReplyEmpty,
    ReplyEntry, ReplyOpen, ReplyStatfs, ReplyWrite, Request, TimeOrNow, WriteFlags,
};
use std::collections::HashMap;
use std::ffi::OsStr;
use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::time::{Duration, SystemTime};
use storbench_bench::testing::{skip, wait_until};

const PAGE: u64 = 8192;
const SECTOR: usize = 512;
/// Attributes are never cached: sizes change under the workload (growth, shrink).
const TTL: Duration = Duration::ZERO;

/// One fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    DropWrite,
    /// The first this many sectors are written; the write is acknowledged whole.
    Tear(usize),
    /// The write lands one request length further on.
    Misdirect,
    EioWrite,
    /// A read of pages whose last write was already read back returns what they held before
    /// that write (a read served from a stale cache). Served once per write.
    StaleRead,
    /// Every read and every write fails with EIO.
    EioAll,
}

/// A fault made, and where.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Injected {
    pub fault: Fault,
    pub offset: u64,
    pub len: u64,
}

impl Injected {
    /// The byte range the fault may show in: its own request, and for a misdirected write the
    /// block it landed on.
    pub fn covers(&self, offset: u64) -> bool {
        let end =
            if self.fault == Fault::Misdirect { self.offset + 2 * self.len } else { self.offset + self.len };
        (self.offset..end).contains(&offset)
    }
}

pub struct FaultFs {
    backing: PathBuf,
    rule: Option<(Fault, u64)>,
    arm_after: u64,
    written: AtomicU64,
    eligible: AtomicU64,
    paths: Mutex<Vec<PathBuf>>,
    files: Mutex<HashMap<u64, File>>,
    next_fh: AtomicU64,
    /// The content before the last write of each page of the data file, and whether that
    /// write was read back since.
    before: Mutex<HashMap<u64, (Vec<u8>, bool)>>,
    log: std::sync::Arc<Mutex<Vec<Injected>>>,
    /// Bytes per second every read is held to (0: as fast as the backing disk).
    read_rate: std::sync::Arc<AtomicU64>,
}

/// A mounted FaultFs; unmounted when dropped.
pub struct Mounted {
    session: Option<fuser::BackgroundSession>,
    point: PathBuf,
    pub log: std::sync::Arc<Mutex<Vec<Injected>>>,
    read_rate: std::sync::Arc<AtomicU64>,
}

impl Mounted {
    /// From now on each read is answered no sooner than its length at `bytes_per_sec` (the
    /// filesystem answers one request at a time, so that is the rate of all reads).
    pub fn slow_reads(&self, bytes_per_sec: u64) {
        self.read_rate.store(bytes_per_sec, SeqCst);
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        // A process the test started may still hold a file there (EBUSY): detach the mount
        // then, so that no test leaves a mount behind.
        if let Some(s) = self.session.take()
            && s.umount_and_join().is_err()
        {
            let _ = std::process::Command::new("umount").arg("-l").arg(&self.point).status();
        }
    }
}

/// Mounts a FaultFs over `backing` at `mountpoint` with `rule`; None (and why on stderr)
/// (after [`skip`]) where FUSE is not available.
pub fn mount(
    backing: &Path,
    mountpoint: &Path,
    rule: Option<(Fault, u64)>,
    arm_after: u64,
) -> Option<Mounted> {
    let log = std::sync::Arc::new(Mutex::new(Vec::new()));
    let read_rate = std::sync::Arc::new(AtomicU64::new(0));
    let fs = FaultFs {
        backing: backing.to_path_buf(),
        rule,
        arm_after,
        written: AtomicU64::new(0),
        eligible: AtomicU64::new(0),
        paths: Mutex::new(vec![PathBuf::new(), PathBuf::new()]),
        files: Mutex::new(HashMap::new()),
        next_fh: AtomicU64::new(1),
        before: Mutex::new(HashMap::new()),
        log: log.clone(),
        read_rate: read_rate.clone(),
    };
    let mut config = Config::default();
    config.mount_options = vec![MountOption::FSName("storbench-faultfs".into())];
    match fuser::spawn_mount(fs, mountpoint, &config) {
        Ok(session) => {
            // The mount is there once the kernel answers for it as another filesystem.
            let parent_dev = std::fs::metadata(backing).map(|m| m.dev()).ok();
            wait_until("the FUSE mount to answer", Duration::from_secs(30), || {
                std::fs::metadata(mountpoint).is_ok_and(|m| Some(m.dev()) != parent_dev)
            });
            Some(Mounted { session: Some(session), point: mountpoint.to_path_buf(), log, read_rate })
        }
        Err(e) => {
            skip(
                &format!("cannot mount a FUSE filesystem here ({e})"),
                "run the tests as root, with /dev/fuse",
            );
            None
        }
    }
}

fn errno(e: std::io::Error) -> Errno {
    Errno::from(e)
}

impl FaultFs {
    fn path(&self, ino: INodeNo) -> Option<PathBuf> {
        self.paths.lock().unwrap().get(ino.0 as usize).map(|rel| self.backing.join(rel))
    }

    /// The inode of `rel` (relative to the backing directory), made on first sight.
    fn inode(&self, rel: PathBuf) -> INodeNo {
        let mut paths = self.paths.lock().unwrap();
        if let Some(i) = paths.iter().skip(1).position(|p| *p == rel) {
            return INodeNo(i as u64 + 1);
        }
        paths.push(rel);
        INodeNo(paths.len() as u64 - 1)
    }

    fn child(&self, parent: INodeNo, name: &OsStr) -> Option<PathBuf> {
        let paths = self.paths.lock().unwrap();
        paths.get(parent.0 as usize).map(|p| p.join(name))
    }

    fn attr(&self, ino: INodeNo, path: &Path) -> std::io::Result<FileAttr> {
        let m = std::fs::symlink_metadata(path)?;
        let kind = if m.is_dir() { FileType::Directory } else { FileType::RegularFile };
        let time = |t: std::io::Result<SystemTime>| t.unwrap_or(SystemTime::UNIX_EPOCH);
        Ok(FileAttr {
            ino,
            size: m.len(),
            blocks: m.blocks(),
            atime: time(m.accessed()),
            mtime: time(m.modified()),
            ctime: time(m.modified()),
            crtime: time(m.modified()),
            kind,
            perm: (m.mode() & 0o7777) as u16,
            nlink: m.nlink() as u32,
            uid: m.uid(),
            gid: m.gid(),
            rdev: 0,
            blksize: 4096,
            flags: 0,
        })
    }

    fn entry(&self, rel: PathBuf, reply: ReplyEntry) {
        let ino = self.inode(rel.clone());
        match self.attr(ino, &self.backing.join(&rel)) {
            Ok(a) => reply.entry(&TTL, &a, Generation(0)),
            Err(e) => reply.error(errno(e)),
        }
    }

    fn keep(&self, file: File) -> u64 {
        let fh = self.next_fh.fetch_add(1, SeqCst);
        self.files.lock().unwrap().insert(fh, file);
        fh
    }

    fn with_file<T>(
        &self,
        fh: FileHandle,
        f: impl FnOnce(&File) -> std::io::Result<T>,
    ) -> std::io::Result<T> {
        let files = self.files.lock().unwrap();
        let file = files.get(&fh.0).ok_or_else(|| std::io::Error::from_raw_os_error(libc::EBADF))?;
        f(file)
    }

    /// Whether `ino` is the integrity workload's data file, the only one faulted.
    fn is_data(&self, ino: INodeNo) -> bool {
        self.path(ino).is_some_and(|p| p.extension() == Some(OsStr::new("mdf")))
    }

    /// The fault for this request, if the rule picks it.
    fn fault_for(&self, ino: INodeNo, offset: u64, len: u64, write: bool) -> Option<Fault> {
        let (fault, every) = self.rule?;
        let whole = offset.is_multiple_of(PAGE) && len.is_multiple_of(PAGE) && len > 0;
        if !self.is_data(ino) || !whole {
            return None;
        }
        if write && self.written.fetch_add(len, SeqCst) < self.arm_after {
            return None;
        }
        let applies = match fault {
            Fault::StaleRead => !write,
            Fault::EioAll => true,
            _ => write,
        };
        if !applies || self.written.load(SeqCst) < self.arm_after {
            return None;
        }
        let n = self.eligible.fetch_add(1, SeqCst) + 1;
        n.is_multiple_of(every).then_some(fault)
    }

    fn log(&self, fault: Fault, offset: u64, len: u64) {
        self.log.lock().unwrap().push(Injected { fault, offset, len });
    }

    /// Keeps what each page of a data-file write held before it.
    fn remember(&self, ino: INodeNo, file: &File, offset: u64, len: u64) {
        if !self.is_data(ino) || !offset.is_multiple_of(PAGE) {
            return;
        }
        let mut before = self.before.lock().unwrap();
        for page in (offset / PAGE)..(offset + len) / PAGE {
            let mut old = vec![0u8; PAGE as usize];
            if file.read_exact_at(&mut old, page * PAGE).is_ok() {
                before.insert(page, (old, false));
            }
        }
    }
}

impl Filesystem for FaultFs {
    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        match self.child(parent, name) {
            Some(rel) => self.entry(rel, reply),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        match self.path(ino).map(|p| self.attr(ino, &p)) {
            Some(Ok(a)) => reply.attr(&TTL, &a),
            Some(Err(e)) => reply.error(errno(e)),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn setattr(
        &self,
        _req: &Request,
        ino: INodeNo,
        mode: Option<u32>,
        _uid: Option<u32>,
        _gid: Option<u32>,
        size: Option<u64>,
        _atime: Option<TimeOrNow>,
        _mtime: Option<TimeOrNow>,
        _ctime: Option<SystemTime>,
        _fh: Option<FileHandle>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        let Some(path) = self.path(ino) else { return reply.error(Errno::ENOENT) };
        let done = (|| -> std::io::Result<FileAttr> {
            if let Some(size) = size {
                OpenOptions::new().write(true).open(&path)?.set_len(size)?;
            }
            if let Some(mode) = mode {
                std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(mode))?;
            }
            self.attr(ino, &path)
        })();
        match done {
            Ok(a) => reply.attr(&TTL, &a),
            Err(e) => reply.error(errno(e)),
        }
    }

    fn mkdir(
        &self,
        _req: &Request,
        parent: INodeNo,
        name: &OsStr,
        _mode: u32,
        _umask: u32,
        reply: ReplyEntry,
    ) {
        let Some(rel) = self.child(parent, name) else { return reply.error(Errno::ENOENT) };
        match std::fs::create_dir(self.backing.join(&rel)) {
            Ok(()) => self.entry(rel, reply),
            Err(e) => reply.error(errno(e)),
        }
    }

    fn unlink(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        let Some(rel) = self.child(parent, name) else { return reply.error(Errno::ENOENT) };
        match std::fs::remove_file(self.backing.join(rel)) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(errno(e)),
        }
    }

    fn rmdir(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        let Some(rel) = self.child(parent, name) else { return reply.error(Errno::ENOENT) };
        match std::fs::remove_dir(self.backing.join(rel)) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(errno(e)),
        }
    }

    fn rename(
        &self,
        _req: &Request,
        parent: INodeNo,
        name: &OsStr,
        newparent: INodeNo,
        newname: &OsStr,
        _flags: RenameFlags,
        reply: ReplyEmpty,
    ) {
        let (Some(from), Some(to)) = (self.child(parent, name), self.child(newparent, newname)) else {
            return reply.error(Errno::ENOENT);
        };
        match std::fs::rename(self.backing.join(&from), self.backing.join(&to)) {
            Ok(()) => {
                let mut paths = self.paths.lock().unwrap();
                for p in paths.iter_mut().skip(1) {
                    if *p == to {
                        *p = PathBuf::from("\0gone");
                    }
                }
                for p in paths.iter_mut().skip(1) {
                    if *p == from {
                        *p = to.clone();
                    }
                }
                reply.ok()
            }
            Err(e) => reply.error(errno(e)),
        }
    }

    fn open(&self, _req: &Request, ino: INodeNo, flags: OpenFlags, reply: ReplyOpen) {
        let Some(path) = self.path(ino) else { return reply.error(Errno::ENOENT) };
        let access = flags.0 & libc::O_ACCMODE;
        let opened = OpenOptions::new()
            .read(access != libc::O_WRONLY)
            .write(access != libc::O_RDONLY)
            .truncate(flags.0 & libc::O_TRUNC != 0)
            .open(&path);
        match opened {
            Ok(f) => reply.opened(FileHandle(self.keep(f)), FopenFlags::FOPEN_DIRECT_IO),
            Err(e) => reply.error(errno(e)),
        }
    }

    fn create(
        &self,
        _req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        _umask: u32,
        flags: i32,
        reply: ReplyCreate,
    ) {
        let Some(rel) = self.child(parent, name) else { return reply.error(Errno::ENOENT) };
        let path = self.backing.join(&rel);
        let mut options = OpenOptions::new();
        options.read(true).write(true).mode(mode);
        if flags & libc::O_EXCL != 0 {
            options.create_new(true);
        } else {
            options.create(true).truncate(flags & libc::O_TRUNC != 0);
        }
        let ino = self.inode(rel);
        match options.open(&path).and_then(|f| Ok((self.attr(ino, &path)?, f))) {
            Ok((a, f)) => {
                let fh = self.keep(f);
                reply.created(&TTL, &a, Generation(0), FileHandle(fh), FopenFlags::FOPEN_DIRECT_IO)
            }
            Err(e) => reply.error(errno(e)),
        }
    }

    fn read(
        &self,
        _req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        if self.rule.is_some_and(|(f, _)| f == Fault::EioAll)
            && let Some(fault) = self.fault_for(ino, offset, u64::from(size), false)
        {
            self.log(fault, offset, u64::from(size));
            return reply.error(errno(std::io::Error::from_raw_os_error(libc::EIO)));
        }
        let rate = self.read_rate.load(SeqCst);
        if rate > 0 {
            std::thread::sleep(Duration::from_secs_f64(f64::from(size) / rate as f64));
        }
        let mut buf = vec![0u8; size as usize];
        let read = self.with_file(fh, |f| {
            let mut done = 0;
            while done < buf.len() {
                match f.read_at(&mut buf[done..], offset + done as u64)? {
                    0 => break,
                    n => done += n,
                }
            }
            Ok(done)
        });
        let n = match read {
            Ok(n) => n,
            Err(e) => return reply.error(errno(e)),
        };
        buf.truncate(n);
        let stale = self.fault_for(ino, offset, n as u64, false) == Some(Fault::StaleRead);
        let mut served = false;
        let mut before = self.before.lock().unwrap();
        for (i, page) in buf.chunks_exact_mut(PAGE as usize).enumerate() {
            let number = offset / PAGE + i as u64;
            match before.get_mut(&number) {
                // The page's last write was read back: now the old content, once.
                Some((old, true)) if stale => {
                    page.copy_from_slice(old);
                    before.remove(&number);
                    served = true;
                }
                Some((_, read_back)) => *read_back = true,
                None => {}
            }
        }
        drop(before);
        if served {
            self.log(Fault::StaleRead, offset, n as u64);
        }
        reply.data(&buf);
    }

    fn write(
        &self,
        _req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        let len = data.len() as u64;
        let fault = self.fault_for(ino, offset, len, true);
        if let Some(f) = fault {
            self.log(f, offset, len);
        }
        let done = self.with_file(fh, |file| {
            match fault {
                Some(Fault::DropWrite) => return Ok(()),
                Some(Fault::EioWrite | Fault::EioAll) => {
                    return Err(std::io::Error::from_raw_os_error(libc::EIO));
                }
                _ => {}
            }
            self.remember(ino, file, offset, len);
            match fault {
                Some(Fault::Tear(sectors)) => {
                    file.write_all_at(&data[..(sectors * SECTOR).min(data.len())], offset)
                }
                Some(Fault::Misdirect) => file.write_all_at(data, offset + len),
                _ => file.write_all_at(data, offset),
            }
        });
        match done {
            Ok(()) => reply.written(data.len() as u32),
            Err(e) => reply.error(errno(e)),
        }
    }

    fn flush(&self, _req: &Request, _ino: INodeNo, _fh: FileHandle, _owner: LockOwner, reply: ReplyEmpty) {
        reply.ok();
    }

    fn release(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        _flush: bool,
        reply: ReplyEmpty,
    ) {
        self.files.lock().unwrap().remove(&fh.0);
        reply.ok();
    }

    fn fsync(&self, _req: &Request, _ino: INodeNo, fh: FileHandle, _datasync: bool, reply: ReplyEmpty) {
        match self.with_file(fh, |f| f.sync_data()) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(errno(e)),
        }
    }

    fn fallocate(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        length: u64,
        mode: i32,
        reply: ReplyEmpty,
    ) {
        let done = self.with_file(fh, |f| {
            // SAFETY: fallocate on an open descriptor with plain integer arguments.
            let r = unsafe { libc::fallocate(f.as_raw_fd(), mode, offset as i64, length as i64) };
            if r == 0 { Ok(()) } else { Err(std::io::Error::last_os_error()) }
        });
        match done {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(errno(e)),
        }
    }

    fn readdir(&self, _req: &Request, ino: INodeNo, _fh: FileHandle, offset: u64, mut reply: ReplyDirectory) {
        let Some(path) = self.path(ino) else { return reply.error(Errno::ENOENT) };
        let rel = self.paths.lock().unwrap()[ino.0 as usize].clone();
        let mut entries: Vec<(INodeNo, FileType, std::ffi::OsString)> =
            vec![(ino, FileType::Directory, ".".into()), (ino, FileType::Directory, "..".into())];
        let listed = match std::fs::read_dir(&path) {
            Ok(l) => l,
            Err(e) => return reply.error(errno(e)),
        };
        for e in listed.flatten() {
            let kind = if e.path().is_dir() { FileType::Directory } else { FileType::RegularFile };
            entries.push((self.inode(rel.join(e.file_name())), kind, e.file_name()));
        }
        for (i, (ino, kind, name)) in entries.into_iter().enumerate().skip(offset as usize) {
            if reply.add(ino, i as u64 + 1, kind, name) {
                break;
            }
        }
        reply.ok();
    }

    fn access(&self, _req: &Request, _ino: INodeNo, _mask: fuser::AccessFlags, reply: ReplyEmpty) {
        reply.ok();
    }

    fn statfs(&self, _req: &Request, _ino: INodeNo, reply: ReplyStatfs) {
        // SAFETY: statvfs fills the zeroed struct for a valid, NUL-terminated path.
        let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
        let path = std::ffi::CString::new(self.backing.as_os_str().as_encoded_bytes()).expect("no NUL");
        if unsafe { libc::statvfs(path.as_ptr(), &mut s) } != 0 {
            return reply.error(errno(std::io::Error::last_os_error()));
        }
        reply.statfs(
            s.f_blocks,
            s.f_bfree,
            s.f_bavail,
            s.f_files,
            s.f_ffree,
            s.f_bsize as u32,
            255,
            s.f_frsize as u32,
        );
    }
}
