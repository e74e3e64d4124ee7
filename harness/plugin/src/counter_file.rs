//! The counter file on the writing side: a header mapping plus one mapping
//! per chunk of records, all `MAP_SHARED`, so every store is in the page
//! cache the moment it is made and survives the process being killed.
//!
//! The file grows a chunk at a time (`ftruncate`, then map the new range).
//! Chunks are never unmapped or moved: QEMU's generated code holds raw
//! pointers to the execution counters inside them until the process ends.
//! The byte layout is `sysy_cost_model::layout`.
//!
//! A fresh count in a forked child can adopt the records of the state it replaces
//! ([`CounterFile::adopt`]): blocks translated before the fork (the fork server's parent
//! translates the runtime once for all its children) keep the counter addresses QEMU compiled
//! into them, so the new file's first chunks are mapped at exactly those addresses, holding
//! copies of the old records with their executions reset. From then on those blocks count
//! into the child's file.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::Path;

use std::os::fd::AsRawFd;
use std::ptr::NonNull;

use memmap2::{MmapMut, MmapOptions};
use sysy_cost_model::layout::{
    CHUNK_SIZE, EXECUTIONS_OFFSET, HEADER_SIZE, Header, RECORD_SIZE, RECORDS_PER_CHUNK, Record,
};

pub struct CounterFile {
    file: File,
    header_map: MmapMut,
    chunks: Vec<Chunk>,
    header: Header,
}

/// One chunk's `MAP_SHARED` mapping of the file, `CHUNK_SIZE` bytes, never unmapped.
struct Chunk(NonNull<u8>);

// SAFETY: the mapping is process-wide memory, owned by the counter file; the plugin state that
// holds it is behind a mutex.
unsafe impl Send for Chunk {}

impl CounterFile {
    /// Creates (or truncates) the file at `path` with an empty header.
    pub fn create(path: &Path) -> io::Result<CounterFile> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)?;
        file.set_len(HEADER_SIZE)?;
        // SAFETY: the file was just created by us and is only resized by us,
        // never below the mapped length.
        let header_map = unsafe {
            MmapOptions::new()
                .len(HEADER_SIZE as usize)
                .map_mut(&file)?
        };
        let mut counter_file = CounterFile {
            file,
            header_map,
            chunks: Vec::new(),
            header: Header::empty(),
        };
        counter_file.write_header();
        Ok(counter_file)
    }

    /// The header as last written.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Changes header fields and writes them to the file.
    pub fn update_header(&mut self, change: impl FnOnce(&mut Header)) {
        change(&mut self.header);
        self.write_header();
    }

    /// Appends `record` (its execution count starts at zero) and returns the
    /// address of its execution counter, for QEMU's inline add. The record is
    /// complete in the file before the header's record count includes it.
    pub fn push(&mut self, record: &Record) -> io::Result<*mut u64> {
        let index = self.header.records;
        let chunk = (index / RECORDS_PER_CHUNK) as usize;
        if chunk == self.chunks.len() {
            self.grow()?;
        }
        let offset = ((index % RECORDS_PER_CHUNK) * RECORD_SIZE) as usize;
        let mut bytes = [0u8; RECORD_SIZE as usize];
        record.encode_into(&mut bytes);
        // Raw pointers, not slices of the chunk: QEMU's generated code writes
        // to the counters of earlier records behind our back.
        let base = self.chunks[chunk].0.as_ptr();
        // SAFETY: `offset + RECORD_SIZE <= CHUNK_SIZE`, the chunk's mapped length.
        let (record_ptr, counter) = unsafe {
            let record_ptr = base.add(offset);
            (record_ptr, record_ptr.add(EXECUTIONS_OFFSET).cast::<u64>())
        };
        // SAFETY: `record_ptr` points to RECORD_SIZE bytes of the mapping that
        // nothing else uses yet (the record is not published).
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), record_ptr, bytes.len()) };
        self.update_header(|h| h.records += 1);
        Ok(counter)
    }

    /// Takes over the records of `earlier` (the state a fresh count replaces, in a forked
    /// child): this file, still empty, gets copies of them with no executions, its first
    /// chunks mapped where `earlier`'s are, so the counters QEMU's already translated blocks
    /// add to are this file's. `belongs_elsewhere` names records that cannot be taken over
    /// (their origin would be wrong here); any such record makes the counts unusable.
    pub fn adopt(&mut self, earlier: &CounterFile, belongs_elsewhere: impl Fn(&Record) -> bool) -> io::Result<()> {
        if self.header.records != 0 || !self.chunks.is_empty() {
            return Err(io::Error::other("records can only be adopted by an empty counter file"));
        }
        let records = earlier.header.records;
        for (index, chunk) in earlier.chunks.iter().enumerate() {
            let first = index as u64 * RECORDS_PER_CHUNK;
            let count = records.saturating_sub(first).min(RECORDS_PER_CHUNK);
            // SAFETY: the chunk is CHUNK_SIZE mapped bytes; `count` records lie within it.
            let mut bytes = unsafe { std::slice::from_raw_parts(chunk.0.as_ptr(), (count * RECORD_SIZE) as usize) }.to_vec();
            for record in bytes.chunks_mut(RECORD_SIZE as usize) {
                record[EXECUTIONS_OFFSET..EXECUTIONS_OFFSET + 8].fill(0);
                let decoded = Record::decode(record).map_err(|e| io::Error::other(e.to_string()))?;
                if belongs_elsewhere(&decoded) {
                    self.update_header(|h| h.failed = true);
                    return Err(io::Error::other(format!("an adopted block at {:#x} lies in the program", decoded.vaddr)));
                }
            }
            self.grow_at(Some(chunk.0))?;
            let target = self.chunks[index].0.as_ptr();
            // SAFETY: `target` is the new chunk's mapping, CHUNK_SIZE bytes, which holds `bytes`.
            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), target, bytes.len()) };
        }
        self.update_header(|h| h.records = records);
        Ok(())
    }

    fn grow(&mut self) -> io::Result<()> {
        self.grow_at(None)
    }

    /// Adds a chunk to the file and maps it, at `place` (replacing what is mapped there) when
    /// given.
    fn grow_at(&mut self, place: Option<NonNull<u8>>) -> io::Result<()> {
        let start = HEADER_SIZE + self.chunks.len() as u64 * CHUNK_SIZE;
        self.file.set_len(start + CHUNK_SIZE)?;
        let offset = libc::off_t::try_from(start).map_err(io::Error::other)?;
        let (address, fixed) = match place {
            Some(place) => (place.as_ptr().cast::<libc::c_void>(), libc::MAP_FIXED),
            None => (std::ptr::null_mut(), 0),
        };
        // SAFETY: a shared mapping of a range `set_len` just allocated; with MAP_FIXED, `place`
        // is a chunk mapping of the state being replaced, CHUNK_SIZE bytes, which nothing but
        // QEMU's generated code (adding to counters) uses any more.
        let map = unsafe {
            libc::mmap(
                address,
                CHUNK_SIZE as usize,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | fixed,
                self.file.as_raw_fd(),
                offset,
            )
        };
        if map == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let chunk = NonNull::new(map.cast::<u8>()).ok_or_else(|| io::Error::other("mmap returned null"))?;
        self.chunks.push(Chunk(chunk));
        Ok(())
    }

    fn write_header(&mut self) {
        self.header.encode_into(&mut self.header_map);
    }
}
