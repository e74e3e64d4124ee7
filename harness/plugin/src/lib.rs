//! `sysy-cost-plugin`: a QEMU TCG plugin (API v1, for qemu-arm 7.2) counting
//! executed ARM instructions by cost class.
//!
//! Load it with
//! `qemu-arm -cpu cortex-a7 -plugin /abs/libsysy_cost_plugin.so,out=FILE[,prog=0xLO-0xHI]... prog`
//! (arguments: `sysy_cost_model::plugin_args`; build the option with
//! `sysy_cost_model::plugin_option`). Read the result with
//! `sysy_cost_model::CostCounts::read(FILE)`.
//!
//! # How it counts
//!
//! At translation time each block is decoded and classified (see
//! [`translate`]), its class mix is written to a `MAP_SHARED` counter file
//! (see [`counter_file`]), and one inline 64-bit add per execution is
//! registered on the block's counter in that file — the cheapest exact
//! scheme the v1 API offers. Totals are `Σ executions × mix`, computed by the
//! reader. Because the counters live in the shared mapping, a run killed by a
//! timeout still leaves its counts; the atexit callback only sets the
//! `complete` flag.
//!
//! # Fresh counts in a forked child
//!
//! The harness's fork server (`harness/check/src/qemu/fork_server.rs`) starts QEMU
//! once on a small loader that forks a child per run. Each child asks for a
//! fresh count with the system call `RECOUNT_SYSCALL` (see
//! `sysy_cost_model::plugin_args`), handing over a file of new arguments and
//! the program's entry address. The plugin creates the new counter file and
//! switches to it when it translates the block at the entry: the loader's
//! last instructions before the jump count in the old state, the program's
//! every block in the new one. Blocks translated before the switch (in the
//! child, or in the parent before the fork: the server translates the
//! runtime library once for all its children) have their counters compiled
//! in; the new state adopts them: its file starts with copies of the old
//! records, executions reset, mapped at the old records' addresses. So a
//! block counts the same whether the child translated it or inherited it.
//!
//! Assumptions: a single guest thread (inline adds are not atomic; SysY
//! programs do not create threads), a 64-bit little-endian host, an ARM guest.
//! Counts are per block entry: a block left early by a fault counts whole.

pub mod counter_file;
mod ffi;
pub mod translate;

use std::ffi::{CStr, c_char, c_int, c_void};
use std::path::PathBuf;
use std::sync::Mutex;

use sysy_cost_model::block::RawInsn;
use sysy_cost_model::plugin_args::{PluginConfig, RECOUNT_MAGIC, RECOUNT_SYSCALL};

use crate::ffi::{PluginId, QemuInfo, Tb};
use crate::translate::Plugin;

/// The plugin API version this plugin is written against; QEMU reads it.
#[unsafe(no_mangle)]
#[allow(non_upper_case_globals)]
pub static qemu_plugin_version: c_int = 1;

/// Plugin state. QEMU serialises translation in user mode, so the lock is
/// never contended; it exists to make the global safe to touch.
static PLUGIN: Mutex<Option<Plugin>> = Mutex::new(None);

/// A fresh count asked for and not begun yet: the state to switch to when
/// the block at the address is translated.
static PENDING: Mutex<Option<(u64, Plugin)>> = Mutex::new(None);

fn with_plugin(action: impl FnOnce(&mut Plugin)) {
    // A poisoned lock can only follow a panic, which aborts across FFI anyway.
    let mut guard = PLUGIN
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(plugin) = guard.as_mut() {
        action(plugin);
    }
}

/// Entry point QEMU calls when loading the plugin.
///
/// # Safety
/// Called by QEMU with a valid `info` and `argc` valid C strings in `argv`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qemu_plugin_install(
    id: PluginId,
    info: *const QemuInfo,
    argc: c_int,
    argv: *const *const c_char,
) -> c_int {
    // SAFETY: per QEMU's contract for this callback.
    let args = unsafe { collect_args(argc, argv) };
    // SAFETY: `info` is valid during this call.
    let target = unsafe { info.as_ref().map(|info| c_string(info.target_name)) };
    match install(id, target.flatten(), &args) {
        Ok(()) => 0,
        Err(message) => {
            // QEMU exits when installation fails; say why on stderr
            // (qemu_plugin_outs prints nothing without `-d plugin`).
            eprintln!("sysy-cost-plugin: {message}");
            1
        }
    }
}

fn install(id: PluginId, target: Option<String>, args: &[String]) -> Result<(), String> {
    if target.as_deref() != Some("arm") {
        return Err(format!("only the arm target is supported, not {target:?}"));
    }
    let config = PluginConfig::parse(args).map_err(|e| e.to_string())?;
    let plugin =
        Plugin::new(&config).map_err(|e| format!("cannot create {}: {e}", config.out.display()))?;
    *PLUGIN
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(plugin);
    // SAFETY: registering callbacks with the id QEMU gave us.
    unsafe {
        ffi::qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
        ffi::qemu_plugin_register_vcpu_syscall_cb(id, on_syscall);
        ffi::qemu_plugin_register_atexit_cb(id, on_exit, std::ptr::null_mut());
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
extern "C" fn on_syscall(
    _id: PluginId,
    _vcpu: std::ffi::c_uint,
    num: i64,
    a1: u64,
    a2: u64,
    a3: u64,
    _a4: u64,
    _a5: u64,
    _a6: u64,
    _a7: u64,
    _a8: u64,
) {
    if num == EXIT_SYSCALL || num == EXIT_GROUP_SYSCALL {
        exit_now(a1);
    }
    if num != RECOUNT_SYSCALL || a2 != RECOUNT_MAGIC {
        return;
    }
    // In user mode a guest file descriptor is the host's.
    let Ok(fd) = c_int::try_from(a1) else { return };
    match recount(fd) {
        Ok(fresh) => {
            let mut pending = PENDING.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            *pending = Some((a3, fresh));
        }
        // The old counts go on; the harness finds no counter file where it asked for one.
        Err(message) => eprintln!("sysy-cost-plugin: fresh count refused: {message}"),
    }
}

/// Switches to the pending fresh count if the block being translated starts where it
/// begins.
fn begin_pending_count(block_start: u64) {
    let mut pending = PENDING.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if pending.as_ref().is_none_or(|(start, _)| *start != block_start) {
        return;
    }
    let Some((_, mut fresh)) = pending.take() else { return };
    let mut guard = PLUGIN.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(earlier) = guard.as_ref()
        && let Err(message) = fresh.adopt_translations(earlier)
    {
        // The fresh state is marked failed: the harness finds no usable counts.
        eprintln!("sysy-cost-plugin: fresh count cannot take over earlier blocks: {message}");
    }
    // The old state's header mapping stays (forgotten, not unmapped); its chunks now map the
    // fresh file, so blocks translated before the switch (the loader's, and whatever the
    // fork server's parent translated) count in the fresh state.
    std::mem::forget(guard.replace(fresh));
}

/// The plugin state for the arguments in the file open on `fd`.
fn recount(fd: c_int) -> Result<Plugin, String> {
    use std::io::Read;
    use std::os::fd::BorrowedFd;
    // SAFETY: the guest made the call with this descriptor open and keeps it open until the
    // call returns; it is only borrowed (duplicated) here.
    let borrowed = unsafe { BorrowedFd::borrow_raw(fd) };
    let owned = borrowed.try_clone_to_owned().map_err(|e| format!("descriptor {fd}: {e}"))?;
    let mut text = String::new();
    std::fs::File::from(owned)
        .read_to_string(&mut text)
        .map_err(|e| format!("descriptor {fd}: {e}"))?;
    let args: Vec<&str> = text.lines().filter(|line| !line.is_empty()).collect();
    let config = PluginConfig::parse(&args).map_err(|e| e.to_string())?;
    Plugin::new(&config).map_err(|e| format!("cannot create {}: {e}", config.out.display()))
}

extern "C" fn on_translate(_id: PluginId, tb: *mut Tb) {
    // SAFETY: `tb` is valid for the duration of this callback, and so are the
    // instruction handles and data QEMU returns for it.
    let fetched = unsafe { fetch_instructions(tb) };
    let insns: Vec<RawInsn<'_>> = fetched
        .iter()
        .map(|(vaddr, bytes, len)| RawInsn {
            vaddr: *vaddr,
            bytes: &bytes[..*len],
        })
        .collect();
    if let Some(first) = insns.first() {
        begin_pending_count(first.vaddr);
    }
    with_plugin(|plugin| {
        let counters = plugin.translate(&insns, guest_binary);
        for counter in counters {
            // SAFETY: the counter lives in a mapping the plugin keeps until exit.
            unsafe {
                ffi::qemu_plugin_register_vcpu_tb_exec_inline(
                    tb,
                    ffi::INLINE_ADD_U64,
                    counter.cast::<c_void>(),
                    1,
                )
            };
        }
    });
}

extern "C" fn on_exit(_id: PluginId, _userdata: *mut c_void) {
    with_plugin(Plugin::finish);
}

/// ARM EABI `exit` and `exit_group`.
const EXIT_SYSCALL: i64 = 1;
const EXIT_GROUP_SYSCALL: i64 = 248;

/// Ends the process as QEMU would at the guest's `exit`/`exit_group`, minus QEMU's plugin
/// teardown.
///
/// QEMU's exit path (`preexit_cleanup`) unregisters the plugin's callbacks and flushes the
/// translation cache before the atexit callback runs. The flush rewrites QEMU's whole block
/// hash table (2 MiB): in a child of the harness's fork server every page of it is a
/// copy-on-write fault, several hundred per run, and the flush was about a third of the CPU
/// time of a short served run. Nothing in it matters to a process about to end: the counts
/// are complete at the system call (blocks count on entry), the atexit callback only sets the
/// `complete` flag, which this does, and QEMU then calls `_exit` with the guest's status,
/// which this does too. The guest is single-threaded (see the crate documentation), so
/// `exit` ends the process as `exit_group` does.
fn exit_now(status: u64) -> ! {
    with_plugin(Plugin::finish);
    // SAFETY: _exit has no preconditions; the counter file is a shared mapping, so what it
    // holds is in the page cache already.
    unsafe { _exit(status as c_int) }
}

unsafe extern "C" {
    /// The C library's `_exit(2)` (the plugin is loaded into QEMU, which links it).
    fn _exit(status: c_int) -> !;
}

/// (vaddr, bytes, length) of every instruction of `tb`. Instructions longer
/// than 4 bytes do not exist on ARM; they would be cut to 4 and decode as
/// undefined.
///
/// # Safety
/// `tb` must be the block of the current translation callback.
unsafe fn fetch_instructions(tb: *mut Tb) -> Vec<(u64, [u8; 4], usize)> {
    // SAFETY: per the function contract.
    unsafe {
        let n = ffi::qemu_plugin_tb_n_insns(tb);
        let mut out = Vec::with_capacity(n);
        for index in 0..n {
            let insn = ffi::qemu_plugin_tb_get_insn(tb, index);
            let size = ffi::qemu_plugin_insn_size(insn).min(4);
            let data = ffi::qemu_plugin_insn_data(insn).cast::<u8>();
            let mut bytes = [0u8; 4];
            if !data.is_null() {
                std::ptr::copy_nonoverlapping(data, bytes.as_mut_ptr(), size);
            }
            out.push((ffi::qemu_plugin_insn_vaddr(insn), bytes, size));
        }
        out
    }
}

/// The guest executable's path. The string QEMU allocates is deliberately
/// leaked: it is asked for once per run, and freeing it would need glib.
fn guest_binary() -> Option<PathBuf> {
    // SAFETY: called from a translation callback, where QEMU has a current vCPU.
    let path = unsafe { ffi::qemu_plugin_path_to_binary() };
    // SAFETY: QEMU returns NULL or a NUL-terminated string.
    unsafe { c_string(path) }.map(PathBuf::from)
}

/// Copies a C string; `None` for NULL.
///
/// # Safety
/// `ptr` is NULL or points to a NUL-terminated string.
unsafe fn c_string(ptr: *const c_char) -> Option<String> {
    // SAFETY: per the function contract.
    (!ptr.is_null()).then(|| {
        unsafe { CStr::from_ptr(ptr) }
            .to_string_lossy()
            .into_owned()
    })
}

/// # Safety
/// `argv` holds `argc` valid C strings.
unsafe fn collect_args(argc: c_int, argv: *const *const c_char) -> Vec<String> {
    if argv.is_null() {
        return Vec::new();
    }
    let count = usize::try_from(argc).unwrap_or(0);
    // SAFETY: per the function contract.
    (0..count)
        .filter_map(|i| unsafe { c_string(*argv.add(i)) })
        .collect()
}
