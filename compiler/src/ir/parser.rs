//! Parses the textual IR (syntax in [`super::printer`]) back into a [`Module`].
//!
//! Two phases. The syntax phase reads every item into small syntax records, so functions
//! may call functions defined later and phis may name values defined later. The build phase
//! creates all function shells (name and signature) first, then fills each body in two
//! passes: every instruction is created and placed with its block operands but no value
//! operands — which gives every `%name` its value — and then each instruction receives its
//! operands through [`Function::replace_inst`], which keeps the use lists exact.
//!
//! The parser checks syntax and names (undefined or duplicate values, blocks, functions,
//! globals and strings) and that an instruction has a `%name =` exactly when it produces a
//! value. Everything else — types, operand rules, dominance — is the verifier's business, so
//! malformed-but-parsable IR can be written down for tests. Errors are `line:col: message`;
//! no input makes it panic.

mod lexer;

use std::fmt;

use rustc_hash::FxHashMap;

use self::lexer::{Pos, Tok, Token};
use super::entities::{Block, FuncRef, GlobalRef, StrId, Value};
use super::function::{Const, Function};
use super::instr::{Callee, FloatCC, InstData, IntCC, Opcode};
use super::module::{GlobalData, Module};
use super::printer::implied_result_type;
use super::types::Type;
use crate::frontend::hir::Builtin;

/// A parse error at a 1-based line and column.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub line: u32,
    pub col: u32,
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.col, self.message)
    }
}

impl std::error::Error for ParseError {}

fn error(pos: Pos, message: impl Into<String>) -> ParseError {
    ParseError { line: pos.line, col: pos.col, message: message.into() }
}

/// Parses a whole module.
pub fn parse_module(text: &str) -> Result<Module, ParseError> {
    let tokens = lexer::tokenize(text)?;
    let mut p = Parser { tokens, i: 0, module: Module::new(), strings: FxHashMap::default(), funcs: Vec::new() };
    p.items()?;
    let Parser { mut module, strings, funcs, .. } = p;
    build(&mut module, &strings, funcs)?;
    Ok(module)
}

// ----- syntax records ---------------------------------------------------------------------------

enum OperandKind {
    Local(String),
    Global(String),
    Const(Const),
    Undef(Type),
}

struct Operand {
    kind: OperandKind,
    pos: Pos,
}

enum CalleeSyntax {
    Func(String),
    Builtin(Builtin),
    PutF(u32),
}

struct InstSyntax {
    result: Option<(String, Pos)>,
    /// For calls the callee inside is a placeholder; the real one is `callee`.
    op: Opcode,
    callee: Option<(CalleeSyntax, Pos)>,
    ty: Type,
    args: Vec<Operand>,
    targets: Vec<(String, Pos)>,
}

struct BlockSyntax {
    name: String,
    pos: Pos,
    insts: Vec<InstSyntax>,
}

struct FuncSyntax {
    name: String,
    pos: Pos,
    params: Vec<(String, Type, Pos)>,
    ret: Type,
    blocks: Vec<BlockSyntax>,
}

// ----- syntax phase -----------------------------------------------------------------------------

struct Parser {
    tokens: Vec<Token>,
    i: usize,
    module: Module,
    /// `$n` label → string.
    strings: FxHashMap<u32, StrId>,
    funcs: Vec<FuncSyntax>,
}

const BINARY_OPS: [(&str, Opcode); 9] = [
    ("add", Opcode::Add),
    ("sub", Opcode::Sub),
    ("mul", Opcode::Mul),
    ("sdiv", Opcode::SDiv),
    ("srem", Opcode::SRem),
    ("fadd", Opcode::FAdd),
    ("fsub", Opcode::FSub),
    ("fmul", Opcode::FMul),
    ("fdiv", Opcode::FDiv),
];

impl Parser {
    fn peek(&self) -> &Tok {
        &self.tokens[self.i].tok
    }

    fn pos(&self) -> Pos {
        self.tokens[self.i].pos
    }

    fn bump(&mut self) -> Token {
        let t = self.tokens[self.i].clone();
        if t.tok != Tok::Eof {
            self.i += 1;
        }
        t
    }

    fn unexpected(&self, what: &str) -> ParseError {
        error(self.pos(), format!("expected {what}, found {}", self.peek().describe()))
    }

    fn expect(&mut self, tok: Tok) -> Result<Pos, ParseError> {
        if *self.peek() == tok {
            Ok(self.bump().pos)
        } else {
            Err(self.unexpected(&tok.describe()))
        }
    }

    fn eat(&mut self, tok: &Tok) -> bool {
        if self.peek() == tok {
            self.bump();
            true
        } else {
            false
        }
    }

    fn is_ident(&self, word: &str) -> bool {
        matches!(self.peek(), Tok::Ident(s) if s == word)
    }

    fn expect_keyword(&mut self, word: &str) -> Result<(), ParseError> {
        if self.is_ident(word) {
            self.bump();
            Ok(())
        } else {
            Err(self.unexpected(&format!("`{word}`")))
        }
    }

    fn ident(&mut self, what: &str) -> Result<(String, Pos), ParseError> {
        match self.peek().clone() {
            Tok::Ident(s) => Ok((s, self.bump().pos)),
            _ => Err(self.unexpected(what)),
        }
    }

    fn end_of_line(&mut self) -> Result<(), ParseError> {
        match self.peek() {
            Tok::Newline => {
                self.bump();
                Ok(())
            }
            Tok::Eof => Ok(()),
            _ => Err(self.unexpected("end of line")),
        }
    }

    fn skip_newlines(&mut self) {
        while *self.peek() == Tok::Newline {
            self.bump();
        }
    }

    fn ty(&mut self) -> Result<Type, ParseError> {
        if let Tok::Ident(s) = self.peek()
            && let Some(t) = Type::from_name(s)
        {
            self.bump();
            return Ok(t);
        }
        Err(self.unexpected("a type"))
    }

    fn uint(&mut self, what: &str) -> Result<(u64, Pos), ParseError> {
        match *self.peek() {
            Tok::Int(n) => Ok((n, self.bump().pos)),
            _ => Err(self.unexpected(what)),
        }
    }

    fn u32(&mut self, what: &str) -> Result<u32, ParseError> {
        let (n, pos) = self.uint(what)?;
        u32::try_from(n).map_err(|_| error(pos, format!("{what} out of range")))
    }

    fn items(&mut self) -> Result<(), ParseError> {
        loop {
            self.skip_newlines();
            match self.peek() {
                Tok::Eof => return Ok(()),
                Tok::Ident(s) if s == "global" => self.global()?,
                Tok::Ident(s) if s == "string" => self.string_item()?,
                Tok::Ident(s) if s == "func" => self.function()?,
                _ => return Err(self.unexpected("`global`, `string` or `func`")),
            }
        }
    }

    fn global(&mut self) -> Result<(), ParseError> {
        self.expect_keyword("global")?;
        let is_const = self.is_ident("const");
        if is_const {
            self.bump();
        }
        let pos = self.pos();
        let Tok::Global(name) = self.peek().clone() else {
            return Err(self.unexpected("a global name `@name`"));
        };
        self.bump();
        if self.module.global_by_name(&name).is_some() {
            return Err(error(pos, format!("global `@{name}` defined twice")));
        }
        self.expect(Tok::Colon)?;
        let elem = self.ty()?;
        self.expect_keyword("x")?;
        let words = self.u32("a word count")?;
        self.expect(Tok::Equals)?;
        let mut init = Vec::new();
        if self.is_ident("zero") {
            self.bump();
        } else {
            self.expect(Tok::LBrace)?;
            if !self.eat(&Tok::RBrace) {
                loop {
                    let idx = self.u32("an element index")?;
                    self.expect(Tok::Colon)?;
                    let c = self.constant()?;
                    init.push((idx, c));
                    if self.eat(&Tok::RBrace) {
                        break;
                    }
                    self.expect(Tok::Comma)?;
                }
            }
        }
        self.end_of_line()?;
        self.module.globals.push(GlobalData { name, elem, words, init, is_const });
        Ok(())
    }

    fn string_item(&mut self) -> Result<(), ParseError> {
        self.expect_keyword("string")?;
        let pos = self.pos();
        let Tok::StrRef(label) = *self.peek() else {
            return Err(self.unexpected("a string number `$n`"));
        };
        self.bump();
        if self.strings.contains_key(&label) {
            return Err(error(pos, format!("string `${label}` defined twice")));
        }
        self.expect(Tok::Equals)?;
        let Tok::Str(bytes) = self.peek().clone() else {
            return Err(self.unexpected("a string literal"));
        };
        self.bump();
        self.end_of_line()?;
        let id = self.module.strings.push(bytes);
        self.strings.insert(label, id);
        Ok(())
    }

    fn function(&mut self) -> Result<(), ParseError> {
        self.expect_keyword("func")?;
        let pos = self.pos();
        let Tok::Global(name) = self.peek().clone() else {
            return Err(self.unexpected("a function name `@name`"));
        };
        self.bump();
        self.expect(Tok::LParen)?;
        let mut params = Vec::new();
        if !self.eat(&Tok::RParen) {
            loop {
                let ppos = self.pos();
                let Tok::Local(pname) = self.peek().clone() else {
                    return Err(self.unexpected("a parameter `%name`"));
                };
                self.bump();
                self.expect(Tok::Colon)?;
                let ty = self.ty()?;
                params.push((pname, ty, ppos));
                if self.eat(&Tok::RParen) {
                    break;
                }
                self.expect(Tok::Comma)?;
            }
        }
        let ret = if self.eat(&Tok::Arrow) { self.ty()? } else { Type::Void };
        self.expect(Tok::LBrace)?;
        self.end_of_line()?;
        let mut blocks: Vec<BlockSyntax> = Vec::new();
        loop {
            self.skip_newlines();
            match self.peek().clone() {
                Tok::RBrace => {
                    self.bump();
                    self.end_of_line()?;
                    break;
                }
                Tok::Eof => return Err(error(pos, format!("function `@{name}` is missing its closing `}}`"))),
                Tok::Ident(label) if self.tokens.get(self.i + 1).is_some_and(|t| t.tok == Tok::Colon) => {
                    let lpos = self.bump().pos;
                    self.bump();
                    self.end_of_line()?;
                    blocks.push(BlockSyntax { name: label, pos: lpos, insts: Vec::new() });
                }
                _ => {
                    let ipos = self.pos();
                    let inst = self.instruction()?;
                    match blocks.last_mut() {
                        Some(b) => b.insts.push(inst),
                        None => return Err(error(ipos, "instruction before the first block label")),
                    }
                }
            }
        }
        self.funcs.push(FuncSyntax { name, pos, params, ret, blocks });
        Ok(())
    }

    fn instruction(&mut self) -> Result<InstSyntax, ParseError> {
        let pos = self.pos();
        let mut result = None;
        if let Tok::Local(name) = self.peek().clone() {
            let rpos = self.bump().pos;
            self.expect(Tok::Equals)?;
            result = Some((name, rpos));
        }
        let (mnemonic, mpos) = self.ident("an instruction")?;
        let mut inst =
            InstSyntax { result, op: Opcode::Unreachable, callee: None, ty: Type::Void, args: Vec::new(), targets: Vec::new() };
        if let Some(&(_, op)) = BINARY_OPS.iter().find(|(m, _)| *m == mnemonic) {
            inst.op = op;
            inst.ty = self.ty()?;
            inst.args.push(self.operand()?);
            self.expect(Tok::Comma)?;
            inst.args.push(self.operand()?);
        } else {
            match mnemonic.as_str() {
                "fneg" => {
                    inst.op = Opcode::FNeg;
                    inst.ty = self.ty()?;
                    inst.args.push(self.operand()?);
                }
                "icmp" | "fcmp" => {
                    let (cc, ccpos) = self.ident("a condition code")?;
                    inst.op = if mnemonic == "icmp" {
                        Opcode::Icmp(IntCC::from_name(&cc).ok_or_else(|| error(ccpos, format!("unknown condition `{cc}`")))?)
                    } else {
                        Opcode::Fcmp(FloatCC::from_name(&cc).ok_or_else(|| error(ccpos, format!("unknown condition `{cc}`")))?)
                    };
                    inst.args.push(self.operand()?);
                    self.expect(Tok::Comma)?;
                    inst.args.push(self.operand()?);
                }
                "zext" | "sitofp" | "fptosi" => {
                    inst.op = match mnemonic.as_str() {
                        "zext" => Opcode::Zext,
                        "sitofp" => Opcode::SiToFp,
                        _ => Opcode::FpToSi,
                    };
                    inst.args.push(self.operand()?);
                }
                "select" => {
                    inst.op = Opcode::Select;
                    inst.ty = self.ty()?;
                    inst.args.push(self.operand()?);
                    self.expect(Tok::Comma)?;
                    inst.args.push(self.operand()?);
                    self.expect(Tok::Comma)?;
                    inst.args.push(self.operand()?);
                }
                "alloca" => {
                    let elem = self.ty()?;
                    self.expect_keyword("x")?;
                    let count = self.u32("an element count")?;
                    inst.op = Opcode::Alloca { elem, count };
                }
                "load" => {
                    inst.op = Opcode::Load;
                    inst.ty = self.ty()?;
                    inst.args.push(self.operand()?);
                }
                "store" => {
                    inst.op = Opcode::Store;
                    let value = self.operand()?;
                    self.expect(Tok::Arrow)?;
                    let addr = self.operand()?;
                    inst.args.push(addr);
                    inst.args.push(value);
                }
                "gep" => {
                    inst.args.push(self.operand()?);
                    self.expect(Tok::Comma)?;
                    inst.args.push(self.operand()?);
                    self.expect(Tok::Star)?;
                    let scale = self.u32("a scale")?;
                    inst.op = Opcode::Gep { scale };
                }
                "memzero" => {
                    inst.args.push(self.operand()?);
                    self.expect(Tok::Comma)?;
                    let words = self.u32("a word count")?;
                    inst.op = Opcode::MemZero { words };
                }
                "call" => self.call(&mut inst)?,
                "phi" => {
                    inst.op = Opcode::Phi;
                    inst.ty = self.ty()?;
                    if *self.peek() == Tok::LBracket {
                        loop {
                            self.expect(Tok::LBracket)?;
                            inst.targets.push(self.ident("a block label")?);
                            self.expect(Tok::Colon)?;
                            inst.args.push(self.operand()?);
                            self.expect(Tok::RBracket)?;
                            if !self.eat(&Tok::Comma) {
                                break;
                            }
                        }
                    }
                }
                "jump" => {
                    inst.op = Opcode::Jump;
                    inst.targets.push(self.ident("a block label")?);
                }
                "br" => {
                    inst.op = Opcode::Br;
                    inst.args.push(self.operand()?);
                    self.expect(Tok::Comma)?;
                    inst.targets.push(self.ident("a block label")?);
                    self.expect(Tok::Comma)?;
                    inst.targets.push(self.ident("a block label")?);
                }
                "ret" => {
                    inst.op = Opcode::Ret;
                    if !matches!(self.peek(), Tok::Newline | Tok::Eof) {
                        inst.args.push(self.operand()?);
                    }
                }
                "unreachable" => inst.op = Opcode::Unreachable,
                _ => return Err(error(mpos, format!("unknown instruction `{mnemonic}`"))),
            }
        }
        if let Some(t) = implied_result_type(inst.op) {
            inst.ty = t;
        }
        match (&inst.result, inst.ty.is_void()) {
            (Some((_, rpos)), true) => {
                return Err(error(*rpos, format!("`{mnemonic}` here produces no value to name")));
            }
            (None, false) => {
                return Err(error(pos, format!("the {} result of `{mnemonic}` needs a name (`%x = ...`)", inst.ty)));
            }
            _ => {}
        }
        self.end_of_line()?;
        Ok(inst)
    }

    fn call(&mut self, inst: &mut InstSyntax) -> Result<(), ParseError> {
        inst.op = Opcode::Call(Callee::Builtin(Builtin::GetInt));
        if let Tok::Ident(s) = self.peek()
            && let Some(t) = Type::from_name(s)
        {
            self.bump();
            inst.ty = t;
        }
        let cpos = self.pos();
        let callee = match self.peek().clone() {
            Tok::Global(name) => {
                self.bump();
                CalleeSyntax::Func(name)
            }
            Tok::Ident(name) if name == "putf" => {
                self.bump();
                let Tok::StrRef(label) = *self.peek() else {
                    return Err(self.unexpected("the format string `$n` of `putf`"));
                };
                self.bump();
                CalleeSyntax::PutF(label)
            }
            Tok::Ident(name) => match Builtin::from_source_name(&name) {
                Some(b) => {
                    self.bump();
                    CalleeSyntax::Builtin(b)
                }
                None => return Err(error(cpos, format!("unknown runtime function `{name}`"))),
            },
            _ => return Err(self.unexpected("a callee (`@func` or a runtime function)")),
        };
        inst.callee = Some((callee, cpos));
        self.expect(Tok::LParen)?;
        if !self.eat(&Tok::RParen) {
            loop {
                inst.args.push(self.operand()?);
                if self.eat(&Tok::RParen) {
                    break;
                }
                self.expect(Tok::Comma)?;
            }
        }
        Ok(())
    }

    fn operand(&mut self) -> Result<Operand, ParseError> {
        let pos = self.pos();
        let kind = match self.peek().clone() {
            Tok::Local(name) => {
                self.bump();
                OperandKind::Local(name)
            }
            Tok::Global(name) => {
                self.bump();
                OperandKind::Global(name)
            }
            Tok::Ident(s) if s == "undef" => {
                self.bump();
                self.expect(Tok::Colon)?;
                OperandKind::Undef(self.ty()?)
            }
            _ => OperandKind::Const(self.constant()?),
        };
        Ok(Operand { kind, pos })
    }

    fn constant(&mut self) -> Result<Const, ParseError> {
        let pos = self.pos();
        let negative = self.eat(&Tok::Minus);
        let c = match self.peek().clone() {
            Tok::Int(n) => {
                self.bump();
                let v = if negative { -(n as i128) } else { n as i128 };
                let v = i32::try_from(v).map_err(|_| error(pos, "integer constant out of the i32 range"))?;
                Const::Int(v)
            }
            Tok::Float(text) => {
                self.bump();
                let f: f32 = text.parse().map_err(|_| error(pos, "malformed float constant"))?;
                Const::float(if negative { -f } else { f })
            }
            Tok::Ident(s) if s == "inf" => {
                self.bump();
                Const::float(if negative { f32::NEG_INFINITY } else { f32::INFINITY })
            }
            Tok::Ident(s) if !negative && (s == "true" || s == "false") => {
                self.bump();
                Const::Bool(s == "true")
            }
            Tok::Ident(s) if !negative && s == "f32" => {
                self.bump();
                self.expect(Tok::Colon)?;
                let (bits, bpos) = self.uint("a bit pattern")?;
                Const::Float(u32::try_from(bits).map_err(|_| error(bpos, "f32 bit pattern wider than 32 bits"))?)
            }
            _ => return Err(self.unexpected("an operand")),
        };
        Ok(c)
    }
}

// ----- build phase ------------------------------------------------------------------------------

fn build(module: &mut Module, strings: &FxHashMap<u32, StrId>, funcs: Vec<FuncSyntax>) -> Result<(), ParseError> {
    let mut func_names: FxHashMap<String, FuncRef> = FxHashMap::default();
    let mut refs = Vec::with_capacity(funcs.len());
    for fs in &funcs {
        if func_names.contains_key(&fs.name) {
            return Err(error(fs.pos, format!("function `@{}` defined twice", fs.name)));
        }
        let types: Vec<Type> = fs.params.iter().map(|p| p.1).collect();
        let f = module.add_function(Function::new(fs.name.clone(), &types, fs.ret));
        func_names.insert(fs.name.clone(), f);
        refs.push(f);
    }
    let globals: FxHashMap<String, GlobalRef> = module.globals.iter().map(|(g, d)| (d.name.clone(), g)).collect();
    for (fs, f) in funcs.into_iter().zip(refs) {
        let ctx = Context { funcs: &func_names, globals: &globals, strings };
        let mut func = module.take_function(f);
        let built = build_body(&mut func, fs, &ctx);
        module.put_back(f, func);
        built?;
    }
    Ok(())
}

struct Context<'a> {
    funcs: &'a FxHashMap<String, FuncRef>,
    globals: &'a FxHashMap<String, GlobalRef>,
    strings: &'a FxHashMap<u32, StrId>,
}

fn build_body(func: &mut Function, fs: FuncSyntax, ctx: &Context<'_>) -> Result<(), ParseError> {
    let mut values: FxHashMap<String, Value> = FxHashMap::default();
    for (i, (name, _, pos)) in fs.params.iter().enumerate() {
        if values.insert(name.clone(), func.params[i]).is_some() {
            return Err(error(*pos, format!("value `%{name}` defined twice")));
        }
    }
    let mut blocks: FxHashMap<String, Block> = FxHashMap::default();
    for bs in &fs.blocks {
        let b = func.create_block();
        if blocks.insert(bs.name.clone(), b).is_some() {
            return Err(error(bs.pos, format!("block `{}` defined twice", bs.name)));
        }
    }
    let block_of = |name: &str, pos: Pos| -> Result<Block, ParseError> {
        blocks.get(name).copied().ok_or_else(|| error(pos, format!("undefined block `{name}`")))
    };

    // Pass 1: create and place every instruction without value operands.
    let mut created = Vec::new();
    for bs in &fs.blocks {
        let block = block_of(&bs.name, bs.pos)?;
        for is in &bs.insts {
            let op = match &is.callee {
                Some((callee, cpos)) => Opcode::Call(resolve_callee(callee, *cpos, ctx)?),
                None => is.op,
            };
            let mut targets = smallvec::SmallVec::new();
            for (name, pos) in &is.targets {
                targets.push(block_of(name, *pos)?);
            }
            let data = InstData { op, args: smallvec::SmallVec::new(), targets, ty: is.ty };
            let (inst, result) = func.append(block, data);
            if let (Some((name, pos)), Some(v)) = (&is.result, result)
                && values.insert(name.clone(), v).is_some()
            {
                return Err(error(*pos, format!("value `%{name}` defined twice")));
            }
            created.push(inst);
        }
    }

    // Pass 2: resolve value operands now that every name has its value.
    let all = fs.blocks.iter().flat_map(|b| b.insts.iter());
    for (is, &inst) in all.zip(&created) {
        let mut data = func.inst(inst).clone();
        for operand in &is.args {
            let v = match &operand.kind {
                OperandKind::Local(name) => *values
                    .get(name)
                    .ok_or_else(|| error(operand.pos, format!("undefined value `%{name}`")))?,
                OperandKind::Global(name) => {
                    let g = ctx
                        .globals
                        .get(name)
                        .ok_or_else(|| error(operand.pos, format!("undefined global `@{name}`")))?;
                    func.global_addr(*g)
                }
                OperandKind::Const(c) => func.const_value(*c),
                OperandKind::Undef(ty) => func.undef(*ty),
            };
            data.args.push(v);
        }
        if !data.args.is_empty() {
            func.replace_inst(inst, data);
        }
    }
    Ok(())
}

fn resolve_callee(callee: &CalleeSyntax, pos: Pos, ctx: &Context<'_>) -> Result<Callee, ParseError> {
    Ok(match callee {
        CalleeSyntax::Func(name) => {
            Callee::Func(*ctx.funcs.get(name).ok_or_else(|| error(pos, format!("undefined function `@{name}`")))?)
        }
        CalleeSyntax::Builtin(b) => Callee::Builtin(*b),
        CalleeSyntax::PutF(label) => {
            Callee::PutF(*ctx.strings.get(label).ok_or_else(|| error(pos, format!("undefined string `${label}`")))?)
        }
    })
}

#[cfg(test)]
mod tests;
