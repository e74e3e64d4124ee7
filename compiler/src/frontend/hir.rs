//! Typed, name-resolved program ("HIR") produced by semantic analysis.
//!
//! Everything a back end or an interpreter needs is explicit here:
//! * every name is resolved to a [`VarRef`] (global or function-local slot) or a [`Callee`];
//!   shadowing is gone because every declaration gets its own slot;
//! * every expression has a scalar type, and implicit int↔float conversions are explicit
//!   [`ExprKind::Convert`] nodes;
//! * conditions (`if`, `while`, operands of `!`, `&&`, `||`) are `Int` expressions that are
//!   tested against zero — float conditions were rewritten to `x != 0.0`;
//! * references to `const` scalars are replaced by their values; array dimensions are numbers;
//! * initialiser lists are flattened with C brace elision into sparse, row-major element lists
//!   (elements not listed are zero);
//! * `starttime()`/`stoptime()` carry their source line.
//!
//! The reference interpreter executes this tree directly, the IR lowering translates it, and
//! the C emitter of the harness prints it for gcc.

use super::ast::{BType, Span};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GlobalId(pub u32);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LocalId(pub u32);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FuncId(pub u32);

impl GlobalId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}
impl LocalId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}
impl FuncId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A scalar value type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scalar {
    Int,
    Float,
}

impl From<BType> for Scalar {
    fn from(b: BType) -> Scalar {
        match b {
            BType::Int => Scalar::Int,
            BType::Float => Scalar::Float,
        }
    }
}

/// The type of a variable (global, local or parameter).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum VarType {
    Scalar(Scalar),
    /// A complete array `elem[d0][d1]...`; semantic analysis guarantees every dimension is
    /// ≥ 1 and the total size fits in `u32` elements.
    Array { elem: Scalar, dims: Vec<u32> },
    /// An array parameter `elem name[][d1]...`: the first dimension is unknown; `dims` holds
    /// the rest (empty for `int a[]`).
    ArrayParam { elem: Scalar, dims: Vec<u32> },
}

impl VarType {
    pub fn elem(&self) -> Scalar {
        match self {
            VarType::Scalar(s) => *s,
            VarType::Array { elem, .. } | VarType::ArrayParam { elem, .. } => *elem,
        }
    }

    /// Number of indices needed to reach a scalar element.
    pub fn rank(&self) -> usize {
        match self {
            VarType::Scalar(_) => 0,
            VarType::Array { dims, .. } => dims.len(),
            VarType::ArrayParam { dims, .. } => dims.len() + 1,
        }
    }

    /// Total element count of a complete array (1 for a scalar, `None` for a parameter).
    pub fn element_count(&self) -> Option<u64> {
        match self {
            VarType::Scalar(_) => Some(1),
            VarType::Array { dims, .. } => Some(dims.iter().map(|&d| d as u64).product()),
            VarType::ArrayParam { .. } => None,
        }
    }

    /// Row strides in elements for each index position, e.g. `[4][3][2]` → `[6, 2, 1]`.
    /// For a parameter `[][3][2]` → `[6, 2, 1]` as well.
    pub fn strides(&self) -> Vec<u64> {
        let inner: &[u32] = match self {
            VarType::Scalar(_) => return Vec::new(),
            VarType::Array { dims, .. } => &dims[1..],
            VarType::ArrayParam { dims, .. } => dims,
        };
        let mut strides = vec![1u64; inner.len() + 1];
        for i in (0..inner.len()).rev() {
            strides[i] = strides[i + 1] * inner[i] as u64;
        }
        strides
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ConstVal {
    Int(i32),
    Float(f32),
}

impl ConstVal {
    pub fn scalar(self) -> Scalar {
        match self {
            ConstVal::Int(_) => Scalar::Int,
            ConstVal::Float(_) => Scalar::Float,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    pub globals: Vec<Global>,
    pub funcs: Vec<Function>,
    /// Index of `int main()` in `funcs`.
    pub main: FuncId,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Global {
    pub name: String,
    pub ty: VarType,
    pub is_const: bool,
    pub init: ConstInit,
    pub span: Span,
}

/// A compile-time initialiser: a sparse row-major list of `(flat element index, value)` pairs,
/// sorted by index, values already converted to the element type; everything else is zero.
/// A scalar uses index 0.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ConstInit {
    pub elems: Vec<(u32, ConstVal)>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    pub name: String,
    /// `None` for `void`.
    pub ret: Option<Scalar>,
    /// The parameters, in order; each is a slot of `locals`.
    pub params: Vec<LocalId>,
    /// Every parameter and local declaration of the function, one slot each.
    pub locals: Vec<Local>,
    pub body: Vec<Stmt>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Local {
    pub name: String,
    pub ty: VarType,
    pub is_const: bool,
    pub is_param: bool,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VarRef {
    Global(GlobalId),
    Local(LocalId),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum StmtKind {
    /// A local declaration, run where it stands. Without initialiser the variable is
    /// uninitialised (reading it is undefined behaviour).
    Decl { local: LocalId, init: Option<LocalInit> },
    Assign { place: Place, value: Expr },
    Expr(Expr),
    Block(Vec<Stmt>),
    If { cond: Expr, then_branch: Box<Stmt>, else_branch: Option<Box<Stmt>> },
    While { cond: Expr, body: Box<Stmt> },
    Break,
    Continue,
    Return(Option<Expr>),
}

/// Initialiser of a local variable.
#[derive(Clone, Debug, PartialEq)]
pub enum LocalInit {
    Scalar(Expr),
    /// An array initialiser list: the whole array is zero-filled, then the listed elements are
    /// evaluated and stored in source order (sorted by flat index, which is source order).
    Array(Vec<(u32, Expr)>),
}

/// A memory location or array view: a variable and zero or more indices.
/// With `rank()` indices it names a scalar element; with fewer it names a sub-array (only
/// legal as a call argument to an array parameter).
#[derive(Clone, Debug, PartialEq)]
pub struct Place {
    pub var: VarRef,
    pub indices: Vec<Expr>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    /// The value type; for [`ExprKind::ArrayAddr`] the element type of the array, for calls to
    /// void functions `None`.
    pub ty: Option<Scalar>,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    /// Arithmetic negation (int wraps: `-INT_MIN == INT_MIN`).
    Neg,
    /// Logical not of an `Int` operand: `x == 0` as 0/1.
    Not,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Lt,
    Gt,
    Le,
    Ge,
    Eq,
    Ne,
}

impl BinaryOp {
    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinaryOp::Lt | BinaryOp::Gt | BinaryOp::Le | BinaryOp::Ge | BinaryOp::Eq | BinaryOp::Ne
        )
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LogicalOp {
    And,
    Or,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    Const(ConstVal),
    /// Read of a scalar variable or of an array element (`place` has full rank).
    Load(Place),
    /// Address of an array or sub-array, passed to an array parameter. `ty` is the element
    /// scalar type.
    ArrayAddr(Place),
    Call { callee: Callee, args: Vec<Expr> },
    /// Operand and result have the same type, except `Not` whose operand is `Int`.
    Unary(UnaryOp, Box<Expr>),
    /// Both operands have the same type (after conversion). Comparisons yield `Int` 0/1.
    Binary(BinaryOp, Box<Expr>, Box<Expr>),
    /// Short-circuit logic over `Int` operands (tested against zero); yields `Int` 0/1.
    Logical(LogicalOp, Box<Expr>, Box<Expr>),
    /// Conversion to `ty`: float→int truncates toward zero, int→float rounds to nearest.
    Convert(Box<Expr>),
    /// The string literal argument of `putf`.
    Str(Vec<u8>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Callee {
    User(FuncId),
    Builtin(Builtin),
}

/// The SysY runtime library. `StartTime`/`StopTime` take the source line as their only
/// argument (an `Int` constant inserted by semantic analysis).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Builtin {
    GetInt,
    GetCh,
    GetFloat,
    GetArray,
    GetFArray,
    PutInt,
    PutCh,
    PutFloat,
    PutArray,
    PutFArray,
    PutF,
    StartTime,
    StopTime,
}

impl Builtin {
    pub const ALL: [Builtin; 13] = [
        Builtin::GetInt,
        Builtin::GetCh,
        Builtin::GetFloat,
        Builtin::GetArray,
        Builtin::GetFArray,
        Builtin::PutInt,
        Builtin::PutCh,
        Builtin::PutFloat,
        Builtin::PutArray,
        Builtin::PutFArray,
        Builtin::PutF,
        Builtin::StartTime,
        Builtin::StopTime,
    ];

    /// The name a SysY program calls it by.
    pub fn source_name(self) -> &'static str {
        match self {
            Builtin::GetInt => "getint",
            Builtin::GetCh => "getch",
            Builtin::GetFloat => "getfloat",
            Builtin::GetArray => "getarray",
            Builtin::GetFArray => "getfarray",
            Builtin::PutInt => "putint",
            Builtin::PutCh => "putch",
            Builtin::PutFloat => "putfloat",
            Builtin::PutArray => "putarray",
            Builtin::PutFArray => "putfarray",
            Builtin::PutF => "putf",
            Builtin::StartTime => "starttime",
            Builtin::StopTime => "stoptime",
        }
    }

    /// The symbol of the runtime library that implements it.
    pub fn link_name(self) -> &'static str {
        match self {
            Builtin::StartTime => "_sysy_starttime",
            Builtin::StopTime => "_sysy_stoptime",
            other => other.source_name(),
        }
    }

    pub fn from_source_name(name: &str) -> Option<Builtin> {
        Builtin::ALL.iter().copied().find(|b| b.source_name() == name)
    }

    pub fn ret(self) -> Option<Scalar> {
        match self {
            Builtin::GetInt | Builtin::GetCh | Builtin::GetArray | Builtin::GetFArray => {
                Some(Scalar::Int)
            }
            Builtin::GetFloat => Some(Scalar::Float),
            _ => None,
        }
    }

    /// True for functions that read stdin (and so have a side effect on the input position).
    pub fn reads_input(self) -> bool {
        matches!(
            self,
            Builtin::GetInt | Builtin::GetCh | Builtin::GetFloat | Builtin::GetArray | Builtin::GetFArray
        )
    }
}
