//! The execution loop.
//!
//! One flat loop over [`Op`]s with the current frame's register base and program counter in
//! locals. Calls do not recurse natively: the caller's state goes on an explicit frame
//! stack, the callee's registers are appended to one register vector (its template copied
//! in), and `ret` pops both — so IR recursion depth is limited only by
//! [`InterpConfig::max_call_depth`] and memory, never by the Rust stack.
//!
//! The loop is split in two. [`Machine::fast`] does the common case of every op and calls
//! nothing out of line on its paths, so that the compiler keeps the loop's state in machine
//! registers; it leaves an op it cannot finish that way — a trap, the runtime library,
//! `memzero`, a limit, the step checkpoint — untouched to [`Machine::step`], which does that
//! one op in full, and the fast loop resumes after it. (In one loop the calls and trap
//! messages of the rare paths made the compiler spill the program counter and the frame.)
//! `fast` reads and writes registers without bounds checks; the translator has checked every
//! register index against its function's frame (see `fast`).
//!
//! Accounting happens at block entry: the step budget is checked against the whole block,
//! and the block's execution counter is bumped. Steps and cost classes are derived from those
//! counters at the end; when a run traps, the instructions of partially executed blocks
//! (after the trapping instruction, and after each pending call on the frame stack) are
//! subtracted again, so the figures count exactly the instructions executed.

use std::time::{Duration, Instant};

use super::code::{NO_REG, Op, Program, Reg};
use super::cost::{CostClass, CostCounts};
use super::memory::Memory;
use super::{HI, InterpConfig, InterpResult, Interrupted, Stream, UNDEF};
use crate::frontend::hir::Builtin;
use crate::runtime::{Io, Outcome, PutfArg, Trap, TrapKind};

/// A suspended caller.
struct Frame {
    /// Where to continue (the op after the call).
    ret_pc: u32,
    base: u32,
    /// Register of the caller receiving the result, or `NO_REG`.
    ret_dst: Reg,
    /// The caller's first stack object (its alloca slots are `obj_base + slot`).
    obj_base: u32,
    /// Memory to pop back to when the callee returns.
    callee_objects: u32,
    callee_top: usize,
}

struct Stop {
    trap: Trap,
    pc: u32,
}

/// Where execution is: what the loop keeps in locals, handed between [`Machine::fast`] and
/// [`Machine::step`].
#[derive(Clone, Copy)]
struct Cursor {
    pc: usize,
    /// Start of the current frame in the register vector.
    base: usize,
    /// The current function's first stack object (its alloca slots are `obj_base + slot`).
    obj_base: u32,
    /// Steps left before [`Machine::checkpoint`] must be called: `check_at - steps`
    /// (`Machine::steps` is brought up to date only for that call).
    fuel: u64,
}

/// Steps between two looks at the clock of a streaming run (a few milliseconds of work).
const CHECK_INTERVAL: u64 = 1 << 20;
/// A streaming run writes its buffered output once it holds this many bytes...
const FLUSH_BYTES: usize = 1 << 16;
/// ... or when this much time has passed since the last write (checked every
/// [`CHECK_INTERVAL`] steps).
const FLUSH_PERIOD: Duration = Duration::from_millis(100);

pub(super) fn execute(
    prog: &Program,
    stdin: &[u8],
    config: &InterpConfig,
    stream: Option<Stream<'_>>,
) -> (InterpResult, Option<Interrupted>) {
    let start = Instant::now();
    let deadline = stream.as_ref().and_then(|s| s.timeout).map(|t| start + t);
    let check_at = if stream.is_some() { CHECK_INTERVAL.min(config.max_steps) } else { config.max_steps };
    let mut m = Machine {
        prog,
        config,
        frames: Vec::new(),
        mem: Memory::with_arena(prog.globals.iter().map(|g| g.words as usize).sum()),
        io: Io::new(stdin.to_vec()),
        block_counts: vec![0; prog.blocks.len()],
        steps: 0,
        stack_base: 0,
        check_at,
        stream,
        deadline,
        last_flush: start,
        interrupted: None,
    };
    let result = m.run();
    let mut cost = CostCounts::default();
    for (info, &n) in prog.blocks.iter().zip(&m.block_counts) {
        if n > 0 {
            for (class, &k) in CostClass::ALL.iter().zip(&info.classes) {
                cost.add(*class, n * k as u64);
            }
        }
    }
    let mut outcome = Outcome { stdout: Vec::new(), exit_status: None, trap: None, steps: 0 };
    let mut trap_src_offset = None;
    match result {
        Ok(status) => outcome.exit_status = Some(status as u8),
        Err(stop) => {
            // Take back what partially executed blocks did not run.
            let mut tails = vec![stop.pc];
            tails.extend(m.frames.iter().map(|f| f.ret_pc));
            for pc in tails {
                m.subtract_tail(pc, &mut cost);
            }
            let mut trap = stop.trap;
            if stop.pc > 0 {
                trap_src_offset = prog.op_src[stop.pc as usize - 1];
                let block = prog.op_block[stop.pc as usize - 1] as usize;
                let func = &prog.funcs[prog.blocks[block].func as usize].name;
                trap.detail = format!("in @{func}: {}", trap.detail);
            }
            outcome.trap = Some(trap);
        }
    }
    if m.interrupted.is_some() {
        outcome.trap = None;
    }
    if m.stream.is_some() && !matches!(m.interrupted, Some(Interrupted::Output(_))) {
        m.flush();
    }
    outcome.stdout = m.io.take_stdout();
    outcome.steps = cost.total();
    (InterpResult { outcome, cost, trap_src_offset }, m.interrupted)
}

struct Machine<'p, 'w> {
    prog: &'p Program,
    config: &'p InterpConfig,
    frames: Vec<Frame>,
    mem: Memory,
    io: Io,
    block_counts: Vec<u64>,
    steps: u64,
    /// Arena words taken by globals (stack objects start here).
    stack_base: usize,
    /// [`Machine::enter`] takes its slow path (the step limit, and for a streaming run the
    /// clock) when the steps would pass this.
    check_at: u64,
    /// Where the output goes as it is produced (otherwise it is returned in the outcome).
    stream: Option<Stream<'w>>,
    deadline: Option<Instant>,
    last_flush: Instant,
    /// Why a streaming run stopped early (its outcome then has neither a trap nor a result).
    interrupted: Option<Interrupted>,
}

fn trap(kind: TrapKind, detail: impl Into<String>) -> Trap {
    Trap::new(kind).with_detail(detail)
}

#[inline(always)]
fn f(bits: u64) -> f32 {
    f32::from_bits(bits as u32)
}

/// `gep base, index * scale`: the offset wraps; an `undef` operand gives an `undef` pointer.
#[inline(always)]
fn gep(p: u64, idx: u64, scale: u32) -> u64 {
    let off = (p as u32).wrapping_add((idx as u32).wrapping_mul(scale));
    ((p | idx) & HI) | off as u64
}

#[inline(always)]
fn fbits(x: f32) -> u64 {
    x.to_bits() as u64
}

/// `r = x op y` with the NaN the target's VFP gives ([`crate::runtime::vfp`]).
#[inline(always)]
fn vfp(r: f32, x: u64, y: u64) -> u64 {
    crate::runtime::vfp::result_bits(r, f(x), f(y)) as u64
}

impl Machine<'_, '_> {
    /// Ops in `[pc, end of pc-1's block)` were counted at block entry but never ran.
    fn subtract_tail(&self, pc: u32, cost: &mut CostCounts) {
        if pc == 0 {
            return;
        }
        let block = self.prog.op_block[pc as usize - 1] as usize;
        let end = self.prog.blocks[block].end_pc;
        for op in &self.prog.code[pc as usize..end as usize] {
            // A fused op is two IR instructions.
            match op {
                Op::BrIcmp(..) | Op::LoadGep(..) | Op::StoreGep(..) => cost.sub(CostClass::Alu, 1),
                Op::BrFcmp(..) => cost.sub(CostClass::FloatAlu, 1),
                _ => {}
            }
            cost.sub(op_class(op), 1);
        }
    }

    /// Pushes the stack objects of function `fi`; returns the first object's id.
    fn push_allocas(&mut self, fi: u32) -> Result<u32, Trap> {
        let first = self.mem.num_objects();
        if self.push_allocas_fast(fi) {
            return Ok(first);
        }
        self.push_allocas_slow(fi)
    }

    /// Pushes the stack objects of function `fi` when the whole frame fits (so that each
    /// check of [`Machine::push_allocas_slow`] would pass); otherwise does nothing.
    #[inline(always)]
    fn push_allocas_fast(&mut self, fi: u32) -> bool {
        let func = &self.prog.funcs[fi as usize];
        (self.mem.top() - self.stack_base) as u64 + func.frame_words <= self.config.max_stack_words
            && self.mem.push_frame(&func.allocas, func.frame_words)
    }

    /// [`Machine::push_allocas`] one object at a time, finding which limit the frame hits.
    #[cold]
    #[inline(never)]
    fn push_allocas_slow(&mut self, fi: u32) -> Result<u32, Trap> {
        let first = self.mem.num_objects();
        let func = &self.prog.funcs[fi as usize];
        let frame_words = func.frame_words;
        if frame_words > self.config.max_stack_words {
            return Err(trap(
                TrapKind::CallDepth,
                format!(
                    "stack frame of @{} too large ({} bytes; the stack holds {} bytes)",
                    func.name,
                    frame_words * 4,
                    self.config.max_stack_words * 4
                ),
            ));
        }
        for &words in &func.allocas {
            if (self.mem.top() - self.stack_base) as u64 + words as u64 > self.config.max_stack_words {
                return Err(trap(TrapKind::CallDepth, "stack memory limit exceeded"));
            }
            if self.mem.push(words, true, false).is_none() {
                return Err(trap(TrapKind::CallDepth, "address space exhausted"));
            }
        }
        Ok(first)
    }

    /// Counts entry into `block` (of `steps` instructions), or stops when it would exceed the
    /// step budget.
    #[inline(always)]
    fn enter(&mut self, block: u32, steps: u32) -> Result<(), Trap> {
        let steps = steps as u64;
        if self.steps + steps > self.check_at {
            self.checkpoint(steps)?;
        }
        self.steps += steps;
        self.block_counts[block as usize] += 1;
        Ok(())
    }

    /// The slow path of [`Machine::enter`]: the step limit; for a streaming run also the
    /// deadline and the periodic flush of the output.
    #[cold]
    fn checkpoint(&mut self, steps: u64) -> Result<(), Trap> {
        let step_limit = || trap(TrapKind::StepLimit, format!("more than {} steps", self.config.max_steps));
        if self.steps + steps > self.config.max_steps {
            return Err(step_limit());
        }
        let now = Instant::now();
        if let (Some(deadline), Some(stream)) = (self.deadline, &self.stream)
            && now >= deadline
        {
            self.interrupted = Some(Interrupted::TimedOut(stream.timeout.unwrap_or_default()));
            return Err(step_limit());
        }
        if now - self.last_flush >= FLUSH_PERIOD && !self.flush() {
            return Err(step_limit());
        }
        self.check_at = (self.steps + steps + CHECK_INTERVAL).min(self.config.max_steps);
        Ok(())
    }

    /// Writes the buffered output of a streaming run out; false (and the run is interrupted)
    /// when that fails.
    fn flush(&mut self) -> bool {
        let Some(stream) = &mut self.stream else { return true };
        self.last_flush = Instant::now();
        if self.io.stdout.is_empty() {
            return true;
        }
        let result = stream.out.write_all(&self.io.stdout).and_then(|()| stream.out.flush());
        self.io.stdout.clear();
        match result {
            Ok(()) => true,
            Err(e) => {
                self.interrupted = Some(Interrupted::Output(e));
                false
            }
        }
    }

    /// After output: a streaming run writes a full buffer out.
    #[inline]
    fn output_written(&mut self) -> Result<(), Trap> {
        if self.io.stdout.len() >= FLUSH_BYTES && self.stream.is_some() && !self.flush() {
            return Err(trap(TrapKind::StepLimit, "output could not be written"));
        }
        Ok(())
    }

    fn run(&mut self) -> Result<u32, Stop> {
        let prog = self.prog;
        for g in &prog.globals {
            let id = self
                .mem
                .push(g.words, g.writable, true)
                .ok_or(Stop { trap: trap(TrapKind::MemoryFault, "globals exceed the address space"), pc: 0 })?;
            for &(i, bits) in &g.init {
                self.mem.write_initial(id, i, bits);
            }
        }
        self.stack_base = self.mem.top();
        let main = &prog.funcs[prog.main as usize];
        let mut regs = Vec::with_capacity(1024);
        regs.extend_from_slice(&main.template);
        let obj_base = self.push_allocas(prog.main).map_err(|trap| Stop { trap, pc: 0 })?;
        let entry_steps = prog.blocks[main.entry_block as usize].steps;
        self.enter(main.entry_block, entry_steps).map_err(|trap| Stop { trap, pc: 0 })?;
        // The counters are a local of the loop, as the registers are (see `fast`).
        let mut block_counts = std::mem::take(&mut self.block_counts);
        let result = self.interpret(&mut block_counts, regs, main.entry_pc, obj_base);
        self.block_counts = block_counts;
        result
    }

    /// Runs from `entry_pc` of `main` with its registers `regs`, alternating between
    /// [`Machine::fast`], which runs ops until one it leaves alone, and [`Machine::step`],
    /// which runs that one.
    fn interpret(&mut self, counts: &mut [u64], mut regs: Vec<u64>, entry_pc: u32, obj_base: u32) -> Result<u32, Stop> {
        let mut at = Cursor { pc: entry_pc as usize, base: 0, obj_base, fuel: self.check_at - self.steps };
        loop {
            self.fast(counts, &mut regs, &mut at);
            if let Some(status) = self.step(counts, &mut regs, &mut at)? {
                return Ok(status);
            }
        }
    }

    #[allow(clippy::too_many_lines)]
    /// Runs ops from `at.pc` until one this loop leaves to [`Machine::step`]; `at.pc` is then
    /// that op, not started. The loop does the common case of every op and leaves what would
    /// call out of it: the runtime library, `putf` and `memzero`; every trap (building its
    /// message allocates); a block entry that reaches [`Machine::checkpoint`]; the phi copies
    /// of an edge through a buffer; a call that reaches a limit; `main`'s return. (A call
    /// stays here: the register vector, the frame stack and memory allocate only when they
    /// outgrow their capacity.)
    ///
    /// Its state lives in locals, copied from and back to `at`, and the rare paths are no
    /// longer in its body, so the compiler keeps the program counter and the frame in
    /// machine registers; the single loop of before spilled both to the stack. Measured on
    /// `benches/interp.rs`: 5–6% less time on generated programs.
    ///
    /// Operands are read through `frame`, the current function's registers (`regs[base..]`,
    /// re-borrowed on call and return): a slice is a plain pointer, where indexing the `Vec`
    /// at `base + x` also reloaded the vector's pointer and length and added `base`. The
    /// frame is always the end of `regs` (a call appends the callee's, a return truncates
    /// it away), so `frame.len()` is the frame size of the function executing, and the
    /// translator has checked every register an op names is below its function's frame
    /// size: register accesses need no bounds check (the `r!` macro; with the checks the
    /// loop took 2–7% more time).
    ///
    /// Block entry is counted in `counts` (`Machine::block_counts`, lent to the loop) and
    /// against `fuel`, the steps left before [`Machine::checkpoint`] (`check_at - steps`).
    #[inline(never)]
    fn fast(&mut self, counts: &mut [u64], regs: &mut Vec<u64>, at: &mut Cursor) {
        let prog = self.prog;
        let code = &prog.code[..];
        let trap_on_uninit_load = self.config.trap_on_uninit_load;
        let max_call_depth = self.config.max_call_depth as usize;
        let Cursor { mut pc, mut base, mut obj_base, mut fuel } = *at;
        let mut frame: &mut [u64] = &mut regs[base..];

        // A register of the current frame, read or written without a bounds check.
        //
        // SAFETY: `frame.len()` is the frame size of the function executing (it is sliced so
        // at entry, on call and on return, see there), and every register an op names — an
        // operand, a result, an edge's copy, a call's argument — is below the frame size of
        // the op's function: registers are slots of the function's template, and
        // `Program::new` checks it of every op (`code::Program::check_registers`). `NO_REG`
        // is tested for before any access where an op may hold it.
        macro_rules! r {
            ($x:expr) => {
                *unsafe { frame.get_unchecked_mut($x as usize) }
            };
        }
        // Leaves the op just fetched to `step` (it must not have changed anything yet).
        macro_rules! leave {
            () => {{
                pc -= 1;
                break;
            }};
        }
        macro_rules! arith {
            ($d:expr, $a:expr, $b:expr, |$x:ident, $y:ident| $body:expr) => {{
                let ($x, $y) = (r!($a), r!($b));
                let undef = ($x | $y) & HI;
                r!($d) = ($body) | undef;
            }};
        }
        // A load into `d`, unless the access faults or (when that traps) the word is
        // uninitialised.
        macro_rules! load {
            ($d:expr, $p:expr) => {{
                let Some(v) = self.mem.load_fast($p) else { leave!() };
                if v & HI != 0 && trap_on_uninit_load {
                    leave!()
                }
                r!($d) = v;
            }};
        }
        // The edge, unless its target block reaches the checkpoint or its copies need the
        // buffer.
        macro_rules! take_edge {
            ($e:expr) => {{
                let e = &prog.edges[$e as usize];
                let steps = e.steps as u64;
                if steps > fuel || e.parallel {
                    leave!()
                }
                fuel -= steps;
                counts[e.block as usize] += 1;
                for &(dst, src) in &prog.copies[e.copies_start as usize..e.copies_end as usize] {
                    r!(dst) = r!(src);
                }
                pc = e.pc as usize;
            }};
        }

        loop {
            // By reference: each arm reads only its own operands instead of the whole op
            // being copied out first.
            let op = &code[pc];
            pc += 1;
            match *op {
                Op::Add(d, a, b) => arith!(d, a, b, |x, y| (x as u32).wrapping_add(y as u32) as u64),
                Op::Sub(d, a, b) => arith!(d, a, b, |x, y| (x as u32).wrapping_sub(y as u32) as u64),
                Op::Mul(d, a, b) => arith!(d, a, b, |x, y| (x as u32).wrapping_mul(y as u32) as u64),
                Op::SDiv(d, a, b) | Op::SRem(d, a, b) => {
                    let (x, y) = (r!(a), r!(b));
                    let (i, j) = (x as u32 as i32, y as u32 as i32);
                    if (x | y) & HI != 0 || j == 0 || (i == i32::MIN && j == -1) {
                        leave!()
                    }
                    let v = if matches!(*op, Op::SDiv(..)) { i / j } else { i % j };
                    r!(d) = v as u32 as u64;
                }
                Op::FAdd(d, a, b) => arith!(d, a, b, |x, y| vfp(f(x) + f(y), x, y)),
                Op::FSub(d, a, b) => arith!(d, a, b, |x, y| vfp(f(x) - f(y), x, y)),
                Op::FMul(d, a, b) => arith!(d, a, b, |x, y| vfp(f(x) * f(y), x, y)),
                Op::FDiv(d, a, b) => arith!(d, a, b, |x, y| vfp(f(x) / f(y), x, y)),
                Op::FNeg(d, a) => {
                    let x = r!(a);
                    r!(d) = fbits(-f(x)) | (x & HI);
                }
                Op::Icmp(cc, d, a, b) => {
                    arith!(d, a, b, |x, y| cc.eval_int(x as u32 as i32, y as u32 as i32) as u64)
                }
                Op::Fcmp(cc, d, a, b) => arith!(d, a, b, |x, y| cc.eval_float(f(x), f(y)) as u64),
                Op::Zext(d, a) => {
                    let x = r!(a);
                    r!(d) = (x & 1) | (x & HI);
                }
                Op::SiToFp(d, a) => {
                    let x = r!(a);
                    r!(d) = fbits(x as u32 as i32 as f32) | (x & HI);
                }
                Op::FpToSi(d, a) => {
                    let x = r!(a);
                    r!(d) = (f(x) as i32 as u32 as u64) | (x & HI);
                }
                Op::Select(d, c, a, b) => {
                    let cond = r!(c);
                    r!(d) = if cond & HI != 0 {
                        UNDEF
                    } else if cond & 1 != 0 {
                        r!(a)
                    } else {
                        r!(b)
                    };
                }
                Op::Alloca(d, slot) => {
                    let object = obj_base + slot;
                    self.mem.reset(object);
                    r!(d) = (object as u64) << 32;
                }
                Op::Load(d, a) => load!(d, r!(a)),
                Op::LoadGep(d, b, i, scale) => load!(d, gep(r!(b), r!(i), scale)),
                Op::Store(a, v) => {
                    if !self.mem.store_fast(r!(a), r!(v)) {
                        leave!()
                    }
                }
                Op::StoreGep(b, i, scale, v) => {
                    if !self.mem.store_fast(gep(r!(b), r!(i), scale), r!(v)) {
                        leave!()
                    }
                }
                Op::Gep(d, b, i, scale) => r!(d) = gep(r!(b), r!(i), scale),
                Op::Call(d, fi, start, n) => {
                    let callee = &prog.funcs[fi as usize];
                    let steps = callee.entry_steps as u64;
                    let (callee_objects, callee_top) = (self.mem.num_objects(), self.mem.top());
                    // `step` does the limits (and their traps) in their order.
                    if self.frames.len() >= max_call_depth || steps > fuel || !self.push_allocas_fast(fi) {
                        leave!()
                    }
                    fuel -= steps;
                    counts[callee.entry_block as usize] += 1;
                    // The callee's frame is the template appended after the caller's, which
                    // ends the vector.
                    let new_base = regs.len();
                    regs.extend_from_slice(&callee.template);
                    let (caller_regs, callee_regs) = regs.split_at_mut(new_base);
                    for (param, &arg) in callee_regs.iter_mut().zip(&prog.args[start as usize..(start + n) as usize]) {
                        *param = caller_regs[base + arg as usize];
                    }
                    self.frames.push(Frame {
                        ret_pc: pc as u32,
                        base: base as u32,
                        ret_dst: d,
                        obj_base,
                        callee_objects,
                        callee_top,
                    });
                    base = new_base;
                    // Exactly the callee's template: `regs` ended at `new_base` before.
                    frame = &mut regs[base..];
                    obj_base = callee_objects;
                    pc = callee.entry_pc as usize;
                }
                Op::Jump(e) => take_edge!(e),
                Op::Br(c, t, e) => {
                    let cond = r!(c);
                    if cond & HI != 0 {
                        leave!()
                    }
                    if cond & 1 != 0 {
                        take_edge!(t)
                    } else {
                        take_edge!(e)
                    }
                }
                Op::BrIcmp(cc, a, b, t, e) => {
                    let (x, y) = (r!(a), r!(b));
                    if (x | y) & HI != 0 {
                        leave!()
                    }
                    if cc.eval_int(x as u32 as i32, y as u32 as i32) {
                        take_edge!(t)
                    } else {
                        take_edge!(e)
                    }
                }
                Op::BrFcmp(cc, a, b, t, e) => {
                    let (x, y) = (r!(a), r!(b));
                    if (x | y) & HI != 0 {
                        leave!()
                    }
                    if cc.eval_float(f(x), f(y)) {
                        take_edge!(t)
                    } else {
                        take_edge!(e)
                    }
                }
                Op::Ret(v) => {
                    let value = if v == NO_REG { 0 } else { r!(v) };
                    let Some(caller) = self.frames.pop() else { leave!() };
                    regs.truncate(base);
                    self.mem.pop_to(caller.callee_objects, caller.callee_top);
                    base = caller.base as usize;
                    // Exactly the caller's frame: the callee's began where it ended.
                    frame = &mut regs[base..];
                    obj_base = caller.obj_base;
                    pc = caller.ret_pc as usize;
                    if caller.ret_dst != NO_REG {
                        r!(caller.ret_dst) = value;
                    }
                }
                Op::CallBuiltin(..) | Op::PutF(..) | Op::MemZero(..) | Op::Unreachable => leave!(),
            }
        }
        *at = Cursor { pc, base, obj_base, fuel };
    }

    #[allow(clippy::too_many_lines)]
    /// Runs the op at `at.pc` that [`Machine::fast`] left: all of it, including what the fast
    /// loop does not (traps, the checkpoint, edges copying through a buffer, the limits of a
    /// call). `Some(status)` when `main` returned.
    fn step(&mut self, counts: &mut [u64], regs: &mut Vec<u64>, at: &mut Cursor) -> Result<Option<u32>, Stop> {
        let prog = self.prog;
        let op = &prog.code[at.pc];
        at.pc += 1;
        let frame = &mut regs[at.base..];

        macro_rules! r {
            ($x:expr) => {
                frame[$x as usize]
            };
        }
        macro_rules! stop {
            ($e:expr) => {
                return Err(Stop { trap: $e, pc: at.pc as u32 })
            };
        }
        macro_rules! mem_try {
            ($e:expr) => {
                match $e {
                    Ok(v) => v,
                    Err((kind, detail)) => stop!(trap(kind, detail)),
                }
            };
        }
        // A word of memory as a register value: `undef` when uninitialised, unless the
        // configuration traps on that.
        macro_rules! load {
            ($p:expr) => {{
                let v = mem_try!(self.mem.load($p));
                if v & HI != 0 && self.config.trap_on_uninit_load {
                    stop!(trap(TrapKind::UninitRead, "load of an uninitialised word"))
                }
                v
            }};
        }
        // Counts entry into `block` (of `steps` instructions), or stops when it would exceed
        // the step budget.
        macro_rules! enter {
            ($block:expr, $steps:expr, $on_stop:expr) => {{
                let steps = $steps as u64;
                if steps > at.fuel {
                    self.steps = self.check_at - at.fuel;
                    if let Err(t) = self.checkpoint(steps) {
                        $on_stop;
                        stop!(t);
                    }
                    at.fuel = self.check_at - self.steps;
                }
                at.fuel -= steps;
                counts[$block as usize] += 1;
            }};
        }
        macro_rules! take_edge {
            ($e:expr) => {{
                let e = &prog.edges[$e as usize];
                enter!(e.block, e.steps, ());
                // Copies in parallel: all sources are read before any destination is written.
                let copies = &prog.copies[e.copies_start as usize..e.copies_end as usize];
                let values: Vec<u64> = copies.iter().map(|&(_, src)| r!(src)).collect();
                for (&(dst, _), v) in copies.iter().zip(values) {
                    r!(dst) = v;
                }
                at.pc = e.pc as usize;
            }};
        }

        match *op {
            Op::SDiv(d, a, b) | Op::SRem(d, a, b) => {
                let (x, y) = (r!(a), r!(b));
                if (x | y) & HI != 0 {
                    stop!(trap(TrapKind::UninitRead, "division with an undef operand"));
                }
                let (x, y) = (x as u32 as i32, y as u32 as i32);
                if y == 0 {
                    stop!(trap(TrapKind::DivByZero, format!("{x} / 0")));
                }
                if x == i32::MIN && y == -1 {
                    stop!(trap(TrapKind::DivOverflow, "INT_MIN / -1"));
                }
                let v = if matches!(*op, Op::SDiv(..)) { x / y } else { x % y };
                r!(d) = v as u32 as u64;
            }
            Op::Load(d, a) => {
                let p = r!(a);
                r!(d) = load!(p);
            }
            Op::Store(a, v) => {
                let (p, v) = (r!(a), r!(v));
                mem_try!(self.mem.store(p, v));
            }
            Op::LoadGep(d, b, i, scale) => {
                let p = gep(r!(b), r!(i), scale);
                r!(d) = load!(p);
            }
            Op::StoreGep(b, i, scale, v) => {
                let (p, v) = (gep(r!(b), r!(i), scale), r!(v));
                mem_try!(self.mem.store(p, v));
            }
            Op::MemZero(a, words) => {
                let p = r!(a);
                mem_try!(self.mem.zero(p, words));
            }
            Op::Call(d, fi, start, n) => {
                if self.frames.len() as u64 >= self.config.max_call_depth as u64 {
                    stop!(trap(TrapKind::CallDepth, format!("more than {} nested calls", self.config.max_call_depth)));
                }
                let callee = &prog.funcs[fi as usize];
                let new_base = regs.len();
                regs.extend_from_slice(&callee.template);
                let (caller_regs, callee_regs) = regs.split_at_mut(new_base);
                for (param, &arg) in callee_regs.iter_mut().zip(&prog.args[start as usize..(start + n) as usize]) {
                    *param = caller_regs[at.base + arg as usize];
                }
                let callee_objects = self.mem.num_objects();
                let callee_top = self.mem.top();
                let new_obj_base = match self.push_allocas(fi) {
                    Ok(o) => o,
                    Err(t) => {
                        regs.truncate(new_base);
                        self.mem.pop_to(callee_objects, callee_top);
                        stop!(t)
                    }
                };
                enter!(callee.entry_block, callee.entry_steps, {
                    regs.truncate(new_base);
                    self.mem.pop_to(callee_objects, callee_top);
                });
                self.frames.push(Frame {
                    ret_pc: at.pc as u32,
                    base: at.base as u32,
                    ret_dst: d,
                    obj_base: at.obj_base,
                    callee_objects,
                    callee_top,
                });
                at.base = new_base;
                at.obj_base = new_obj_base;
                at.pc = callee.entry_pc as usize;
            }
            Op::CallBuiltin(d, b, start, n) => {
                let args = &prog.args[start as usize..(start + n) as usize];
                let mut vals = [0u64; 2];
                for (slot, &a) in vals.iter_mut().zip(args) {
                    *slot = r!(a);
                }
                match self.builtin(b, &vals[..args.len()]) {
                    Ok(v) => {
                        if d != NO_REG {
                            regs[at.base + d as usize] = v;
                        }
                    }
                    Err(t) => stop!(t),
                }
                if let Err(t) = self.output_written() {
                    stop!(t);
                }
            }
            Op::PutF(s, start, n) => {
                let mut args = Vec::with_capacity(n as usize);
                for &(reg, is_float) in &prog.putf_args[start as usize..(start + n) as usize] {
                    let v = r!(reg);
                    if v & HI != 0 {
                        stop!(trap(TrapKind::UninitRead, "putf of an undef value"));
                    }
                    args.push(if is_float { PutfArg::Float(f(v)) } else { PutfArg::Int(v as u32 as i32) });
                }
                self.io.put_f(&prog.strings[s.as_u32() as usize], &args);
                if let Err(t) = self.output_written() {
                    stop!(t);
                }
            }
            Op::Jump(e) => take_edge!(e),
            Op::Br(c, t, e) => {
                let cond = r!(c);
                if cond & HI != 0 {
                    stop!(trap(TrapKind::UninitRead, "branch on undef"));
                }
                if cond & 1 != 0 {
                    take_edge!(t)
                } else {
                    take_edge!(e)
                }
            }
            Op::BrIcmp(cc, a, b, t, e) => {
                let (x, y) = (r!(a), r!(b));
                if (x | y) & HI != 0 {
                    stop!(trap(TrapKind::UninitRead, "branch on undef"));
                }
                if cc.eval_int(x as u32 as i32, y as u32 as i32) {
                    take_edge!(t)
                } else {
                    take_edge!(e)
                }
            }
            Op::BrFcmp(cc, a, b, t, e) => {
                let (x, y) = (r!(a), r!(b));
                if (x | y) & HI != 0 {
                    stop!(trap(TrapKind::UninitRead, "branch on undef"));
                }
                if cc.eval_float(f(x), f(y)) {
                    take_edge!(t)
                } else {
                    take_edge!(e)
                }
            }
            Op::Ret(v) => {
                // The fast loop returns from every other function.
                assert!(self.frames.is_empty(), "the fast loop returns from callees");
                let value = if v == NO_REG { 0 } else { r!(v) };
                if value & HI != 0 {
                    stop!(trap(TrapKind::UninitRead, "main returned undef"));
                }
                return Ok(Some(value as u32));
            }
            Op::Unreachable => stop!(trap(TrapKind::MissingReturn, "executed `unreachable`")),
            _ => unreachable!("the fast loop runs every {op:?} itself"),
        }
        Ok(None)
    }

    /// A runtime-library call with its argument registers.
    fn builtin(&mut self, b: Builtin, args: &[u64]) -> Result<u64, Trap> {
        if args.iter().any(|&a| a & HI == UNDEF & HI) {
            return Err(trap(TrapKind::UninitRead, format!("undef argument to {}", b.source_name())));
        }
        let input = |r: Result<i32, TrapKind>| r.map_err(|k| trap(k, format!("{} found no input", b.source_name())));
        Ok(match b {
            Builtin::GetInt => input(self.io.get_int())? as u32 as u64,
            Builtin::GetCh => input(self.io.get_ch())? as u32 as u64,
            Builtin::GetFloat => {
                let v = self.io.get_float().map_err(|k| trap(k, "getfloat found no input"))?;
                fbits(v)
            }
            Builtin::GetArray | Builtin::GetFArray => {
                let n = input(self.io.get_int())?;
                let base = args[0];
                for i in 0..n.max(0) {
                    let bits = if b == Builtin::GetArray {
                        input(self.io.get_int())? as u32
                    } else {
                        self.io.get_float().map_err(|k| trap(k, "getfarray found no input"))?.to_bits()
                    };
                    let p = (base & HI) | (base as u32).wrapping_add((i as u32).wrapping_mul(4)) as u64;
                    self.mem.store(p, bits as u64).map_err(|(k, d)| trap(k, d))?;
                }
                n as u32 as u64
            }
            Builtin::PutInt => {
                self.io.put_int(args[0] as u32 as i32);
                0
            }
            Builtin::PutCh => {
                self.io.put_ch(args[0] as u32 as i32);
                0
            }
            Builtin::PutFloat => {
                self.io.put_float(f(args[0]));
                0
            }
            Builtin::PutArray | Builtin::PutFArray => {
                let n = args[0] as u32 as i32;
                let base = args[1];
                let mut words = Vec::with_capacity(n.max(0) as usize);
                for i in 0..n.max(0) {
                    let p = (base & HI) | (base as u32).wrapping_add((i as u32).wrapping_mul(4)) as u64;
                    match self.mem.load(p).map_err(|(k, d)| trap(k, d))? {
                        w if w & HI == 0 => words.push(w as u32),
                        _ => return Err(trap(TrapKind::UninitRead, format!("{} of an uninitialised element", b.source_name()))),
                    }
                }
                if n < 0 {
                    // C prints the count and loops zero times.
                    self.io.stdout.extend_from_slice(format!("{n}:\n").as_bytes());
                } else if b == Builtin::PutArray {
                    self.io.put_array(&words.iter().map(|&w| w as i32).collect::<Vec<_>>());
                } else {
                    self.io.put_farray(&words.iter().map(|&w| f32::from_bits(w)).collect::<Vec<_>>());
                }
                0
            }
            Builtin::StartTime => {
                self.io.start_time(args[0] as u32);
                0
            }
            Builtin::StopTime => {
                self.io.stop_time(args[0] as u32);
                0
            }
            Builtin::PutF => return Err(trap(TrapKind::MemoryFault, "putf called without a format string")),
        })
    }
}

/// The cost class of a translated op (for trap-time corrections).
fn op_class(op: &Op) -> CostClass {
    match op {
        Op::Add(..) | Op::Sub(..) | Op::Icmp(..) | Op::Zext(..) | Op::Select(..) | Op::Gep(..) => CostClass::Alu,
        Op::Mul(..) => CostClass::Mul,
        Op::SDiv(..) | Op::SRem(..) => CostClass::Div,
        Op::FAdd(..) | Op::FSub(..) | Op::FNeg(..) | Op::Fcmp(..) => CostClass::FloatAlu,
        Op::FMul(..) => CostClass::FloatMul,
        Op::FDiv(..) => CostClass::FloatDiv,
        Op::SiToFp(..) | Op::FpToSi(..) => CostClass::Convert,
        Op::Load(..) | Op::LoadGep(..) => CostClass::Load,
        Op::Store(..) | Op::StoreGep(..) => CostClass::Store,
        Op::Jump(..) | Op::Br(..) | Op::BrIcmp(..) | Op::BrFcmp(..) => CostClass::Branch,
        Op::Call(..) | Op::CallBuiltin(..) | Op::PutF(..) => CostClass::Call,
        Op::Ret(..) => CostClass::Return,
        Op::Alloca(..) | Op::MemZero(..) | Op::Unreachable => CostClass::Other,
    }
}
