//! Reading a file the user named as input (a plan, a parameter file, a bundle's JSON) or one
//! of storbench's own (a manifest): only a regular file, and only up to a stated size. A
//! device such as /dev/zero, a FIFO or a directory is refused before it is opened (opening a
//! FIFO would wait for a writer), and a file larger than the limit is refused instead of
//! filling memory.

use super::{FileError, How};
use std::io::Read;
use std::path::Path;

/// The limit for the text files storbench reads: plans, DS3 parameter files, manifests.
pub const TEXT_LIMIT: u64 = 16 << 20;
/// The limit for the data files of a result bundle (a year of per-second rows fits).
pub const DATA_LIMIT: u64 = 1 << 30;

/// Why an input file was not read (the module's one error type).
pub type InputError = FileError;

/// The bytes of the user's file `path` (links the user put in the path followed, as
/// [`super::resolve`] does) when it is a regular file of at most `limit` bytes.
pub fn read_bounded(path: &Path, limit: u64) -> Result<Vec<u8>, FileError> {
    read_own(&super::resolve(path)?, limit).map_err(|e| as_named(e, path))
}

/// Opens the user's file `path` for reading (links the user put in the path followed, as
/// [`super::resolve`] does) when it is a regular file: a FIFO or a device is refused without
/// being opened.
pub fn open_input(path: &Path) -> Result<std::fs::File, FileError> {
    super::open(&super::resolve(path)?, How::READ).map_err(|e| as_named(e, path))
}

/// `e` about the path as the user named it.
fn as_named(e: FileError, path: &Path) -> FileError {
    match e {
        // Name the file as the user did.
        FileError::NotRegular { kind, .. } => FileError::NotRegular { path: path.to_path_buf(), kind },
        FileError::TooLarge { size, limit, .. } => {
            FileError::TooLarge { path: path.to_path_buf(), size, limit }
        }
        FileError::Io { op, source, .. } => FileError::Io { op, path: path.to_path_buf(), source },
        other => other,
    }
}

/// The bytes of `path`, a file storbench wrote (a manifest, a journal), following no link,
/// when it is a regular file of at most `limit` bytes.
pub fn read_own(path: &Path, limit: u64) -> Result<Vec<u8>, FileError> {
    let file = super::open(path, How::READ)?;
    let io = |source| FileError::Io { op: "reading", path: path.to_path_buf(), source };
    let len = file.metadata().map_err(io)?.len();
    if len > limit {
        return Err(FileError::TooLarge { path: path.to_path_buf(), size: len, limit });
    }
    let mut bytes = Vec::with_capacity(len as usize);
    // A file still growing is cut at the limit and refused, never read to its end.
    file.take(limit + 1).read_to_end(&mut bytes).map_err(io)?;
    if bytes.len() as u64 > limit {
        return Err(FileError::TooLarge { path: path.to_path_buf(), size: bytes.len() as u64, limit });
    }
    Ok(bytes)
}

/// The text of `path` as [`read_bounded`] reads it; invalid UTF-8 is an error.
pub fn read_text(path: &Path, limit: u64) -> Result<String, FileError> {
    utf8(path, read_bounded(path, limit)?)
}

/// The text of storbench's own file `path` as [`read_own`] reads it.
pub fn read_own_text(path: &Path, limit: u64) -> Result<String, FileError> {
    utf8(path, read_own(path, limit)?)
}

fn utf8(path: &Path, bytes: Vec<u8>) -> Result<String, FileError> {
    String::from_utf8(bytes).map_err(|e| FileError::Io {
        op: "reading",
        path: path.to_path_buf(),
        source: std::io::Error::new(std::io::ErrorKind::InvalidData, e.utf8_error()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_users_regular_file_within_the_limit_is_read_through_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("plan.toml");
        std::fs::write(&file, "name = \"x\"\n").unwrap();
        let link = dir.path().join("link.toml");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        assert_eq!(read_text(&link, TEXT_LIMIT).unwrap(), "name = \"x\"\n");
        assert!(
            matches!(read_own(&link, TEXT_LIMIT), Err(FileError::Link { .. })),
            "storbench's own: no link"
        );
    }

    #[test]
    fn devices_fifos_directories_and_large_files_are_refused_without_waiting() {
        let e = read_bounded(Path::new("/dev/zero"), TEXT_LIMIT).unwrap_err();
        assert!(e.to_string().contains("/dev/zero is a character device, not a regular file"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        let e = read_bounded(dir.path(), TEXT_LIMIT).unwrap_err();
        assert!(e.to_string().contains("is a directory"), "{e}");
        let fifo = dir.path().join("fifo");
        rustix::fs::mknodat(rustix::fs::CWD, &fifo, rustix::fs::FileType::Fifo, 0o600.into(), 0).unwrap();
        let e = read_own(&fifo, TEXT_LIMIT).unwrap_err();
        assert!(e.to_string().contains("is a FIFO, not a regular file"), "{e}");
        let big = dir.path().join("big");
        std::fs::write(&big, vec![b'x'; 101]).unwrap();
        let e = read_bounded(&big, 100).unwrap_err();
        assert!(matches!(e, FileError::TooLarge { size: 101, limit: 100, .. }), "{e}");
        assert!(read_bounded(&dir.path().join("none"), 100).unwrap_err().is_not_found());
    }
}
