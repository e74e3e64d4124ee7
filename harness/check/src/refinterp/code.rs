//! The reference interpreter's executable form of a program: the HIR with every name turned
//! into a frame offset or a global address, every array access into a list of
//! (index, bound, stride) steps, and every operator into a typed operation.
//!
//! Nothing here is an optimisation of the program: each node corresponds to one HIR node or
//! to a group of them (the indices of an access, the left spine of nested binary operations,
//! a run of declarations without effect — see `lower`), and evaluation order is the HIR's.
//! The point is only that the executor never looks anything up by name or id, never hashes,
//! and never allocates while running.
//!
//! Values are 32-bit words (`u32`); an `int` is its two's-complement bits and a `float` its
//! IEEE-754 bits. The static type of every node decides how the bits are read, so no value
//! carries a tag.

use sysyc::frontend::ast::Span;

/// An expression, evaluated to a 32-bit word.
#[derive(Debug)]
pub(super) enum Ex {
    Const(u32),
    /// A local scalar at frame offset `off` (read checks that it is initialised).
    Local {
        off: u32,
        span: Span,
    },
    /// A global scalar at memory address `addr` (globals are always initialised).
    Global {
        addr: u32,
    },
    /// An array element.
    Elem(Box<Access>),
    Call(Box<Call>),
    Builtin(Box<BuiltinCall>),
    NegI(Box<Ex>),
    NegF(Box<Ex>),
    Not(Box<Ex>),
    /// Binary operations, one variant per typed operator so that a single dispatch selects
    /// both the node and the operation. Division and remainder keep their span for traps.
    AddI(Box<Ex>, Box<Ex>),
    SubI(Box<Ex>, Box<Ex>),
    MulI(Box<Ex>, Box<Ex>),
    DivI(Box<Ex>, Box<Ex>, Span),
    ModI(Box<Ex>, Box<Ex>, Span),
    LtI(Box<Ex>, Box<Ex>),
    GtI(Box<Ex>, Box<Ex>),
    LeI(Box<Ex>, Box<Ex>),
    GeI(Box<Ex>, Box<Ex>),
    EqI(Box<Ex>, Box<Ex>),
    NeI(Box<Ex>, Box<Ex>),
    AddF(Box<Ex>, Box<Ex>),
    SubF(Box<Ex>, Box<Ex>),
    MulF(Box<Ex>, Box<Ex>),
    DivF(Box<Ex>, Box<Ex>),
    LtF(Box<Ex>, Box<Ex>),
    GtF(Box<Ex>, Box<Ex>),
    LeF(Box<Ex>, Box<Ex>),
    GeF(Box<Ex>, Box<Ex>),
    EqF(Box<Ex>, Box<Ex>),
    NeF(Box<Ex>, Box<Ex>),
    And(Box<Ex>, Box<Ex>),
    Or(Box<Ex>, Box<Ex>),
    /// A left-deep chain of two or more binary operations, evaluated iteratively.
    Chain(Box<Chain>),
    /// A binary operation on two leaves (`i < n`, `x + 1`): the most common shape of all,
    /// evaluated by a small function that never recurses.
    Pair(Box<Pair>),
    IntToFloat(Box<Ex>),
    FloatToInt(Box<Ex>, Span),
}

impl Ex {
    /// The node of `a op b`.
    pub fn binary(op: Op, a: Ex, b: Ex, span: Span) -> Ex {
        let (a, b) = (Box::new(a), Box::new(b));
        match op {
            Op::AddI => Ex::AddI(a, b),
            Op::SubI => Ex::SubI(a, b),
            Op::MulI => Ex::MulI(a, b),
            Op::DivI => Ex::DivI(a, b, span),
            Op::ModI => Ex::ModI(a, b, span),
            Op::LtI => Ex::LtI(a, b),
            Op::GtI => Ex::GtI(a, b),
            Op::LeI => Ex::LeI(a, b),
            Op::GeI => Ex::GeI(a, b),
            Op::EqI => Ex::EqI(a, b),
            Op::NeI => Ex::NeI(a, b),
            Op::AddF => Ex::AddF(a, b),
            Op::SubF => Ex::SubF(a, b),
            Op::MulF => Ex::MulF(a, b),
            Op::DivF => Ex::DivF(a, b),
            Op::LtF => Ex::LtF(a, b),
            Op::GtF => Ex::GtF(a, b),
            Op::LeF => Ex::LeF(a, b),
            Op::GeF => Ex::GeF(a, b),
            Op::EqF => Ex::EqF(a, b),
            Op::NeF => Ex::NeF(a, b),
        }
    }
}

/// An operand that needs no evaluation: a constant or a scalar variable (as in [`Ex`]).
#[derive(Clone, Copy, Debug)]
pub(super) enum Leaf {
    Const(u32),
    Local { off: u32, span: Span },
    Global { addr: u32 },
}

impl Leaf {
    /// `e` as a leaf, if it is one.
    pub fn of(e: &Ex) -> Option<Leaf> {
        match *e {
            Ex::Const(v) => Some(Leaf::Const(v)),
            Ex::Local { off, span } => Some(Leaf::Local { off, span }),
            Ex::Global { addr } => Some(Leaf::Global { addr }),
            _ => None,
        }
    }
}

/// `a op b` of two leaves; `span` is the operation's, where a division trap is reported.
#[derive(Debug)]
pub(super) struct Pair {
    pub op: Op,
    pub a: Leaf,
    pub b: Leaf,
    pub span: Span,
}

/// `((first op1 rhs1) op2 rhs2) ...`: the left spine of nested binary operations (long sums
/// like `s + a1 + a2 + ... + a15` are common). Evaluating the links in order is exactly the
/// evaluation order of the nested form; nothing is reassociated.
#[derive(Debug)]
pub(super) struct Chain {
    pub first: Ex,
    pub links: Box<[Link]>,
}

/// One operation of a [`Chain`]: the accumulated value `op` `rhs`.
#[derive(Debug)]
pub(super) struct Link {
    pub op: Op,
    pub rhs: Ex,
    /// Where a division trap of this operation is reported.
    pub span: Span,
}

/// A binary operation with its operand type folded in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Op {
    AddI,
    SubI,
    MulI,
    DivI,
    ModI,
    LtI,
    GtI,
    LeI,
    GeI,
    EqI,
    NeI,
    AddF,
    SubF,
    MulF,
    DivF,
    LtF,
    GtF,
    LeF,
    GeF,
    EqF,
    NeF,
}

/// Where an array lives.
#[derive(Clone, Copy, Debug)]
pub(super) enum ArrayBase {
    /// A global array at `addr` with `len` elements.
    Global { addr: u32, len: u32 },
    /// A local array at frame offset `off` with `len` elements.
    Local { off: u32, len: u32 },
    /// An array parameter: a [`View`] stored in three frame words at `off`.
    Param { off: u32 },
}

/// Frame words of an array parameter: start address, elements remaining in the underlying
/// object from the start, and the first dimension those elements make (remaining / stride).
pub(super) const VIEW_WORDS: u32 = 3;

/// One index of an array access.
#[derive(Debug)]
pub(super) struct IndexStep {
    pub index: Ex,
    /// Number of rows at this level; 0 for the first index into a parameter, whose bound is
    /// the view's first dimension.
    pub bound: u32,
    /// Elements per row at this level.
    pub stride: u32,
    /// The index expression, where an out-of-bounds trap is reported.
    pub span: Span,
}

/// An array, indexed by zero or more indices (all of them for an element, fewer for a view).
#[derive(Debug)]
pub(super) struct Access {
    pub base: ArrayBase,
    pub steps: Box<[IndexStep]>,
    /// Where an uninitialised read is reported.
    pub span: Span,
}

/// A scalar assignment target.
#[derive(Debug)]
pub(super) enum Target {
    Local { off: u32 },
    Global { addr: u32 },
    Elem(Box<Access>),
}

/// A call argument.
#[derive(Debug)]
pub(super) enum Arg {
    Scalar(Ex),
    /// An array (view) argument; `param_stride` is the callee parameter's first-level stride,
    /// which turns the remaining element count into the callee's first dimension.
    View {
        access: Access,
        param_stride: u32,
    },
}

#[derive(Debug)]
pub(super) struct Call {
    pub func: u32,
    pub args: Box<[Arg]>,
    pub span: Span,
}

/// A `putf` argument, with its type.
#[derive(Debug)]
pub(super) enum PutfArg {
    Int(Ex),
    Float(Ex),
}

#[derive(Debug)]
pub(super) enum BuiltinCall {
    GetInt(Span),
    GetCh(Span),
    GetFloat(Span),
    /// `getarray`/`getfarray` (`float` says which).
    GetArray {
        array: Access,
        float: bool,
        span: Span,
    },
    PutInt(Ex),
    PutCh(Ex),
    PutFloat(Ex),
    /// `putarray`/`putfarray`.
    PutArray {
        count: Ex,
        array: Access,
        float: bool,
        span: Span,
    },
    PutF {
        format: Box<[u8]>,
        args: Box<[PutfArg]>,
    },
    StartTime(u32),
    StopTime(u32),
}

/// A statement. Every executed statement is one step.
#[derive(Debug)]
pub(super) struct St {
    pub kind: StKind,
    pub span: Span,
    /// The statement's number in [`Code::stmt_spans`] (for statement coverage). A
    /// [`StKind::Skip`] stands for the statements `id ..= id + rest.len()`.
    pub id: u32,
}

#[derive(Debug)]
pub(super) enum StKind {
    /// Declarations without effect (see `lower`): the statement itself stands for the first,
    /// `rest` holds the spans of the others, each of which is one more step.
    Skip {
        rest: Box<[Span]>,
    },
    /// A declaration without initialiser: `len` words at `off` become uninitialised.
    Decl {
        off: u32,
        len: u32,
    },
    /// `int x = e;`: `x` is uninitialised while `e` is evaluated (C scoping), then assigned.
    DeclScalar {
        off: u32,
        value: Ex,
    },
    /// An array with an initialiser list: all `len` words zeroed (and initialised), then the
    /// listed elements evaluated and stored in order.
    DeclArray {
        off: u32,
        len: u32,
        elems: Box<[(u32, Ex)]>,
    },
    /// Assignment: the target's indices are evaluated (and checked) before the value.
    Assign {
        target: Target,
        value: Ex,
    },
    Expr(Ex),
    Block(Box<[St]>),
    If {
        cond: Ex,
        then_branch: Box<St>,
        else_branch: Option<Box<St>>,
    },
    While {
        cond: Ex,
        body: Box<St>,
    },
    Break,
    Continue,
    Return(Option<Ex>),
}

/// A function ready to run.
#[derive(Debug)]
pub(super) struct Func {
    pub name: String,
    pub returns_value: bool,
    /// Words of the frame: every local slot gets its own words (parameters first, in order,
    /// so the caller can copy the argument words in as one block).
    pub frame_words: u64,
    /// Words the parameters take at the start of the frame.
    pub param_words: u32,
    pub body: Box<[St]>,
    /// Where control falling off the end is reported (the closing brace).
    pub end: Span,
}

/// The whole program ready to run.
#[derive(Debug)]
pub(super) struct Code {
    pub funcs: Vec<Func>,
    pub main: u32,
    /// Words of global memory and its initial non-zero contents.
    pub global_words: u64,
    pub global_init: Vec<(u32, u32)>,
    /// The span of every source statement, indexed by statement id ([`St::id`]).
    pub stmt_spans: Vec<Span>,
}
