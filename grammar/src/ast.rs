//! The abstract syntax tree of a `.cute` file.
//!
//! Invariants:
//! - **Every node carries a [`Span`]**: byte offsets into the source of the file that was parsed.
//! - **Every expression and every binding site has a [`NodeId`]** unique within its [`Module`], assigned by the
//!   parser in source order. Later stages (name resolution, type checking, lowering) key their side tables by it.
//! - **Parsing never fails**: a file with syntax errors still yields a tree in which the broken parts are `Error`
//!   nodes, next to the list of syntax errors.
//! - The AST holds syntax only. Whether `f32` is a type or `M` a dynamic dimension is decided by `cutec-sema`.

pub use cutec_diagnostics::Span;

/// Identity of an expression or binding site within one [`Module`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct NodeId(pub u32);

#[derive(Clone, PartialEq, Debug)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

/// One parsed file.
#[derive(Clone, PartialEq, Debug)]
pub struct Module {
    /// `//!` lines at the top of the file, without the marker.
    pub docs: Vec<String>,
    pub items: Vec<Item>,
    pub span: Span,
    /// One past the largest [`NodeId`] used in this module.
    pub node_count: u32,
}

#[derive(Clone, PartialEq, Debug)]
pub struct Item {
    /// `///` lines before the item, without the marker.
    pub docs: Vec<String>,
    pub kind: ItemKind,
    pub span: Span,
}

#[derive(Clone, PartialEq, Debug)]
pub enum ItemKind {
    /// `use stdlib::reduce;` or `use stdlib::reduce::{block_reduce, warp_reduce};`
    Use(Use),
    /// `kernel name<...>(...) launch(...) attrs { ... }`
    Kernel(Function),
    /// `fn name<...>(...) -> T attrs { ... }`: a device function.
    Fn(Function),
    /// `const NAME: int = 128;`
    Const(ConstItem),
    /// An item that could not be parsed.
    Error,
}

#[derive(Clone, PartialEq, Debug)]
pub struct Use {
    pub path: Vec<Ident>,
    /// `Some` for `use a::b::{x, y};`, `None` for `use a::b;`.
    pub names: Option<Vec<Ident>>,
    pub span: Span,
}

#[derive(Clone, PartialEq, Debug)]
pub struct ConstItem {
    pub id: NodeId,
    pub name: Ident,
    pub ty: Option<TypeExpr>,
    pub value: Expr,
}

#[derive(Clone, PartialEq, Debug)]
pub struct Function {
    pub name: Ident,
    pub generics: Vec<GenericParam>,
    pub params: Vec<Param>,
    /// `-> T` of a device function; kernels return nothing.
    pub ret: Option<TypeExpr>,
    /// `launch(grid = ..., block = ..., cluster = ..., smem = ...)`: kernels only.
    pub launch: Option<Launch>,
    /// Attributes written after the signature, before the body: `warp_specialized`, `inline`.
    pub attrs: Vec<Attribute>,
    pub body: Block,
    /// The span of the signature (from the keyword to the end of the attributes).
    pub sig_span: Span,
}

/// `const N: int = 256` in a generic parameter list.
#[derive(Clone, PartialEq, Debug)]
pub struct GenericParam {
    pub id: NodeId,
    pub name: Ident,
    pub ty: TypeExpr,
    pub default: Option<Expr>,
    pub span: Span,
}

#[derive(Clone, PartialEq, Debug)]
pub struct Param {
    pub id: NodeId,
    pub name: Ident,
    pub ty: TypeExpr,
    pub span: Span,
}

#[derive(Clone, PartialEq, Debug)]
pub struct Launch {
    /// `grid = (..)`, `block = (..)`, `cluster = (..)`, `smem = ..`, in source order.
    pub args: Vec<NamedArg>,
    pub span: Span,
}

/// `name = value`.
#[derive(Clone, PartialEq, Debug)]
pub struct NamedArg {
    pub name: Ident,
    pub value: Expr,
    pub span: Span,
}

/// `warp_specialized`, `unroll`, `unroll(4)`, `pipelined(stages = S)`.
#[derive(Clone, PartialEq, Debug)]
pub struct Attribute {
    pub name: Ident,
    pub args: Vec<Arg>,
    pub span: Span,
}

/// A call or attribute argument, positional (`x`) or named (`stages = 4`).
#[derive(Clone, PartialEq, Debug)]
pub struct Arg {
    pub name: Option<Ident>,
    pub value: Expr,
    pub span: Span,
}

/// A type as written: `int`, `f32`, `Tensor<f32, (M, N):(N, 1), gmem>`, `(int, int)`.
#[derive(Clone, PartialEq, Debug)]
pub struct TypeExpr {
    pub kind: TypeExprKind,
    pub span: Span,
}

#[derive(Clone, PartialEq, Debug)]
pub enum TypeExprKind {
    /// A name with optional generic arguments. Generic arguments are expressions: a layout literal, a dtype
    /// name, a memory space name, an integer.
    Named {
        name: Ident,
        args: Vec<Expr>,
    },
    Tuple(Vec<TypeExpr>),
    Error,
}

#[derive(Clone, PartialEq, Debug)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    pub span: Span,
}

#[derive(Clone, PartialEq, Debug)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

#[derive(Clone, PartialEq, Debug)]
pub enum StmtKind {
    /// `let [mut] name [: T] = value;`
    Let {
        id: NodeId,
        mutable: bool,
        name: Ident,
        ty: Option<TypeExpr>,
        value: Expr,
    },
    /// `place = value;` (`op == None`) or `place += value;` and the other compound forms.
    Assign {
        target: Expr,
        op: Option<BinaryOp>,
        value: Expr,
    },
    /// An expression evaluated for its effect: `copy(a, b);`
    Expr(Expr),
    /// `for var in start..end [attrs] { body }`
    For {
        id: NodeId,
        var: Ident,
        start: Expr,
        end: Expr,
        attrs: Vec<Attribute>,
        body: Block,
    },
    /// `while cond { body }`
    While {
        cond: Expr,
        body: Block,
    },
    /// `role name(warpgroups = N, registers = R) as rank { body }`: the warpgroups of one role of a
    /// warp-specialized kernel. `id` is the binding of `rank` (when written).
    Role {
        id: NodeId,
        name: Ident,
        args: Vec<NamedArg>,
        rank: Option<Ident>,
        body: Block,
    },
    /// `if cond { .. } else if .. { .. } else { .. }`; an `else if` is an `If` inside the else block.
    If {
        cond: Expr,
        then_block: Block,
        else_block: Option<Block>,
    },
    Return(Option<Expr>),
    Break,
    Continue,
    /// A nested `{ ... }` block.
    Block(Block),
    /// A statement that could not be parsed.
    Error,
}

#[derive(Clone, PartialEq, Debug)]
pub struct Expr {
    pub id: NodeId,
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, PartialEq, Debug)]
pub enum ExprKind {
    /// An integer literal; the lexer has checked that it fits in 64 bits.
    Int(u64),
    Float(f64),
    Bool(bool),
    Str(String),
    /// A name, optionally with generic arguments: `x`, `M`, `f32`, `Swizzle<3, 4, 3>`,
    /// `wgmma<64, BN, 16, bf16, bf16, f32>`, `SW128_K<bf16>`.
    Name {
        name: Ident,
        generics: Vec<Expr>,
    },
    /// `_`: CuTe's wildcard in slices and tilers.
    Wildcard,
    /// `(a, b, c)`; one-element tuples are written `(a,)`. `(a)` is just `a`.
    Tuple(Vec<Expr>),
    /// `shape:stride`, CuTe's layout notation: `8:1`, `(4, 8):(8, 1)`, `((2,2),3):((24,2),8)`.
    Layout {
        shape: Box<Expr>,
        stride: Box<Expr>,
    },
    /// `outer o inner`: CuTe's composition notation, `composition(outer, inner)`, right-associative and looser
    /// than `:`, so that a swizzled layout reads as CuTe prints it: `Sw<3,4,3> o (8,64):(64,1)`. The offset `0`
    /// of CuTe's `Sw<B,M,S> o 0 o L` is accepted and dropped by the parser.
    Compose {
        outer: Box<Expr>,
        inner: Box<Expr>,
    },
    Unary {
        op: UnaryOp,
        operand: Box<Expr>,
    },
    Binary {
        op: BinaryOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    /// `callee(args)`; the callee is usually a `Name`.
    Call {
        callee: Box<Expr>,
        args: Vec<Arg>,
    },
    /// `receiver.method<generics>(args)`
    MethodCall {
        receiver: Box<Expr>,
        method: Ident,
        generics: Vec<Expr>,
        args: Vec<Arg>,
    },
    /// `base.field`: `block_idx.x`
    Field {
        base: Box<Expr>,
        field: Ident,
    },
    /// `base[i, j, _]`
    Index {
        base: Box<Expr>,
        indices: Vec<Expr>,
    },
    /// `value as T`
    Cast {
        value: Box<Expr>,
        ty: TypeExpr,
    },
    /// `if c { a } else { b }` used as a value is not part of the language; `select(c, a, b)` is.
    /// An expression that could not be parsed.
    Error,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum UnaryOp {
    /// `-x`
    Neg,
    /// `!x`
    Not,
    /// `~x`
    BitNot,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Shl,
    Shr,
    BitAnd,
    BitOr,
    BitXor,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
}

impl BinaryOp {
    /// The operator as written in source.
    pub fn as_str(self) -> &'static str {
        use BinaryOp::*;
        match self {
            Add => "+",
            Sub => "-",
            Mul => "*",
            Div => "/",
            Rem => "%",
            Shl => "<<",
            Shr => ">>",
            BitAnd => "&",
            BitOr => "|",
            BitXor => "^",
            Eq => "==",
            Ne => "!=",
            Lt => "<",
            Le => "<=",
            Gt => ">",
            Ge => ">=",
            And => "&&",
            Or => "||",
        }
    }
}

impl UnaryOp {
    pub fn as_str(self) -> &'static str {
        match self {
            UnaryOp::Neg => "-",
            UnaryOp::Not => "!",
            UnaryOp::BitNot => "~",
        }
    }
}
