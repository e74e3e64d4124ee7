//! The execution loop.
//!
//! One flat loop over [`Op`]s with the current frame's register base and program counter in
//! locals. Calls do not recurse natively: the caller's state goes on an explicit frame
//! stack, the callee's registers are appended to one register vector (its template copied
//! in), and `ret` pops both — so IR recursion depth is limited only by
//! [`InterpConfig::max_call_depth`] and memory, never by the Rust stack.
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

impl Machine<'_, '_> {
    /// Ops in `[pc, end of pc-1's block)` were counted at block entry but never ran.
    fn subtract_tail(&self, pc: u32, cost: &mut CostCounts) {
        if pc == 0 {
            return;
        }
        let block = self.prog.op_block[pc as usize - 1] as usize;
        let end = self.prog.blocks[block].end_pc;
        for op in &self.prog.code[pc as usize..end as usize] {
            if let Op::BrIcmp(..) | Op::LoadGep(..) | Op::StoreGep(..) = op {
                cost.sub(CostClass::Alu, 1);
            }
            cost.sub(op_class(op), 1);
        }
    }

    /// Pushes the stack objects of function `fi`; returns the first object's id.
    #[inline]
    fn push_allocas(&mut self, fi: u32) -> Result<u32, Trap> {
        let first = self.mem.num_objects();
        let func = &self.prog.funcs[fi as usize];
        // Fast path: the whole frame fits, so each check of the slow path would pass.
        if (self.mem.top() - self.stack_base) as u64 + func.frame_words <= self.config.max_stack_words
            && self.mem.push_frame(&func.allocas, func.frame_words)
        {
            return Ok(first);
        }
        self.push_allocas_slow(fi)
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
        self.interpret(regs, main.entry_pc, obj_base)
    }

    #[allow(clippy::too_many_lines)]
    /// Runs from `entry_pc` of `main` with its registers `regs`. The register file is a
    /// local rather than a field so that its pointer and length stay in machine registers
    /// across the loop (a field would be reloaded after every out-of-line call).
    ///
    /// Operands are read through `frame`, the current function's registers
    /// (`regs[base..]`, re-borrowed on call and return): a slice is a plain pointer and
    /// length, so an operand costs one bounds check and one load, where indexing the `Vec`
    /// at `base + x` also reloaded the vector's pointer and length and added `base`.
    fn interpret(&mut self, mut regs: Vec<u64>, entry_pc: u32, entry_obj_base: u32) -> Result<u32, Stop> {
        let prog = self.prog;
        let code = &prog.code[..];
        let mut pc = entry_pc as usize;
        let mut base = 0usize;
        let mut obj_base = entry_obj_base;
        let mut scratch: Vec<u64> = Vec::new();
        let mut frame: &mut [u64] = &mut regs[..];

        macro_rules! r {
            ($x:expr) => {
                frame[$x as usize]
            };
        }
        macro_rules! stop {
            ($e:expr) => {
                return Err(Stop { trap: $e, pc: pc as u32 })
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
            ($p:expr) => {
                match mem_try!(self.mem.load($p)) {
                    Some(w) => w as u64,
                    None if self.config.trap_on_uninit_load => {
                        stop!(trap(TrapKind::UninitRead, "load of an uninitialised word"))
                    }
                    None => UNDEF,
                }
            };
        }
        macro_rules! arith {
            ($d:expr, $a:expr, $b:expr, |$x:ident, $y:ident| $body:expr) => {{
                let ($x, $y) = (r!($a), r!($b));
                let undef = ($x | $y) & HI;
                r!($d) = ($body) | undef;
            }};
        }
        macro_rules! take_edge {
            ($e:expr) => {{
                let e = &prog.edges[$e as usize];
                if let Err(t) = self.enter(e.block, e.steps) {
                    stop!(t);
                }
                let copies = &prog.copies[e.copies_start as usize..e.copies_end as usize];
                if e.parallel {
                    scratch.clear();
                    scratch.extend(copies.iter().map(|&(_, src)| r!(src)));
                    for (&(dst, _), &v) in copies.iter().zip(&scratch) {
                        r!(dst) = v;
                    }
                } else {
                    for &(dst, src) in copies {
                        r!(dst) = r!(src);
                    }
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
                Op::FAdd(d, a, b) => arith!(d, a, b, |x, y| fbits(f(x) + f(y))),
                Op::FSub(d, a, b) => arith!(d, a, b, |x, y| fbits(f(x) - f(y))),
                Op::FMul(d, a, b) => arith!(d, a, b, |x, y| fbits(f(x) * f(y))),
                Op::FDiv(d, a, b) => arith!(d, a, b, |x, y| fbits(f(x) / f(y))),
                Op::FNeg(d, a) => {
                    let x = r!(a);
                    r!(d) = fbits(-f(x)) | (x & HI);
                }
                Op::Icmp(cc, d, a, b) => {
                    arith!(d, a, b, |x, y| cc.eval(x as u32 as i32, y as u32 as i32) as u64)
                }
                Op::Fcmp(cc, d, a, b) => arith!(d, a, b, |x, y| cc.eval(f(x), f(y)) as u64),
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
                Op::Load(d, a) => {
                    let p = r!(a);
                    r!(d) = load!(p);
                }
                Op::Store(a, v) => {
                    let (p, v) = (r!(a), r!(v));
                    mem_try!(self.mem.store(p, v));
                }
                Op::Gep(d, b, i, scale) => r!(d) = gep(r!(b), r!(i), scale),
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
                    let new_base = base + frame.len();
                    regs.extend_from_slice(&callee.template);
                    for (i, &arg) in prog.args[start as usize..(start + n) as usize].iter().enumerate() {
                        regs[new_base + i] = regs[base + arg as usize];
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
                    if let Err(t) = self.enter(callee.entry_block, prog.blocks[callee.entry_block as usize].steps) {
                        regs.truncate(new_base);
                        self.mem.pop_to(callee_objects, callee_top);
                        stop!(t);
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
                    frame = &mut regs[base..];
                    obj_base = new_obj_base;
                    pc = callee.entry_pc as usize;
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
                                r!(d) = v;
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
                    if cc.eval(x as u32 as i32, y as u32 as i32) {
                        take_edge!(t)
                    } else {
                        take_edge!(e)
                    }
                }
                Op::Ret(v) => {
                    let value = if v == NO_REG { 0 } else { r!(v) };
                    let Some(caller) = self.frames.pop() else {
                        if value & HI != 0 {
                            stop!(trap(TrapKind::UninitRead, "main returned undef"));
                        }
                        return Ok(value as u32);
                    };
                    regs.truncate(base);
                    self.mem.pop_to(caller.callee_objects, caller.callee_top);
                    base = caller.base as usize;
                    frame = &mut regs[base..];
                    obj_base = caller.obj_base;
                    pc = caller.ret_pc as usize;
                    if caller.ret_dst != NO_REG {
                        r!(caller.ret_dst) = value;
                    }
                }
                Op::Unreachable => stop!(trap(TrapKind::MissingReturn, "executed `unreachable`")),
            }
        }
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
                        Some(w) => words.push(w),
                        None => return Err(trap(TrapKind::UninitRead, format!("{} of an uninitialised element", b.source_name()))),
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
        Op::Jump(..) | Op::Br(..) | Op::BrIcmp(..) => CostClass::Branch,
        Op::Call(..) | Op::CallBuiltin(..) | Op::PutF(..) => CostClass::Call,
        Op::Ret(..) => CostClass::Return,
        Op::Alloca(..) | Op::MemZero(..) | Op::Unreachable => CostClass::Other,
    }
}
