//! The executor: walks [`Code`] over one flat word memory.
//!
//! Memory: one vector of 32-bit words (`mem`) and a parallel flag vector (`uninit`). Globals
//! occupy the first words (zeroed, flags clear); frames are stacked above them. Entering a
//! function does not clear its frame: every local is reached only through its declaration,
//! which marks it uninitialised (or initialises it), and parameters are written by the call.
//! An array parameter is a view (start address, words remaining in the underlying object,
//! first dimension), so it aliases the caller's storage by construction.
//!
//! Control: statements return a [`Flow`]; a trap or timeout is recorded in [`Machine::stop`]
//! and travels up as `Err(Halt)`, a zero-sized error, so an evaluation result fits in one
//! register (`Result<u32, Halt>`). Everything rare (calls, runtime library calls — module
//! `builtins` —, trap reports) lives outside [`Machine::eval`] so that the hot recursion keeps
//! a small frame.
//!
//! Recursion: expression evaluation and statement nesting recurse on the Rust stack. The
//! caller runs this on a thread with a large stack, and every call checks both the configured
//! call depth and the stack actually used, so a SysY program can exhaust its budget but never
//! the thread's stack.
//!
//! Budget: each executed statement and each evaluation of a loop condition is one step. The
//! step counter is compared with a single threshold per step; only when it is crossed does the
//! slow path check the step limit and the wall-clock deadline (every [`CHECK_EVERY`] steps).
//!
//! Coverage: with `COV = true` the machine sets one flag per statement id ([`St::id`]) when
//! the statement starts to execute ([`Machine::executed`]). The flag is a const generic
//! parameter, so the ordinary machine (`COV = false`) is compiled without the store.
//!
//! Floating point: `f32` arithmetic, rounded per operation as on the target. Where an
//! operation produces a NaN, the result is made what the target's VFP unit gives (the host's
//! choice of NaN differs; [`sysyc::runtime::vfp`], the rule the IR interpreter follows too).

mod builtins;

use super::InputFailure;
use super::code::*;
use std::time::Instant;
use sysyc::frontend::ast::Span;
use sysyc::runtime::{Io, PutfArg as IoPutfArg, TrapKind, vfp};

/// Steps between two looks at the clock.
pub(super) const CHECK_EVERY: u64 = 1 << 16;

/// Words of stack memory a machine starts with.
const INITIAL_STACK_WORDS: usize = 1 << 12;

/// Why execution stopped early.
#[derive(Debug)]
pub(super) enum Stop {
    Trap {
        kind: TrapKind,
        span: Span,
        detail: String,
    },
    Timeout,
}

/// Execution stopped; the reason is in [`Machine::stop`].
#[derive(Debug)]
pub(super) struct Halt;

type R<T> = Result<T, Halt>;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Flow {
    Next,
    Break,
    Continue,
    Return,
}

/// Evaluates both operands (left first) and applies [`binary`]; only division and remainder
/// can trap (they pass their span).
macro_rules! bin {
    ($m:ident, $op:expr, $a:ident, $b:ident) => {{
        let x = $m.operand($a)?;
        let y = $m.operand($b)?;
        match binary($op, x, y) {
            Ok(v) => v,
            Err(_) => unreachable!("only division and remainder trap"),
        }
    }};
    ($m:ident, $op:expr, $a:ident, $b:ident, $span:expr) => {{
        let x = $m.operand($a)?;
        let y = $m.operand($b)?;
        match binary($op, x, y) {
            Ok(v) => v,
            Err(kind) => return $m.arith_trap(kind, $op, x, y, $span),
        }
    }};
}

/// Limits of one run.
pub(super) struct Limits {
    pub max_steps: u64,
    pub max_depth: u32,
    pub max_words: usize,
    pub deadline: Option<Instant>,
    /// Bytes of Rust stack the run may use below the point where it started.
    pub stack_budget: usize,
    /// What a read the input cannot satisfy does.
    pub input_failure: InputFailure,
}

pub(super) struct Machine<'c, const COV: bool> {
    code: &'c Code,
    /// With `COV`: per statement id, whether it started to execute (else empty).
    pub executed: Vec<bool>,
    mem: Vec<u32>,
    uninit: Vec<bool>,
    /// Words of global memory (the stack starts there).
    globals_end: usize,
    /// Frame pointer and first free word.
    fp: usize,
    sp: usize,
    /// Argument words being collected for calls in progress (LIFO across nested calls).
    args: Vec<u32>,
    putf_args: Vec<IoPutfArg>,
    ret: u32,
    depth: u32,
    pub io: Io,
    pub steps: u64,
    check_at: u64,
    limits: Limits,
    stack_base: usize,
    /// Why execution stopped, once it has.
    pub stop: Option<Stop>,
}

/// An approximation of the stack pointer: the address of a local.
#[inline(always)]
fn stack_position() -> usize {
    let marker = 0u8;
    std::hint::black_box(&marker) as *const u8 as usize
}

impl<'c, const COV: bool> Machine<'c, COV> {
    /// A machine with the globals initialised. Fails if they exceed the memory limit.
    pub fn new(code: &'c Code, stdin: Vec<u8>, limits: Limits) -> Result<Self, u64> {
        let globals = usize::try_from(code.global_words).map_err(|_| code.global_words)?;
        if globals > limits.max_words {
            return Err(code.global_words);
        }
        // A small stack to start with (it doubles as calls need it): most runs use a few
        // hundred words, and the allocation is zeroed on every run.
        let initial = (globals + INITIAL_STACK_WORDS).min(limits.max_words);
        let mut mem = vec![0u32; initial];
        for &(addr, bits) in &code.global_init {
            mem[addr as usize] = bits;
        }
        let mut uninit = vec![false; initial];
        uninit[globals..].fill(true);
        let check_at = limits.max_steps.min(CHECK_EVERY);
        Ok(Machine {
            code,
            executed: if COV {
                vec![false; code.stmt_spans.len()]
            } else {
                Vec::new()
            },
            mem,
            uninit,
            globals_end: globals,
            fp: globals,
            sp: globals,
            args: Vec::new(),
            putf_args: Vec::new(),
            ret: 0,
            depth: 0,
            io: Io::new(stdin),
            steps: 0,
            check_at,
            limits,
            stack_base: stack_position(),
            stop: None,
        })
    }

    /// Runs `main`; returns its value (0 if it falls off its end).
    pub fn run_main(&mut self) -> R<u32> {
        let main = &self.code.funcs[self.code.main as usize];
        let flow = self.enter(main, 0, main.end)?;
        Ok(if flow == Flow::Return { self.ret } else { 0 })
    }

    /// Records a trap; returns the error to propagate.
    #[cold]
    #[inline(never)]
    fn trap<T>(&mut self, kind: TrapKind, span: Span, detail: String) -> R<T> {
        self.stop = Some(Stop::Trap { kind, span, detail });
        Err(Halt)
    }

    #[inline(always)]
    fn step(&mut self, span: Span) -> R<()> {
        self.steps += 1;
        if self.steps > self.check_at {
            self.check_limits(span)
        } else {
            Ok(())
        }
    }

    #[cold]
    #[inline(never)]
    fn check_limits(&mut self, span: Span) -> R<()> {
        if self.steps > self.limits.max_steps {
            self.steps = self.limits.max_steps;
            let detail = format!("step budget of {} exhausted", self.limits.max_steps);
            return self.trap(TrapKind::StepLimit, span, detail);
        }
        if self.limits.deadline.is_some_and(|d| Instant::now() >= d) {
            self.stop = Some(Stop::Timeout);
            return Err(Halt);
        }
        self.check_at = self
            .limits
            .max_steps
            .min(self.steps.saturating_add(CHECK_EVERY));
        Ok(())
    }

    /// Pushes a frame for `f`, copies the argument words `self.args[arg_base..]` into it,
    /// runs the body and pops the frame.
    fn enter(&mut self, f: &'c Func, arg_base: usize, call_span: Span) -> R<Flow> {
        if self.depth >= self.limits.max_depth {
            let detail = format!("call depth limit of {} reached", self.limits.max_depth);
            return self.trap(TrapKind::CallDepth, call_span, detail);
        }
        let used = self.stack_base.saturating_sub(stack_position());
        if used > self.limits.stack_budget {
            let detail = format!("interpreter stack exhausted at call depth {}", self.depth);
            return self.trap(TrapKind::CallDepth, call_span, detail);
        }
        let new_fp = self.sp;
        let new_sp = match usize::try_from(f.frame_words)
            .ok()
            .and_then(|w| w.checked_add(new_fp))
        {
            Some(sp) if sp <= self.limits.max_words => sp,
            _ => {
                let detail = format!(
                    "stack memory exhausted: frame of `{}` needs {} words",
                    f.name, f.frame_words
                );
                return self.trap(TrapKind::CallDepth, call_span, detail);
            }
        };
        if new_sp > self.mem.len() {
            // Double the stack part (not the globals, which may be large).
            let stack_words = self.mem.len() - self.globals_end;
            let len = new_sp
                .max(self.globals_end + 2 * stack_words)
                .min(self.limits.max_words);
            self.mem.resize(len, 0);
            self.uninit.resize(len, true);
        }
        // Word by word: functions have few parameters, for which calls of `memcpy` and
        // `memset` cost more than the copying itself.
        let params = new_fp..new_fp + f.param_words as usize;
        let args = &self.args[arg_base..];
        assert_eq!(args.len(), params.len(), "argument words of `{}`", f.name);
        for (a, &w) in params.zip(args) {
            self.mem[a] = w;
            self.uninit[a] = false;
        }
        self.args.truncate(arg_base);
        let saved_fp = self.fp;
        self.fp = new_fp;
        self.sp = new_sp;
        self.depth += 1;
        let flow = self.block(&f.body)?;
        self.depth -= 1;
        self.sp = new_fp;
        self.fp = saved_fp;
        Ok(flow)
    }

    #[inline(never)]
    fn call(&mut self, c: &'c Call) -> R<u32> {
        let arg_base = self.args.len();
        for a in c.args.iter() {
            match a {
                Arg::Scalar(e) => {
                    let v = self.operand(e)?;
                    self.args.push(v);
                }
                Arg::View {
                    access,
                    param_stride,
                } => {
                    let (addr, remaining) = self.locate(access)?;
                    let rows = remaining / *param_stride as usize;
                    self.args
                        .extend_from_slice(&[addr as u32, remaining as u32, rows as u32]);
                }
            }
        }
        let f = &self.code.funcs[c.func as usize];
        match self.enter(f, arg_base, c.span)? {
            Flow::Return => Ok(self.ret),
            // `main` falling off its end returns 0, also when the program calls it itself
            // (the same rule gcc applies to every call of `main`).
            _ if c.func == self.code.main => Ok(0),
            _ if f.returns_value => {
                let detail = format!("`{}` ended without returning a value", f.name);
                self.trap(TrapKind::MissingReturn, f.end, detail)
            }
            _ => Ok(0),
        }
    }

    fn block(&mut self, stmts: &'c [St]) -> R<Flow> {
        for s in stmts {
            let flow = self.stmt(s)?;
            if flow != Flow::Next {
                return Ok(flow);
            }
        }
        Ok(Flow::Next)
    }

    fn stmt(&mut self, s: &'c St) -> R<Flow> {
        self.step(s.span)?;
        if COV {
            self.cover(s);
        }
        match &s.kind {
            StKind::Assign { target, value } => {
                let a = match target {
                    Target::Local { off } => self.fp + *off as usize,
                    Target::Global { addr } => *addr as usize,
                    Target::Elem(access) => self.element(access)?,
                };
                let v = self.operand(value)?;
                self.store(a, v);
            }
            // Expression statements are mostly calls: straight to them, not through `eval`.
            StKind::Expr(Ex::Call(c)) => {
                self.call(c)?;
            }
            StKind::Expr(Ex::Builtin(b)) => {
                self.builtin(b)?;
            }
            StKind::Expr(e) => {
                self.eval(e)?;
            }
            StKind::Block(b) => return self.block(b),
            StKind::If {
                cond,
                then_branch,
                else_branch,
            } => {
                if self.operand(cond)? != 0 {
                    return self.nested(then_branch);
                } else if let Some(e) = else_branch {
                    return self.nested(e);
                }
            }
            StKind::While { cond, body } => loop {
                self.step(s.span)?;
                if self.operand(cond)? == 0 {
                    break;
                }
                match self.nested(body)? {
                    Flow::Break => break,
                    Flow::Return => return Ok(Flow::Return),
                    Flow::Next | Flow::Continue => {}
                }
            },
            StKind::Break => return Ok(Flow::Break),
            StKind::Continue => return Ok(Flow::Continue),
            StKind::Return(v) => {
                self.ret = match v {
                    Some(e) => self.operand(e)?,
                    None => 0,
                };
                return Ok(Flow::Return);
            }
            StKind::Skip { rest } => self.skip(rest)?,
            StKind::Decl { .. } | StKind::DeclScalar { .. } | StKind::DeclArray { .. } => {
                self.decl(&s.kind)?
            }
        }
        Ok(Flow::Next)
    }

    /// [`Machine::stmt`] of a branch or loop body, with a block (the usual body) run in place:
    /// its step and coverage, then its statements, as `stmt` would do them, one recursion
    /// level less.
    #[inline(always)]
    fn nested(&mut self, s: &'c St) -> R<Flow> {
        match &s.kind {
            StKind::Block(b) => {
                self.step(s.span)?;
                if COV {
                    self.cover(s);
                }
                self.block(b)
            }
            _ => self.stmt(s),
        }
    }

    /// Marks `s` executed (and the declarations a [`StKind::Skip`] stands for). One store for
    /// every other statement: filling a one-element range would call `memset`.
    #[inline(always)]
    fn cover(&mut self, s: &St) {
        let first = s.id as usize;
        match &s.kind {
            StKind::Skip { rest } => self.executed[first..=first + rest.len()].fill(true),
            _ => self.executed[first] = true,
        }
    }

    /// The steps of declarations without effect: counted in one go, unless the step budget
    /// ends among them — then one by one, so the trap has the exact location.
    #[inline(never)]
    fn skip(&mut self, rest: &[Span]) -> R<()> {
        let Some(&last) = rest.last() else {
            return Ok(());
        };
        let n = rest.len() as u64;
        if self.steps.saturating_add(n) > self.limits.max_steps {
            return rest.iter().try_for_each(|&span| self.step(span));
        }
        self.steps += n;
        if self.steps > self.check_at {
            self.check_limits(last)
        } else {
            Ok(())
        }
    }

    #[inline(never)]
    fn decl(&mut self, kind: &'c StKind) -> R<()> {
        match kind {
            StKind::Decl { off, len } => {
                let start = self.fp + *off as usize;
                // Most declarations are scalars: one store instead of a call of `memset`.
                if *len == 1 {
                    self.uninit[start] = true;
                } else {
                    self.uninit[start..start + *len as usize].fill(true);
                }
            }
            StKind::DeclScalar { off, value } => {
                let a = self.fp + *off as usize;
                self.uninit[a] = true;
                let v = self.operand(value)?;
                self.store(a, v);
            }
            StKind::DeclArray { off, len, elems } => {
                let start = self.fp + *off as usize;
                let words = start..start + *len as usize;
                self.mem[words.clone()].fill(0);
                self.uninit[words].fill(false);
                for (i, e) in elems.iter() {
                    let v = self.operand(e)?;
                    self.mem[start + *i as usize] = v;
                }
            }
            _ => {}
        }
        Ok(())
    }

    #[inline(always)]
    fn store(&mut self, addr: usize, v: u32) {
        self.mem[addr] = v;
        self.uninit[addr] = false;
    }

    #[inline(always)]
    fn load(&mut self, addr: usize, span: Span) -> R<u32> {
        if self.uninit[addr] {
            return self.uninit_read(span);
        }
        Ok(self.mem[addr])
    }

    /// The trap of [`Machine::load`], out of line so that the many places `load` is inlined
    /// into stay small (building the detail string needs registers and stack).
    #[cold]
    #[inline(never)]
    fn uninit_read(&mut self, span: Span) -> R<u32> {
        self.trap(
            TrapKind::UninitRead,
            span,
            "read of an uninitialised value".into(),
        )
    }

    /// Evaluates and checks the indices of `a`: the address they reach and the words from
    /// there to the end of the underlying object (for views).
    fn locate(&mut self, a: &'c Access) -> R<(usize, usize)> {
        let (start, len, rows) = self.base(a.base);
        let addr = self.index(a, start, rows)?;
        Ok((addr, start + len - addr))
    }

    /// The address of the element (or row) `a` names, after checking its indices. The hot
    /// path of every array access; unlike [`Machine::locate`] its result fits in registers.
    #[inline]
    fn element(&mut self, a: &'c Access) -> R<usize> {
        let (start, _, rows) = self.base(a.base);
        self.index(a, start, rows)
    }

    /// Start address, words and first dimension of the array `base` refers to.
    #[inline(always)]
    fn base(&self, base: ArrayBase) -> (usize, usize, u32) {
        match base {
            ArrayBase::Global { addr, len } => (addr as usize, len as usize, 0),
            ArrayBase::Local { off, len } => (self.fp + off as usize, len as usize, 0),
            ArrayBase::Param { off } => {
                let v = self.fp + off as usize;
                (
                    self.mem[v] as usize,
                    self.mem[v + 1] as usize,
                    self.mem[v + 2],
                )
            }
        }
    }

    /// `start` advanced by the checked indices of `a` (`rows` bounds a parameter's first).
    #[inline(always)]
    fn index(&mut self, a: &'c Access, start: usize, rows: u32) -> R<usize> {
        let mut addr = start;
        for (level, step) in a.steps.iter().enumerate() {
            let i = self.operand(&step.index)? as i32;
            let bound = if step.bound != 0 { step.bound } else { rows };
            if i < 0 || i as u32 >= bound {
                return self.out_of_bounds(i, level, bound, step.span);
            }
            addr += i as usize * step.stride as usize;
        }
        Ok(addr)
    }

    /// The trap of [`Machine::index`] (out of line, like [`Machine::uninit_read`]).
    #[cold]
    #[inline(never)]
    fn out_of_bounds(&mut self, i: i32, level: usize, bound: u32, span: Span) -> R<usize> {
        let detail = format!("index {i} out of bounds for dimension {level} of size {bound}");
        self.trap(TrapKind::OutOfBounds, span, detail)
    }

    /// [`Machine::eval`] with the leaves (constants and scalar variables) handled in line:
    /// most operands are leaves, and a direct test is much cheaper than a dispatch.
    #[inline(always)]
    fn operand(&mut self, e: &'c Ex) -> R<u32> {
        match e {
            Ex::Const(v) => Ok(*v),
            Ex::Local { off, span } => self.load(self.fp + *off as usize, *span),
            Ex::Global { addr } => Ok(self.mem[*addr as usize]),
            Ex::Pair(p) => self.pair(p),
            _ => self.eval(e),
        }
    }

    fn eval(&mut self, e: &'c Ex) -> R<u32> {
        Ok(match e {
            Ex::Const(v) => *v,
            Ex::Local { off, span } => self.load(self.fp + *off as usize, *span)?,
            Ex::Global { addr } => self.mem[*addr as usize],
            Ex::AddI(a, b) => bin!(self, Op::AddI, a, b),
            Ex::SubI(a, b) => bin!(self, Op::SubI, a, b),
            Ex::MulI(a, b) => bin!(self, Op::MulI, a, b),
            Ex::DivI(a, b, span) => bin!(self, Op::DivI, a, b, *span),
            Ex::ModI(a, b, span) => bin!(self, Op::ModI, a, b, *span),
            Ex::LtI(a, b) => bin!(self, Op::LtI, a, b),
            Ex::GtI(a, b) => bin!(self, Op::GtI, a, b),
            Ex::LeI(a, b) => bin!(self, Op::LeI, a, b),
            Ex::GeI(a, b) => bin!(self, Op::GeI, a, b),
            Ex::EqI(a, b) => bin!(self, Op::EqI, a, b),
            Ex::NeI(a, b) => bin!(self, Op::NeI, a, b),
            Ex::AddF(a, b) => bin!(self, Op::AddF, a, b),
            Ex::SubF(a, b) => bin!(self, Op::SubF, a, b),
            Ex::MulF(a, b) => bin!(self, Op::MulF, a, b),
            Ex::DivF(a, b) => bin!(self, Op::DivF, a, b),
            Ex::LtF(a, b) => bin!(self, Op::LtF, a, b),
            Ex::GtF(a, b) => bin!(self, Op::GtF, a, b),
            Ex::LeF(a, b) => bin!(self, Op::LeF, a, b),
            Ex::GeF(a, b) => bin!(self, Op::GeF, a, b),
            Ex::EqF(a, b) => bin!(self, Op::EqF, a, b),
            Ex::NeF(a, b) => bin!(self, Op::NeF, a, b),
            Ex::Elem(a) => {
                let addr = self.element(a)?;
                self.load(addr, a.span)?
            }
            Ex::Call(c) => self.call(c)?,
            Ex::Builtin(b) => self.builtin(b)?,
            Ex::NegI(a) => (self.operand(a)? as i32).wrapping_neg() as u32,
            Ex::NegF(a) => self.operand(a)? ^ 0x8000_0000,
            Ex::Not(a) => (self.operand(a)? == 0) as u32,
            Ex::And(a, b) => (self.operand(a)? != 0 && self.operand(b)? != 0) as u32,
            Ex::Or(a, b) => (self.operand(a)? != 0 || self.operand(b)? != 0) as u32,
            Ex::Chain(c) => self.chain(c)?,
            Ex::Pair(p) => self.pair(p)?,
            Ex::IntToFloat(a) => (self.operand(a)? as i32 as f32).to_bits(),
            Ex::FloatToInt(a, span) => {
                let f = f32::from_bits(self.operand(a)?);
                // The int range is [-2^31, 2^31); NaN fails both comparisons.
                if !(-2147483648.0..2147483648.0).contains(&f) {
                    return self.float_to_int_range(f, *span);
                }
                f as i32 as u32
            }
        })
    }

    /// A [`Pair`]: both leaves read (left first), then the operation. No recursion, so this
    /// needs none of the saved registers and stack of [`Machine::eval`].
    #[inline(never)]
    fn pair(&mut self, p: &'c Pair) -> R<u32> {
        let x = self.leaf(p.a)?;
        let y = self.leaf(p.b)?;
        match binary(p.op, x, y) {
            Ok(v) => Ok(v),
            Err(kind) => self.arith_trap(kind, p.op, x, y, p.span),
        }
    }

    #[inline(always)]
    fn leaf(&mut self, l: Leaf) -> R<u32> {
        match l {
            Leaf::Const(v) => Ok(v),
            Leaf::Local { off, span } => self.load(self.fp + off as usize, span),
            Leaf::Global { addr } => Ok(self.mem[addr as usize]),
        }
    }

    #[inline(never)]
    fn chain(&mut self, c: &'c Chain) -> R<u32> {
        let mut acc = self.operand(&c.first)?;
        for link in c.links.iter() {
            let y = self.operand(&link.rhs)?;
            acc = match binary(link.op, acc, y) {
                Ok(v) => v,
                Err(kind) => return self.arith_trap(kind, link.op, acc, y, link.span),
            };
        }
        Ok(acc)
    }

    /// The trap of a float→int conversion (out of line, like [`Machine::uninit_read`]).
    #[cold]
    #[inline(never)]
    fn float_to_int_range(&mut self, f: f32, span: Span) -> R<u32> {
        self.trap(
            TrapKind::FloatToIntRange,
            span,
            format!("{f:?} does not fit in an int"),
        )
    }

    #[cold]
    #[inline(never)]
    fn arith_trap(&mut self, kind: TrapKind, op: Op, x: u32, y: u32, span: Span) -> R<u32> {
        let sym = if op == Op::DivI { '/' } else { '%' };
        let (a, b) = (x as i32, y as i32);
        let detail = match kind {
            TrapKind::DivOverflow => format!("{a} {sym} {b} overflows"),
            _ => format!("{a} {sym} {b}"),
        };
        self.trap(kind, span, detail)
    }
}

/// One binary operation on words; `Err` for the two integer-division traps.
#[inline(always)]
fn binary(op: Op, x: u32, y: u32) -> Result<u32, TrapKind> {
    let (a, b) = (x as i32, y as i32);
    let (f, g) = (f32::from_bits(x), f32::from_bits(y));
    Ok(match op {
        Op::AddI => a.wrapping_add(b) as u32,
        Op::SubI => a.wrapping_sub(b) as u32,
        Op::MulI => a.wrapping_mul(b) as u32,
        Op::DivI | Op::ModI => {
            if b == 0 {
                return Err(TrapKind::DivByZero);
            }
            if a == i32::MIN && b == -1 {
                return Err(TrapKind::DivOverflow);
            }
            if op == Op::DivI {
                (a / b) as u32
            } else {
                (a % b) as u32
            }
        }
        Op::LtI => (a < b) as u32,
        Op::GtI => (a > b) as u32,
        Op::LeI => (a <= b) as u32,
        Op::GeI => (a >= b) as u32,
        Op::EqI => (a == b) as u32,
        Op::NeI => (a != b) as u32,
        Op::AddF => vfp::result_bits(f + g, f, g),
        Op::SubF => vfp::result_bits(f - g, f, g),
        Op::MulF => vfp::result_bits(f * g, f, g),
        Op::DivF => vfp::result_bits(f / g, f, g),
        Op::LtF => (f < g) as u32,
        Op::GtF => (f > g) as u32,
        Op::LeF => (f <= g) as u32,
        Op::GeF => (f >= g) as u32,
        Op::EqF => (f == g) as u32,
        Op::NeF => (f != g) as u32,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_division_follows_c() {
        let div = |a: i32, b: i32| binary(Op::DivI, a as u32, b as u32).map(|v| v as i32);
        let rem = |a: i32, b: i32| binary(Op::ModI, a as u32, b as u32).map(|v| v as i32);
        assert_eq!(div(-7, 2), Ok(-3));
        assert_eq!(rem(-7, 2), Ok(-1));
        assert_eq!(rem(7, -2), Ok(1));
        assert_eq!(div(i32::MIN, 1), Ok(i32::MIN));
        assert_eq!(div(1, 0), Err(TrapKind::DivByZero));
        assert_eq!(rem(1, 0), Err(TrapKind::DivByZero));
        assert_eq!(div(i32::MIN, -1), Err(TrapKind::DivOverflow));
        assert_eq!(rem(i32::MIN, -1), Err(TrapKind::DivOverflow));
    }
}
