//! Hand-written declarations of the QEMU TCG plugin API, version 1 (the
//! version QEMU 7.2 speaks; it refuses plugins built for 2 or later).
//!
//! Only what the plugin uses is declared. The `qemu_plugin_*` functions are
//! exported by the `qemu-arm` executable and resolve when it loads the plugin,
//! so the shared library is linked with them undefined. Signatures follow
//! QEMU 7.2's `include/qemu/qemu-plugin.h`.

use std::ffi::{c_char, c_int, c_uint, c_void};

/// `qemu_plugin_id_t`.
pub type PluginId = u64;

/// `qemu_info_t`; only the leading fields are read.
#[repr(C)]
pub struct QemuInfo {
    pub target_name: *const c_char,
    pub version_min: c_int,
    pub version_cur: c_int,
    pub system_emulation: bool,
    pub smp_vcpus: c_int,
    pub max_vcpus: c_int,
}

/// `struct qemu_plugin_tb` (opaque).
#[repr(C)]
pub struct Tb {
    _opaque: [u8; 0],
}

/// `struct qemu_plugin_insn` (opaque).
#[repr(C)]
pub struct Insn {
    _opaque: [u8; 0],
}

/// `QEMU_PLUGIN_INLINE_ADD_U64` of `enum qemu_plugin_op`.
pub const INLINE_ADD_U64: c_int = 0;

pub type TbTransCallback = extern "C" fn(id: PluginId, tb: *mut Tb);
pub type UdataCallback = extern "C" fn(id: PluginId, userdata: *mut c_void);
/// `qemu_plugin_vcpu_syscall_cb_t`: the syscall number and its eight arguments.
pub type SyscallCallback = extern "C" fn(
    id: PluginId,
    vcpu_index: c_uint,
    num: i64,
    a1: u64,
    a2: u64,
    a3: u64,
    a4: u64,
    a5: u64,
    a6: u64,
    a7: u64,
    a8: u64,
);

unsafe extern "C" {
    pub fn qemu_plugin_register_vcpu_tb_trans_cb(id: PluginId, cb: TbTransCallback);
    pub fn qemu_plugin_register_vcpu_tb_exec_inline(
        tb: *mut Tb,
        op: c_int,
        ptr: *mut c_void,
        imm: u64,
    );
    pub fn qemu_plugin_register_vcpu_syscall_cb(id: PluginId, cb: SyscallCallback);
    pub fn qemu_plugin_register_atexit_cb(id: PluginId, cb: UdataCallback, userdata: *mut c_void);
    pub fn qemu_plugin_tb_n_insns(tb: *const Tb) -> usize;
    pub fn qemu_plugin_tb_get_insn(tb: *const Tb, idx: usize) -> *mut Insn;
    pub fn qemu_plugin_insn_data(insn: *const Insn) -> *const c_void;
    pub fn qemu_plugin_insn_size(insn: *const Insn) -> usize;
    pub fn qemu_plugin_insn_vaddr(insn: *const Insn) -> u64;
    /// The guest executable's path (user mode; a newly allocated string).
    /// Needs a running vCPU: call it from a translation callback, not from
    /// `qemu_plugin_install`.
    pub fn qemu_plugin_path_to_binary() -> *const c_char;
}
