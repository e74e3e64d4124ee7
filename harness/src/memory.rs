//! Memory figures of the running process: resident set size from `/proc`, and the live heap
//! as counted by [`CountingAlloc`].
//!
//! A campaign must keep its memory flat for hours. RSS alone cannot tell a leak (live heap
//! grows) from allocator retention (live heap flat, freed pages kept by `malloc`), so the
//! `harness` binary installs [`CountingAlloc`] as its global allocator and the campaign
//! records both after every program (`memory.csv`, see `campaign::memory_log`).
//!
//! Counting must cost next to nothing: a campaign allocates millions of small blocks per
//! second from every worker. One shared atomic counter did not: its cache line bounced between
//! the cores, and `perf` put a quarter of a campaign's CPU time in `alloc`/`dealloc`. So each
//! thread keeps its own running difference and adds it to the shared counters only once it
//! reaches [`FLUSH_BYTES`] either way (or when [`sample`] is called on that thread). The live
//! figure is therefore exact up to `FLUSH_BYTES` per thread, which is noise next to the
//! megabytes a campaign watches, and the high-water mark is taken at those flushes.
//!
//! In a process that does not install the allocator (unit tests, other binaries) the heap
//! figures are `None`, not zero: the binary that installs it says so with
//! [`CountingAlloc::declare_installed`].

use std::alloc::{GlobalAlloc, Layout};
use tikv_jemallocator::Jemalloc;
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicIsize, Ordering};

/// Live bytes, as flushed by the threads (a thread may free what another allocated, so a
/// thread's difference, and briefly this sum, can be negative).
static LIVE: AtomicIsize = AtomicIsize::new(0);
static PEAK: AtomicIsize = AtomicIsize::new(0);
static INSTALLED: AtomicBool = AtomicBool::new(false);

/// How far a thread's own difference may drift before it is added to [`LIVE`].
pub const FLUSH_BYTES: isize = 256 * 1024;

thread_local! {
    /// This thread's bytes allocated minus freed since its last flush. A `const` cell
    /// without a destructor: reading it never allocates, so the allocator may use it.
    static PENDING: Cell<isize> = const { Cell::new(0) };
    /// Flushes the thread's difference when the thread ends. Without it, what a short-lived
    /// thread frees of another's allocations (a campaign's run threads freed the assembly
    /// texts the worker made) or keeps of its own (a lowering thread's module) never reaches
    /// [`LIVE`], and the live heap drifted by a gigabyte in a five-minute campaign. Touched
    /// when the difference leaves zero, so at most once per flush; registering its destructor
    /// goes through glibc's `__cxa_thread_atexit_impl` (glibc's own allocator), so the first
    /// touch inside [`CountingAlloc`] does not re-enter it.
    static FLUSH_AT_EXIT: FlushAtExit = const { FlushAtExit };
}

/// See [`FLUSH_AT_EXIT`].
struct FlushAtExit;

impl Drop for FlushAtExit {
    fn drop(&mut self) {
        CountingAlloc::flush_this_thread();
    }
}

/// jemalloc, counting the bytes currently allocated and their high-water mark.
///
/// jemalloc rather than glibc's malloc: the compiler allocates and frees small blocks at a
/// high rate, and glibc's `malloc`/`free` took about a tenth of a campaign's CPU time (perf);
/// with jemalloc the same fixed campaign used about 6% less user time. jemalloc maps its
/// memory readable and writable up front, so a data limit (`--memory-limit`) still fails an
/// allocation beyond it at once (a lazily committing allocator would not: mimalloc did not).
pub struct CountingAlloc;

impl CountingAlloc {
    #[inline]
    fn changed(delta: isize) {
        let flushed = PENDING.try_with(|pending| {
            let was = pending.get();
            let now = was + delta;
            if now.abs() < FLUSH_BYTES {
                pending.set(now);
                (None, was == 0)
            } else {
                pending.set(0);
                (Some(now), false)
            }
        });
        match flushed {
            Ok((None, arm)) => {
                if arm {
                    // Fails only while the thread is exiting, when the flush has already run.
                    let _ = FLUSH_AT_EXIT.try_with(|_| ());
                }
            }
            Ok((Some(now), _)) => Self::flush(now),
            // The thread's locals are gone (it is exiting): count directly.
            Err(_) => Self::flush(delta),
        }
    }

    fn flush(delta: isize) {
        let live = LIVE.fetch_add(delta, Ordering::Relaxed) + delta;
        // The peak is a statistic, not a synchronisation point: a lost race between two
        // threads can only under-report it by one flush.
        if live > PEAK.load(Ordering::Relaxed) {
            PEAK.store(live, Ordering::Relaxed);
        }
    }

    /// Adds the calling thread's pending difference to the shared counters.
    pub fn flush_this_thread() {
        if let Ok(pending) = PENDING.try_with(|pending| pending.replace(0)) {
            if pending != 0 {
                Self::flush(pending);
            }
        }
    }

    /// Declares that this allocator is the process's global allocator, so that [`sample`]
    /// reports the heap (call it first thing in `main`, next to the `#[global_allocator]`).
    pub fn declare_installed() {
        INSTALLED.store(true, Ordering::Relaxed);
    }
}

// SAFETY: every method forwards to `Jemalloc` with the caller's arguments unchanged; the
// counters are side information only.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { Jemalloc.alloc(layout) };
        if !p.is_null() {
            Self::changed(layout.size() as isize);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { Jemalloc.alloc_zeroed(layout) };
        if !p.is_null() {
            Self::changed(layout.size() as isize);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { Jemalloc.dealloc(ptr, layout) };
        Self::changed(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { Jemalloc.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            Self::changed(new_size as isize - layout.size() as isize);
        }
        p
    }
}

/// One reading of the process's memory.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sample {
    /// Resident set size in KiB (`None` where `/proc/self/statm` is unreadable).
    pub rss_kib: Option<u64>,
    /// Bytes allocated and not yet freed, in KiB (`None` without [`CountingAlloc`]).
    pub heap_kib: Option<u64>,
    /// High-water mark of the live heap since the process started, in KiB.
    pub heap_peak_kib: Option<u64>,
}

/// The current figures.
pub fn sample() -> Sample {
    let counted = INSTALLED.load(Ordering::Relaxed);
    if counted {
        CountingAlloc::flush_this_thread();
    }
    let kib = |bytes: isize| (bytes.max(0) / 1024) as u64;
    Sample {
        rss_kib: rss_kib(),
        heap_kib: counted.then(|| kib(LIVE.load(Ordering::Relaxed))),
        heap_peak_kib: counted.then(|| kib(PEAK.load(Ordering::Relaxed))),
    }
}

/// Resident set size of this process in KiB, from the second field of `/proc/self/statm`
/// (pages).
pub fn rss_kib() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    Some(pages * u64::try_from(page).ok()? / 1024)
}

/// Hands the memory the allocators hold free back to the kernel (every jemalloc arena's
/// purge, and glibc's `malloc_trim` for what C code allocated), so that RSS follows the live
/// heap instead of the largest program seen so far. Returns whether glibc released anything.
pub fn release_free_memory() -> bool {
    // "arena.<MALLCTL_ARENAS_ALL>.purge": jemalloc's name for all arenas is 4096.
    // SAFETY: a void control (no old or new value) with a NUL-terminated name.
    unsafe {
        tikv_jemalloc_sys::mallctl(c"arena.4096.purge".as_ptr(), std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut(), 0);
    }
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: malloc_trim only walks glibc's own arenas.
        unsafe { libc::malloc_trim(0) != 0 }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// The counting tests read the shared counters: one at a time.
    static SERIAL: Mutex<()> = Mutex::new(());

    #[test]
    fn rss_is_read_from_proc() {
        let rss = rss_kib().expect("/proc/self/statm on Linux");
        // A test binary with its libraries mapped is larger than a page and far smaller than
        // the machine.
        assert!(rss > 4 && rss < 64 * 1024 * 1024, "rss {rss} KiB");
    }

    #[test]
    fn heap_figures_are_absent_without_the_counting_allocator() {
        // The test binary uses the system allocator directly.
        let s = sample();
        assert_eq!(s.heap_kib, None);
        assert_eq!(s.heap_peak_kib, None);
    }

    #[test]
    fn counting_allocator_tracks_live_bytes() {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let a = CountingAlloc;
        let layout = Layout::from_size_align(1 << 20, 8).expect("layout");
        CountingAlloc::flush_this_thread();
        let before = LIVE.load(Ordering::Relaxed);
        // SAFETY: the layout has a non-zero size; the block is freed with the same layout.
        unsafe {
            let p = a.alloc(layout);
            assert!(!p.is_null());
            assert!(LIVE.load(Ordering::Relaxed) >= before + (1 << 20));
            assert!(PEAK.load(Ordering::Relaxed) >= before + (1 << 20));
            let q = a.realloc(p, layout, 2 << 20);
            assert!(!q.is_null());
            a.dealloc(q, Layout::from_size_align(2 << 20, 8).expect("layout"));
        }
        assert_eq!(LIVE.load(Ordering::Relaxed), before);
    }

    #[test]
    fn a_thread_that_frees_another_threads_blocks_is_counted_when_it_ends() {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let a = CountingAlloc;
        let layout = Layout::from_size_align(1024, 8).expect("layout");
        CountingAlloc::flush_this_thread();
        let before = LIVE.load(Ordering::Relaxed);
        // SAFETY: non-zero layout.
        let block = unsafe { a.alloc(layout) } as usize;
        CountingAlloc::flush_this_thread();
        assert_eq!(LIVE.load(Ordering::Relaxed), before + 1024);
        // Far less than a flush, freed on a thread that then ends without flushing itself.
        std::thread::spawn(move || {
            // SAFETY: allocated above with this layout, freed once.
            unsafe { CountingAlloc.dealloc(block as *mut u8, layout) };
        })
        .join()
        .expect("the freeing thread");
        assert_eq!(LIVE.load(Ordering::Relaxed), before);
    }

    #[test]
    fn small_blocks_are_counted_once_their_thread_flushes() {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let a = CountingAlloc;
        let layout = Layout::from_size_align(1024, 8).expect("layout");
        CountingAlloc::flush_this_thread();
        let before = LIVE.load(Ordering::Relaxed);
        // Fewer bytes than a flush: held back by this thread until it flushes.
        let count = (FLUSH_BYTES / 1024 / 2) as usize;
        // SAFETY: non-zero layout; every block is freed with the same layout.
        let blocks: Vec<*mut u8> = (0..count).map(|_| unsafe { a.alloc(layout) }).collect();
        assert_eq!(LIVE.load(Ordering::Relaxed), before);
        CountingAlloc::flush_this_thread();
        assert_eq!(LIVE.load(Ordering::Relaxed), before + count as isize * 1024);
        for p in blocks {
            // SAFETY: allocated above with this layout.
            unsafe { a.dealloc(p, layout) };
        }
        CountingAlloc::flush_this_thread();
        assert_eq!(LIVE.load(Ordering::Relaxed), before);
    }
}
