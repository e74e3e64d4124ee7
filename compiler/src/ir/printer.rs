//! The textual form of the IR, read back by [`super::parser`].
//!
//! Printing is canonical: values are numbered `%0, %1, ...` in definition order (parameters,
//! then instruction results in layout order) and blocks `bb0, bb1, ...` in layout order, so
//! print → parse → print reproduces the text byte for byte. (The parser also accepts any
//! other names, e.g. `%sum` or `loop:`.)
//!
//! ```text
//! global @a: i32 x 100 = zero
//! global const @c: i32 x 4 = {0: 1, 1: 2, 3: 7}
//! global @f: f32 x 1 = {0: 1.5}
//! string $0 = "x=%d\n"
//!
//! func @main(%0: i32, %1: ptr) -> i32 {
//! bb0:
//!     %2 = alloca i32 x 10
//!     %3 = add i32 %0, 5
//!     store %3 -> %2
//!     %4 = load i32 %2
//!     %5 = gep %2, %3 * 4
//!     %6 = icmp lt %3, %4
//!     br %6, bb1, bb2
//! bb1:
//!     %7 = phi i32 [bb0: %3], [bb2: %4]
//!     %8 = call i32 @foo(%3, 3.5)
//!     %9 = call i32 getint()
//!     call putf $0(%3)
//!     memzero %2, 10
//!     jump bb2
//! bb2:
//!     ret %7
//! }
//! ```
//!
//! Rules:
//! * One item or instruction per line; `;` starts a comment.
//! * `global [const] @name: <elem> x <words> = zero | {index: const, ...}` (sparse, sorted).
//!   `string $n = "..."` with C-like escapes (`\n \t \r \0 \\ \" \xHH`).
//! * `func @name(%p: type, ...) -> type {` — the return type is always printed (`void` too).
//! * An instruction producing a value starts with `%n =`. Its result type follows the
//!   mnemonic unless the mnemonic fixes it: `icmp`/`fcmp` (i1), `zext`/`fptosi` (i32),
//!   `sitofp` (f32), `alloca`/`gep` (ptr). Binary arithmetic, `fneg`, `select`, `load`,
//!   `call` and `phi` print it (`add i32`, `load f32`, `call i32 @f(...)`).
//! * `store <value> -> <addr>` (the IR keeps the operands as `[addr, value]`);
//!   `gep <base>, <index> * <scale>` is `base + index·scale` bytes; `memzero <addr>, <words>`.
//! * Calls: `call [type] @func(...)` for module functions, `call [type] getint()` for the
//!   runtime library (source names), `call putf $n(...)` for `putf` with string `$n`.
//! * `phi <type> [bbX: v], ...` lists one entry per incoming edge.
//! * Operands: `%n`; i32 decimal; f32 as Rust's shortest round-trip text, which always has a
//!   `.` or an exponent (`1.5`, `-0.0`, `1e-45`), or `inf`/`-inf`, or the bit pattern
//!   `f32:0x7fc00000` (always used for NaNs, so payloads survive); i1 `true`/`false`;
//!   `undef:<type>`; `@global` (its address).
//! * Names that are not plain identifiers (`[A-Za-z_][A-Za-z0-9_.]*`) are quoted: `@"a b"`.
//!
//! Malformed IR (for verifier messages) still prints: values with no number show as
//! `%?v7`, blocks outside the layout as `bb?3`, and instructions with the wrong number of
//! operands in a generic `!malformed` form. Such text does not parse back.

use std::fmt::{self, Write};

use cranelift_entity::{EntityRef, SecondaryMap};

use super::entities::{Block, FuncRef, Inst, Value};
use super::function::{Const, Function, ValueDef};
use super::instr::{Callee, Opcode};
use super::module::Module;
use super::types::Type;

const UNNUMBERED: u32 = u32::MAX;

/// The canonical numbering of a function's values and blocks.
#[derive(Clone, Debug)]
pub struct Names {
    values: SecondaryMap<Value, u32>,
    blocks: SecondaryMap<Block, u32>,
}

impl Names {
    pub fn new(func: &Function) -> Names {
        let mut values = SecondaryMap::with_default(UNNUMBERED);
        let mut blocks = SecondaryMap::with_default(UNNUMBERED);
        let mut next = 0u32;
        for &p in &func.params {
            values[p] = next;
            next += 1;
        }
        for (i, &b) in func.layout().iter().enumerate() {
            blocks[b] = i as u32;
            for inst in func.block_insts(b) {
                if let Some(v) = func.result(inst) {
                    values[v] = next;
                    next += 1;
                }
            }
        }
        Names { values, blocks }
    }

    /// The number `n` of `%n`, if the value is a parameter or a placed instruction's result.
    pub fn value(&self, v: Value) -> Option<u32> {
        let n = self.values[v];
        (n != UNNUMBERED).then_some(n)
    }

    /// The number `n` of `bbn`, if the block is in the layout.
    pub fn block(&self, b: Block) -> Option<u32> {
        let n = self.blocks[b];
        (n != UNNUMBERED).then_some(n)
    }

    pub fn block_name(&self, b: Block) -> String {
        BlockName(self, b).to_string()
    }
}

// The text is written through `Display` adapters straight into the output, rather than as
// one `String` per operand and instruction: the campaign prints every optimised module to
// hash it, and those small strings were most of the printing's cost.

/// `bbN`, or `bb?I` for a block outside the layout.
struct BlockName<'a>(&'a Names, Block);

impl fmt::Display for BlockName<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0.block(self.1) {
            Some(n) => write!(f, "bb{n}"),
            None => write!(f, "bb?{}", self.1.index()),
        }
    }
}

/// An operand as it appears in the text (see [`value_to_string`]).
struct Operand<'a> {
    module: &'a Module,
    func: &'a Function,
    names: &'a Names,
    value: Value,
}

impl fmt::Display for Operand<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (func, v) = (self.func, self.value);
        if v.index() >= func.num_values() {
            return write!(f, "%?{v}");
        }
        match func.value_def(v) {
            ValueDef::Inst(_) | ValueDef::Param(_) => match self.names.value(v) {
                Some(n) => write!(f, "%{n}"),
                None => write!(f, "%?{v}"),
            },
            ValueDef::Const(c) => write!(f, "{}", ConstText(c)),
            ValueDef::Global(g) => match self.module.globals.get(g) {
                Some(data) => write!(f, "@{}", NameText(&data.name)),
                None => write!(f, "@?{g}"),
            },
            ValueDef::Undef => write!(f, "undef:{}", func.value_type(v)),
        }
    }
}

/// [`format_const`]'s text.
struct ConstText(Const);

impl fmt::Display for ConstText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Const::Bool(b) => write!(f, "{b}"),
            Const::Int(i) => write!(f, "{i}"),
            Const::Float(bits) => {
                let x = f32::from_bits(bits);
                if x.is_nan() {
                    write!(f, "f32:0x{bits:08x}")
                } else if x.is_infinite() {
                    f.write_str(if x < 0.0 { "-inf" } else { "inf" })
                } else {
                    write!(f, "{x:?}")
                }
            }
        }
    }
}

/// A name after `@`: as it is when plain, else quoted (see [`quote_bytes`]).
struct NameText<'a>(&'a str);

impl fmt::Display for NameText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if is_plain_name(self.0) { f.write_str(self.0) } else { write!(f, "{}", QuotedBytes(self.0.as_bytes())) }
    }
}

/// [`quote_bytes`]'s text.
struct QuotedBytes<'a>(&'a [u8]);

impl fmt::Display for QuotedBytes<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_char('"')?;
        for &b in self.0 {
            match b {
                b'\n' => f.write_str("\\n")?,
                b'\t' => f.write_str("\\t")?,
                b'\r' => f.write_str("\\r")?,
                0 => f.write_str("\\0")?,
                b'\\' => f.write_str("\\\\")?,
                b'"' => f.write_str("\\\"")?,
                0x20..=0x7e => f.write_char(b as char)?,
                _ => write!(f, "\\x{b:02x}")?,
            }
        }
        f.write_char('"')
    }
}

/// The whole module: globals, strings, then functions, each function preceded by a blank line.
pub fn print_module(module: &Module) -> String {
    let mut out = String::new();
    for (_, g) in module.globals.iter() {
        out.push_str("global ");
        if g.is_const {
            out.push_str("const ");
        }
        let _ = write!(out, "@{}: {} x {} = ", NameText(&g.name), g.elem, g.words);
        if g.init.is_empty() {
            out.push_str("zero");
        } else {
            out.push('{');
            for (i, &(idx, c)) in g.init.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                let _ = write!(out, "{idx}: {}", ConstText(c));
            }
            out.push('}');
        }
        out.push('\n');
    }
    for (id, s) in module.strings.iter() {
        let _ = writeln!(out, "string ${} = {}", id.index(), QuotedBytes(s));
    }
    for (f, _) in module.funcs() {
        if !out.is_empty() {
            out.push('\n');
        }
        write_function(&mut out, module, f);
    }
    out
}

/// One function of `module`.
pub fn print_function(module: &Module, f: FuncRef) -> String {
    let mut out = String::new();
    write_function(&mut out, module, f);
    out
}

/// A function given directly (e.g. while taken out of `module` by a pass); `module` supplies
/// the names of globals, callees and strings.
pub fn function_to_string(module: &Module, func: &Function) -> String {
    let mut out = String::new();
    write_function_body(&mut out, module, func);
    out
}

fn write_function(out: &mut String, module: &Module, f: FuncRef) {
    write_function_body(out, module, module.func(f));
}

fn write_function_body(out: &mut String, module: &Module, func: &Function) {
    let names = Names::new(func);
    let operand = |value: Value| Operand { module, func, names: &names, value };
    let _ = write!(out, "func @{}(", NameText(&func.name));
    for (i, &p) in func.params.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        let _ = write!(out, "{}: {}", operand(p), func.value_type(p));
    }
    let _ = writeln!(out, ") -> {} {{", func.ret);
    for &b in func.layout() {
        let _ = writeln!(out, "{}:", BlockName(&names, b));
        for inst in func.block_insts(b) {
            out.push_str("    ");
            write_inst(out, module, func, &names, inst);
            out.push('\n');
        }
    }
    out.push_str("}\n");
}

/// An operand as it appears in the text.
pub fn value_to_string(module: &Module, func: &Function, names: &Names, v: Value) -> String {
    Operand { module, func, names, value: v }.to_string()
}

/// A constant as an operand: `-3`, `1.5`, `f32:0x7fc00000`, `true`.
pub fn format_const(c: Const) -> String {
    ConstText(c).to_string()
}

/// An f32 that parses back to the same bits: Rust's shortest round-trip form (always with a
/// `.` or an exponent), `inf`/`-inf`, or `f32:0x...` for NaNs.
pub fn format_f32_bits(bits: u32) -> String {
    ConstText(Const::Float(bits)).to_string()
}

/// `[A-Za-z_][A-Za-z0-9_.]*`: printed without quotes after `@`.
pub fn is_plain_name(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
}

/// A double-quoted literal with `\n \t \r \0 \\ \"` and `\xHH` for other non-printable bytes.
pub fn quote_bytes(bytes: &[u8]) -> String {
    QuotedBytes(bytes).to_string()
}

/// The result type an opcode implies (and whose text therefore omits it).
pub fn implied_result_type(op: Opcode) -> Option<Type> {
    Some(match op {
        Opcode::Icmp(_) | Opcode::Fcmp(_) => Type::I1,
        Opcode::Zext | Opcode::FpToSi => Type::I32,
        Opcode::SiToFp => Type::F32,
        Opcode::Alloca { .. } | Opcode::Gep { .. } => Type::Ptr,
        Opcode::Store | Opcode::MemZero { .. } | Opcode::Jump | Opcode::Br | Opcode::Ret | Opcode::Unreachable => {
            Type::Void
        }
        _ => return None,
    })
}

/// Fixed `(value operands, block operands)` of an opcode; `None` for variable ones.
fn fixed_shape(op: Opcode) -> Option<(usize, usize)> {
    Some(match op {
        _ if op.is_binary_arith() => (2, 0),
        Opcode::Icmp(_) | Opcode::Fcmp(_) | Opcode::Store | Opcode::Gep { .. } => (2, 0),
        Opcode::FNeg | Opcode::Zext | Opcode::SiToFp | Opcode::FpToSi | Opcode::Load => (1, 0),
        Opcode::MemZero { .. } => (1, 0),
        Opcode::Select => (3, 0),
        Opcode::Alloca { .. } | Opcode::Unreachable => (0, 0),
        Opcode::Jump => (0, 1),
        Opcode::Br => (1, 2),
        _ => return None,
    })
}

/// One instruction, without indentation or newline.
pub fn inst_to_string(module: &Module, func: &Function, names: &Names, inst: Inst) -> String {
    let mut s = String::new();
    write_inst(&mut s, module, func, names, inst);
    s
}

/// [`inst_to_string`], appended to `s`.
fn write_inst(s: &mut String, module: &Module, func: &Function, names: &Names, inst: Inst) {
    let data = func.inst(inst);
    let v = |value: Value| Operand { module, func, names, value };
    let block = |b: Block| BlockName(names, b);
    if let Some(r) = func.result(inst) {
        let _ = write!(s, "{} = ", v(r));
    }
    let args = &data.args;
    let targets = &data.targets;
    let well_formed = match (data.op, fixed_shape(data.op)) {
        (Opcode::Phi, _) => args.len() == targets.len(),
        (Opcode::Call(_), _) => targets.is_empty(),
        (Opcode::Ret, _) => args.len() <= 1 && targets.is_empty(),
        (_, Some((a, t))) => args.len() == a && targets.len() == t,
        (_, None) => false,
    };
    if !well_formed {
        let _ = write!(s, "{} !malformed {} (", data.op.mnemonic(), data.ty);
        for (i, &a) in args.iter().enumerate() {
            let _ = write!(s, "{}{}", if i > 0 { ", " } else { "" }, v(a));
        }
        s.push_str(") [");
        for (i, &b) in targets.iter().enumerate() {
            let _ = write!(s, "{}{}", if i > 0 { ", " } else { "" }, block(b));
        }
        s.push(']');
        return;
    }
    let mnemonic = data.op.mnemonic();
    match data.op {
        op if op.is_binary_arith() => {
            let _ = write!(s, "{mnemonic} {} {}, {}", data.ty, v(args[0]), v(args[1]));
        }
        Opcode::FNeg => {
            let _ = write!(s, "fneg {} {}", data.ty, v(args[0]));
        }
        Opcode::Icmp(cc) => {
            let _ = write!(s, "icmp {} {}, {}", cc.name(), v(args[0]), v(args[1]));
        }
        Opcode::Fcmp(cc) => {
            let _ = write!(s, "fcmp {} {}, {}", cc.name(), v(args[0]), v(args[1]));
        }
        Opcode::Zext | Opcode::SiToFp | Opcode::FpToSi => {
            let _ = write!(s, "{mnemonic} {}", v(args[0]));
        }
        Opcode::Select => {
            let _ = write!(s, "select {} {}, {}, {}", data.ty, v(args[0]), v(args[1]), v(args[2]));
        }
        Opcode::Alloca { elem, count } => {
            let _ = write!(s, "alloca {elem} x {count}");
        }
        Opcode::Load => {
            let _ = write!(s, "load {} {}", data.ty, v(args[0]));
        }
        Opcode::Store => {
            let _ = write!(s, "store {} -> {}", v(args[1]), v(args[0]));
        }
        Opcode::Gep { scale } => {
            let _ = write!(s, "gep {}, {} * {scale}", v(args[0]), v(args[1]));
        }
        Opcode::MemZero { words } => {
            let _ = write!(s, "memzero {}, {words}", v(args[0]));
        }
        Opcode::Call(callee) => {
            s.push_str("call ");
            if !data.ty.is_void() {
                let _ = write!(s, "{} ", data.ty);
            }
            match callee {
                Callee::Func(f) if module.is_live(f) => {
                    let _ = write!(s, "@{}", NameText(&module.func(f).name));
                }
                Callee::Func(f) => {
                    let _ = write!(s, "@?{f}");
                }
                Callee::Builtin(b) => s.push_str(b.source_name()),
                Callee::PutF(id) => {
                    let _ = write!(s, "putf ${}", id.index());
                }
            }
            s.push('(');
            for (i, &a) in args.iter().enumerate() {
                let _ = write!(s, "{}{}", if i > 0 { ", " } else { "" }, v(a));
            }
            s.push(')');
        }
        Opcode::Phi => {
            let _ = write!(s, "phi {}", data.ty);
            for (i, (&b, &a)) in targets.iter().zip(args.iter()).enumerate() {
                s.push_str(if i == 0 { " " } else { ", " });
                let _ = write!(s, "[{}: {}]", block(b), v(a));
            }
        }
        Opcode::Jump => {
            let _ = write!(s, "jump {}", block(targets[0]));
        }
        Opcode::Br => {
            let _ = write!(
                s,
                "br {}, {}, {}",
                v(args[0]),
                block(targets[0]),
                block(targets[1])
            );
        }
        Opcode::Ret => {
            s.push_str("ret");
            if let Some(&a) = args.first() {
                let _ = write!(s, " {}", v(a));
            }
        }
        Opcode::Unreachable => s.push_str("unreachable"),
        _ => s.push_str(mnemonic),
    }
    if let Some(implied) = implied_result_type(data.op)
        && implied != data.ty
    {
        let _ = write!(s, " ; result type {} (malformed)", data.ty);
    }
}
