//! The counter file on the writing side: a header mapping plus one mapping
//! per chunk of records, all `MAP_SHARED`, so every store is in the page
//! cache the moment it is made and survives the process being killed.
//!
//! The file grows a chunk at a time (`ftruncate`, then map the new range).
//! Chunks are never unmapped or moved: QEMU's generated code holds raw
//! pointers to the execution counters inside them until the process ends.
//! The byte layout is `sysy_cost_model::layout`.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::Path;

use memmap2::{MmapMut, MmapOptions};
use sysy_cost_model::layout::{
    CHUNK_SIZE, EXECUTIONS_OFFSET, HEADER_SIZE, Header, RECORD_SIZE, RECORDS_PER_CHUNK, Record,
};

pub struct CounterFile {
    file: File,
    header_map: MmapMut,
    chunks: Vec<MmapMut>,
    header: Header,
}

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
        let base = self.chunks[chunk].as_mut_ptr();
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

    fn grow(&mut self) -> io::Result<()> {
        let start = HEADER_SIZE + self.chunks.len() as u64 * CHUNK_SIZE;
        self.file.set_len(start + CHUNK_SIZE)?;
        // SAFETY: as in `create`; the range was just allocated by `set_len`.
        let map = unsafe {
            MmapOptions::new()
                .offset(start)
                .len(CHUNK_SIZE as usize)
                .map_mut(&self.file)?
        };
        self.chunks.push(map);
        Ok(())
    }

    fn write_header(&mut self) {
        self.header.encode_into(&mut self.header_map);
    }
}
