//! The ARMv7 back end: IR module → GNU `as` assembly for `arm-linux-gnueabihf`
//! (`armv7ve`, VFPv4 single precision in `s` registers, hard-float AAPCS, ARM state).
//!
//! # Pipeline (per function)
//!
//! 1. [`isel`] — instruction selection into the machine IR of [`mir`] over virtual
//!    registers: SSA with block parameters in place of phis, critical edges split, ARM
//!    patterns (immediates, shifted operands, `mla`/`mls`, fused compare-and-branch,
//!    addressing modes, VFP arithmetic, calls per [`abi`]).
//! 2. [`regalloc`] — `regalloc2` assigns physical registers ([`regs`] documents the
//!    reservations: `d16`–`d31` are the back end's scratch, and `ip` too in the rare
//!    functions whose frame needs it) and inserts moves, spills and reloads.
//!    Before it, [`shrinkwrap`] (`arm-shrink-wrap`) copies the values an early exit's
//!    frame-free path shares with the rest, so the allocator can keep them out of
//!    callee-saved registers there, and gives the slow path returns of its own.
//! 3. Optional stages on allocated code: [`spills`] (`arm-spill-elim`), [`remat`]
//!    (`arm-remat`), [`copyprop`]
//!    (`arm-copy-prop`), [`leafregs`] (`arm-leaf-regs`), [`peephole`] (`arm-peephole`),
//!    [`ifconv`] (`arm-if-convert`) and [`branches`] (`arm-branch-opt`).
//! 4. [`frame`] lays out the stack frame from what the code uses (with `arm-shrink-wrap`,
//!    the prologue goes where the blocks needing it begin); [`emit`] prints the assembly,
//!    expanding pseudo-instructions.
//!
//! Optional stages are named (see [`BackendStage`]; each is an entry of the pass registry) so a harness can switch them off one
//! by one to bisect a miscompilation, exactly like IR passes. Stages inside instruction
//! selection (`arm-addr-fold`, `arm-op-fold`, `arm-const-div`, `arm-const-hoist`) change
//! which patterns are chosen; with all of them off the selector still produces correct, plain
//! code. Instruction selection, allocation, frame layout and emission always run.
//!
//! # Choices worth knowing
//!
//! * The IR has no shift or bitwise operations, so the machine IR has no register-shifted
//!   (`r, lsl r`) operands; immediate-shifted operands come from multiplications by powers
//!   of two, scaled indices and division sequences.
//! * `memzero` never calls `memset`: up to 8 words are single `str`s, anything longer is an
//!   inline loop storing 64 bytes per iteration with `vstmia` from zeroed `d16`–`d19`, which
//!   is as fast per word as a library call and avoids the call's clobbers.
//! * `unreachable` is selected as a return (of whatever `r0`/`s0` hold): reaching it is
//!   undefined behaviour, and returning is the most forgiving outcome.
//! * Division by zero and `INT_MIN / -1` are undefined in SysY; `sdiv` returns 0 and
//!   `INT_MIN` for them, the constant-divisor sequences whatever the arithmetic gives.
//!
//! # Symbols
//!
//! `main` keeps its name; every other function and every global is emitted as `sy.<name>`.
//! The dot cannot occur in a C identifier, so program symbols never collide with the C
//! library linked statically next to them (a SysY global called `index` or a function called
//! `write` would otherwise clash). Runtime functions are called by
//! [`crate::frontend::hir::Builtin::link_name`]; `putf` format strings are `.Lstr.<n>`.

pub mod abi;
pub mod asm;
mod branches;
pub mod cfg;
mod compare_fusion;
mod copyprop;
pub mod emit;
pub mod frame;
pub mod imm;
mod ifconv;
mod isel;
mod leafregs;
pub mod link;
pub mod mir;
mod peephole;
mod post_increment;
mod regalloc;
pub mod regs;
mod remat;
mod shrinkwrap;
mod spills;
pub mod verify;

#[cfg(test)]
mod tests;

use cranelift_entity::SecondaryMap;
use std::collections::BTreeSet;

use rustc_hash::FxHashSet;

use crate::ir::{FuncRef, GlobalRef, Module, StrId};

/// Errors of the back end.
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    /// The IR violates an assumption of the back end (it should have been rejected by the
    /// IR verifier).
    #[error("invalid IR for the ARM back end: {0}")]
    InvalidIr(String),
    #[error("unknown back-end stage `{0}` (known: {known})", known = BackendStage::ALL.map(BackendStage::name).join(", "))]
    UnknownStage(String),
    #[error("register allocation failed in `{func}`: {err}")]
    RegAlloc { func: String, err: String },
    /// A bug in the back end.
    #[error("internal error in the ARM back end: {0}")]
    Internal(String),
    /// The machine-code verifier rejected the code of `func` after `after` (register
    /// allocation or an optional stage).
    #[error("machine-code verifier failed in `{func}` after {after}:\n{problems}")]
    MachineVerifier { func: String, after: String, problems: String },
}

/// An optional back-end stage. Each is an entry of the pass registry
/// ([`crate::passes::REGISTRY`]), so a configuration names stages exactly like IR passes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum BackendStage {
    AddrFold,
    OpFold,
    ConstDiv,
    ConstHoist,
    ShrinkWrap,
    SpillElim,
    Remat,
    CopyProp,
    LeafRegs,
    Peephole,
    IfConvert,
    BranchOpt,
}

/// Number of optional stages.
const NUM_STAGES: usize = 12;

impl BackendStage {
    /// Every stage, in back-end order.
    pub const ALL: [BackendStage; NUM_STAGES] = [
        BackendStage::AddrFold,
        BackendStage::OpFold,
        BackendStage::ConstDiv,
        BackendStage::ConstHoist,
        BackendStage::ShrinkWrap,
        BackendStage::SpillElim,
        BackendStage::Remat,
        BackendStage::CopyProp,
        BackendStage::LeafRegs,
        BackendStage::Peephole,
        BackendStage::IfConvert,
        BackendStage::BranchOpt,
    ];

    /// The stable name of the stage.
    pub const fn name(self) -> &'static str {
        STAGES[self as usize].0
    }

    /// One line for `--list-passes`.
    pub const fn description(self) -> &'static str {
        STAGES[self as usize].1
    }

    pub fn from_name(name: &str) -> Option<BackendStage> {
        BackendStage::ALL.iter().copied().find(|s| s.name() == name)
    }

    /// Whether the stage rewrites allocated machine code (the machine-code verifier runs
    /// after each of these under `--verify-each`).
    pub fn after_allocation(self) -> bool {
        matches!(
            self,
            BackendStage::SpillElim | BackendStage::Remat | BackendStage::CopyProp | BackendStage::LeafRegs | BackendStage::Peephole | BackendStage::IfConvert | BackendStage::BranchOpt
        )
    }
}

const STAGES: [(&str, &str); NUM_STAGES] = [
    ("arm-addr-fold", "fold gep chains into [base, #imm] and [base, index, lsl #k] addressing modes"),
    ("arm-op-fold", "fold single-use multiplications into mla/mls/vmla or shifted add/sub operands"),
    ("arm-const-div", "division and remainder by constants via shifts or smmul with a magic multiplier"),
    ("arm-const-hoist", "materialise constants and addresses used in loops once, before the outermost loop with room (a few values per loop)"),
    ("arm-shrink-wrap", "set up the frame only on the paths that need it: early exits that neither call nor spill return without a prologue"),
    ("arm-spill-elim", "after allocation: drop reloads and stores of spill slots whose value the register already holds (across blocks)"),
    ("arm-remat", "after allocation: reloads of spill slots that only ever hold one cheap constant or stack address rebuild it; the stores go"),
    ("arm-copy-prop", "after allocation: remove register copies by retargeting definitions or forwarding sources"),
    ("arm-leaf-regs", "in functions without calls, rename callee-saved registers to unused caller-saved ones"),
    ("arm-peephole", "remove self-moves and +0, forward store→load and load→load, drop move-backs; on final code, a compare whose flags an earlier add/sub/and can set disappears (`subs`)"),
    ("arm-if-convert", "after allocation: small diamonds, triangles and loop-latch edge blocks become conditionally executed instructions"),
    ("arm-branch-opt", "thread jumps through empty blocks, delete unreachable blocks, fall through to the next block"),
];

/// What the back end needs of a [`crate::config::Config`]: which optional stages run (and
/// where), the injected faults, and whether to verify the machine code after every stage.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BackendOptions {
    pub stages: BTreeSet<BackendStage>,
    /// Fault injection (only non-empty in builds with the `fault-injection` feature).
    pub faults: crate::faults::FaultSet,
    /// When set, the optional stages run only in the functions named here (others get the
    /// mandatory stages alone): how triage finds the function a stage miscompiles.
    pub stages_only_in: Option<BTreeSet<String>>,
    /// Run the machine-code verifier ([`verify`]) after allocation and after every stage
    /// that rewrites allocated code.
    pub verify: bool,
}

impl Default for BackendOptions {
    fn default() -> Self {
        BackendOptions::all()
    }
}

impl BackendOptions {
    /// Every optional stage on.
    pub fn all() -> BackendOptions {
        BackendOptions::with(BackendStage::ALL)
    }

    /// Only the mandatory stages (selection without folding, allocation, emission).
    pub fn mandatory_only() -> BackendOptions {
        BackendOptions::with([])
    }

    /// Exactly these optional stages.
    pub fn with(stages: impl IntoIterator<Item = BackendStage>) -> BackendOptions {
        BackendOptions {
            stages: stages.into_iter().collect(),
            faults: crate::faults::FaultSet::none(),
            stages_only_in: None,
            verify: true,
        }
    }

    pub fn enabled(&self, stage: BackendStage) -> bool {
        self.stages.contains(&stage)
    }

    /// All stages on except the named ones.
    pub fn without(names: &[&str]) -> Result<BackendOptions, BackendError> {
        let mut o = BackendOptions::all();
        for n in names {
            let stage = BackendStage::from_name(n).ok_or_else(|| BackendError::UnknownStage(n.to_string()))?;
            o.stages.remove(&stage);
        }
        Ok(o)
    }

    /// The options for the function `name`: these, or the mandatory stages alone when
    /// [`BackendOptions::stages_only_in`] leaves it out.
    pub fn for_function(&self, name: &str) -> std::borrow::Cow<'_, BackendOptions> {
        match &self.stages_only_in {
            Some(only) if !only.contains(name) => std::borrow::Cow::Owned(BackendOptions {
                stages: BTreeSet::new(),
                stages_only_in: None,
                ..self.clone()
            }),
            _ => std::borrow::Cow::Borrowed(self),
        }
    }
}

/// Assembly symbols of a module's functions and globals.
pub struct Symbols {
    pub funcs: SecondaryMap<FuncRef, String>,
    pub globals: SecondaryMap<GlobalRef, String>,
}

impl Symbols {
    pub fn new(module: &Module) -> Symbols {
        let mut used: FxHashSet<String> = FxHashSet::default();
        let mut unique = |base: String| {
            let mut name = base.clone();
            let mut n = 1;
            while !used.insert(name.clone()) {
                name = format!("{base}.{n}");
                n += 1;
            }
            name
        };
        let mut funcs = SecondaryMap::new();
        for (f, func) in module.funcs() {
            funcs[f] = unique(if func.name == "main" { "main".to_string() } else { mangle(&func.name) });
        }
        let mut globals = SecondaryMap::new();
        for (g, data) in module.globals.iter() {
            globals[g] = unique(mangle(&data.name));
        }
        Symbols { funcs, globals }
    }
}

fn mangle(name: &str) -> String {
    let mut s = String::from("sy.");
    for c in name.chars() {
        if c.is_ascii_alphanumeric() || c == '_' || c == '.' {
            s.push(c);
        } else {
            s.push_str(&format!("_x{:x}_", c as u32));
        }
    }
    s
}

/// The label of a `putf` format string.
pub fn string_label(s: StrId) -> String {
    format!(".Lstr.{}", cranelift_entity::EntityRef::index(s))
}

/// Register allocation, the optional post-allocation stages and the frame layout, with the
/// machine-code verifier after allocation and after every stage when `opts.verify`.
fn allocate_and_lay_out(
    mut mf: mir::MFunction,
    ip_allocatable: bool,
    opts: &BackendOptions,
) -> Result<(mir::PFunction, frame::FrameLayout), BackendError> {
    if opts.enabled(BackendStage::ShrinkWrap) {
        shrinkwrap::split_entry_values(&mut mf);
    }
    let mut pf = regalloc::allocate(mf, ip_allocatable)?;
    let check = |pf: &mir::PFunction, after: &str| -> Result<(), BackendError> {
        if !opts.verify {
            return Ok(());
        }
        verify::verify(pf, ip_allocatable).map_err(|problems| BackendError::MachineVerifier {
            func: pf.sym.clone(),
            after: after.to_string(),
            problems: problems.join("\n"),
        })
    };
    check(&pf, "register allocation")?;
    type Rewrite<'a> = &'a dyn Fn(&mut mir::PFunction);
    let stages: [(BackendStage, Rewrite<'_>); 7] = [
        (BackendStage::SpillElim, &|pf| {
            spills::run(pf);
        }),
        (BackendStage::Remat, &|pf| remat::run(pf)),
        (BackendStage::CopyProp, &|pf| copyprop::run(pf, &opts.faults)),
        (BackendStage::LeafRegs, &|pf| leafregs::run(pf, ip_allocatable)),
        (BackendStage::Peephole, &|pf| peephole::run(pf)),
        (BackendStage::IfConvert, &|pf| ifconv::run(pf, &opts.faults)),
        (BackendStage::BranchOpt, &|pf| branches::run(pf, &opts.faults)),
    ];
    for (stage, run) in stages {
        if opts.enabled(stage) {
            rewrite_then_check(&mut pf, opts.verify, run, |pf| check(pf, &format!("stage `{}`", stage.name())))?;
        }
    }
    if opts.enabled(BackendStage::Peephole) {
        // Both need final code: nothing may be placed between a pointer's access and its
        // step, or between a flag-setting operation and the readers of its flags, afterwards.
        // Increments first: a step removed between a `sub` and its compare can only help.
        rewrite_then_check(&mut pf, opts.verify, post_increment::fold_increments, |pf| {
            check(pf, "stage `arm-peephole` (post-increment)")
        })?;
        rewrite_then_check(&mut pf, opts.verify, compare_fusion::fuse_compares, |pf| {
            check(pf, "stage `arm-peephole` (compare fusion)")
        })?;
    }
    let mut layout = frame::FrameLayout::compute(&pf)?;
    if opts.enabled(BackendStage::ShrinkWrap) {
        layout.wrap = shrinkwrap::place(&pf, &layout);
    }
    Ok((pf, layout))
}

/// Runs one post-allocation stage, then `check` (with `verify`) unless the stage left the
/// function exactly as it was: that function passed the check before the stage. Comparing is
/// much cheaper than the verifier's data flow, and does not trust the stage to say whether it
/// changed anything.
pub(crate) fn rewrite_then_check(
    pf: &mut mir::PFunction,
    verify: bool,
    rewrite: impl FnOnce(&mut mir::PFunction),
    check: impl FnOnce(&mir::PFunction) -> Result<(), BackendError>,
) -> Result<(), BackendError> {
    let before = verify.then(|| pf.clone());
    rewrite(pf);
    match before {
        Some(before) if before != *pf => check(pf),
        _ => Ok(()),
    }
}

/// Compiles a whole module to assembly text.
pub fn compile_module(module: &Module, opts: &BackendOptions) -> Result<String, BackendError> {
    let syms = Symbols::new(module);
    let mut out = String::new();
    emit::header(&mut out);
    for (i, (fref, func)) in module.funcs().enumerate() {
        let opts = &*opts.for_function(&func.name);
        let mf = isel::select(module, func, syms.funcs[fref].clone(), &syms, opts)?;
        // First with `ip` allocatable; again without it if the frame needs the scratch.
        let (pf, layout) = match allocate_and_lay_out(mf.clone(), true, opts)? {
            (pf, layout) if !emit::needs_scratch(&pf, &layout) => (pf, layout),
            _ => allocate_and_lay_out(mf, false, opts)?,
        };
        emit::emit_function(&mut out, &pf, &layout, i);
    }
    emit::trailer(&mut out, module, &syms)?;
    Ok(out)
}
