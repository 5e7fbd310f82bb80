//! Page-aligned I/O buffers, as O_DIRECT requires of addresses and lengths.

use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::io;

/// Alignment of every buffer: a page, which satisfies any logical sector size up to 4 KiB.
pub const ALIGN: usize = 4096;

/// A zeroed heap buffer aligned to `ALIGN`.
pub struct AlignedBuf {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the buffer is uniquely owned heap memory, like a Vec<u8>.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    pub fn new(len: usize) -> io::Result<Self> {
        let len = len.max(ALIGN).next_multiple_of(ALIGN);
        let layout = Layout::from_size_align(len, ALIGN)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        // SAFETY: layout has a non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        if ptr.is_null() {
            return Err(io::Error::new(io::ErrorKind::OutOfMemory, "buffer allocation failed"));
        }
        Ok(AlignedBuf { ptr, len })
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: ptr is valid for len bytes and uniquely borrowed through &mut self.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

/// One aligned buffer cut into per-slot pieces of possibly different lengths, each starting on
/// an `ALIGN` boundary; engines hand slot `i`'s piece to request `i`.
pub struct SlotPool {
    buf: AlignedBuf,
    /// Start of each slot's piece, and its length.
    pieces: Vec<(usize, usize)>,
}

impl SlotPool {
    /// `lens[i]` bytes for slot `i`.
    pub fn new(lens: &[u32]) -> io::Result<Self> {
        let mut pieces = Vec::with_capacity(lens.len());
        let mut at = 0usize;
        for &len in lens {
            pieces.push((at, len as usize));
            at += (len as usize).max(1).next_multiple_of(ALIGN);
        }
        Ok(SlotPool { buf: AlignedBuf::new(at)?, pieces })
    }

    /// `slots` pieces of `len` bytes each.
    pub fn uniform(slots: u32, len: u32) -> io::Result<Self> {
        Self::new(&vec![len; slots as usize])
    }

    pub fn slots(&self) -> usize {
        self.pieces.len()
    }

    pub fn piece(&mut self, slot: u32) -> &mut [u8] {
        let (at, len) = self.pieces[slot as usize];
        &mut self.buf.as_mut_slice()[at..at + len]
    }

    /// The whole pool, for registering it with the kernel.
    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.buf.as_mut_ptr()
    }

    pub fn len(&self) -> usize {
        self.buf.len()
    }

    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this exact layout.
        unsafe { dealloc(self.ptr, Layout::from_size_align_unchecked(self.len, ALIGN)) }
    }
}
