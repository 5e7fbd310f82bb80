//! Reading a file the user named as input (a plan, a parameter file, a manifest, a bundle's
//! JSON): only a regular file, after following links, and only up to a stated size. A device
//! such as /dev/zero, a FIFO or a directory is refused before it is opened (opening a FIFO
//! would wait for a writer), and a file larger than the limit is refused instead of filling
//! memory.

use std::io::Read;
use std::path::{Path, PathBuf};

/// The limit for the text files storbench reads: plans, DS3 parameter files, manifests.
pub const TEXT_LIMIT: u64 = 16 << 20;
/// The limit for the data files of a result bundle (a year of per-second rows fits).
pub const DATA_LIMIT: u64 = 1 << 30;

/// Why an input file was not read.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("{} is {kind}, not a regular file; give the path of a file", path.display())]
    NotAFile { path: PathBuf, kind: &'static str },
    #[error(
        "{} holds {size} bytes, more than the {limit} bytes such a file can have; give the right file",
        path.display()
    )]
    TooLarge { path: PathBuf, size: u64, limit: u64 },
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
}

impl InputError {
    /// The file is not there (a caller may treat that as "none yet").
    pub fn is_not_found(&self) -> bool {
        matches!(self, InputError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound)
    }
}

/// The bytes of `path` when it is a regular file (links followed) of at most `limit` bytes.
pub fn read_bounded(path: &Path, limit: u64) -> Result<Vec<u8>, InputError> {
    let io = |source| InputError::Io { path: path.to_path_buf(), source };
    let kind = std::fs::metadata(path).map_err(io)?.file_type();
    if !kind.is_file() {
        return Err(InputError::NotAFile { path: path.to_path_buf(), kind: kind_of(kind) });
    }
    let file = std::fs::File::open(path).map_err(io)?;
    // The file may have been replaced between the check and the open: check what was opened.
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(InputError::NotAFile { path: path.to_path_buf(), kind: kind_of(meta.file_type()) });
    }
    if meta.len() > limit {
        return Err(InputError::TooLarge { path: path.to_path_buf(), size: meta.len(), limit });
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    // A file still growing is cut at the limit and refused, never read to its end.
    file.take(limit + 1).read_to_end(&mut bytes).map_err(io)?;
    if bytes.len() as u64 > limit {
        return Err(InputError::TooLarge { path: path.to_path_buf(), size: bytes.len() as u64, limit });
    }
    Ok(bytes)
}

/// The text of `path` as [`read_bounded`] reads it; invalid UTF-8 is an error.
pub fn read_text(path: &Path, limit: u64) -> Result<String, InputError> {
    let bytes = read_bounded(path, limit)?;
    String::from_utf8(bytes).map_err(|e| InputError::Io {
        path: path.to_path_buf(),
        source: std::io::Error::new(std::io::ErrorKind::InvalidData, e.utf8_error()),
    })
}

/// What a file that is not a regular one is, for a message: "a directory", "a FIFO", ...
pub fn kind_of(t: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_dir() {
        "a directory"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_regular_file_within_the_limit_is_read_through_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("plan.toml");
        std::fs::write(&file, "name = \"x\"\n").unwrap();
        let link = dir.path().join("link.toml");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        assert_eq!(read_text(&link, TEXT_LIMIT).unwrap(), "name = \"x\"\n");
    }

    #[test]
    fn devices_directories_and_large_files_are_refused() {
        let e = read_bounded(Path::new("/dev/zero"), TEXT_LIMIT).unwrap_err();
        assert!(e.to_string().contains("/dev/zero is a character device, not a regular file"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        let e = read_bounded(dir.path(), TEXT_LIMIT).unwrap_err();
        assert!(e.to_string().contains("is a directory"), "{e}");
        let big = dir.path().join("big");
        std::fs::write(&big, vec![b'x'; 101]).unwrap();
        let e = read_bounded(&big, 100).unwrap_err();
        assert!(matches!(e, InputError::TooLarge { size: 101, limit: 100, .. }), "{e}");
        assert!(read_bounded(&dir.path().join("none"), 100).unwrap_err().is_not_found());
    }
}
