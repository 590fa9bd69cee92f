//! Drives the lalrpop parser over the adapter's tokens and turns its errors into [`SyntaxError`]s.

use crate::MAX_NESTING;
use crate::ast::{Arg, Block, Expr, ExprKind, Module, NodeId, Span, Stmt, StmtKind, TypeExpr, TypeExprKind};
use crate::error::{SyntaxError, SyntaxErrorKind};
use crate::lexer::{self, Lexed};
use crate::token::Token;
use lalrpop_util::{ErrorRecovery, ParseError};
use std::cell::{Cell, RefCell};
use std::convert::Infallible;

lalrpop_util::lalrpop_mod!(
    #[allow(clippy::all, clippy::pedantic, unused_parens, dead_code, unused_imports)]
    grammar
);

type Recovery<'src> = ErrorRecovery<usize, Token<'src>, Infallible>;

/// The depth recorded for an expression that was replaced by `Error` for being too deep: its ancestors are
/// replaced too, without reporting again.
const POISONED: u16 = u16::MAX;

/// State shared by the grammar's actions: the id counter, the depth of every expression built so far (indexed
/// by id), and the errors the parser recovered from.
pub struct Ctx<'src> {
    next_id: Cell<u32>,
    depth: RefCell<Vec<u16>>,
    recovered: RefCell<Vec<Recovery<'src>>>,
    too_deep: RefCell<Vec<Span>>,
    /// Where a chain of binary operators (`1 + 1 + ... + 1`) crossed the depth limit: said as a chain, not as
    /// nesting, since nothing in it looks nested.
    chains_too_long: RefCell<Vec<Span>>,
}

impl<'src> Ctx<'src> {
    fn new() -> Self {
        Ctx {
            next_id: Cell::new(0),
            depth: RefCell::new(Vec::new()),
            recovered: RefCell::new(Vec::new()),
            too_deep: RefCell::new(Vec::new()),
            chains_too_long: RefCell::new(Vec::new()),
        }
    }

    pub fn span(&self, l: usize, r: usize) -> Span {
        Span::new(l, r.max(l))
    }

    /// The span of a function signature: from its keyword to the end of its last attribute, or to `r` (the end
    /// of the parameters, return type or launch clause) when it has none.
    pub fn sig_span(&self, l: usize, r: usize, attrs: &[crate::ast::Attribute]) -> Span {
        let end = attrs.last().map_or(r, |a| a.span.end as usize);
        self.span(l, end)
    }

    /// A fresh id for a binding site (depth 0: bindings are not expressions).
    pub fn id(&self) -> NodeId {
        self.fresh(0)
    }

    fn fresh(&self, depth: u16) -> NodeId {
        let id = self.next_id.get();
        self.next_id.set(id + 1);
        self.depth.borrow_mut().push(depth);
        NodeId(id)
    }

    fn depth_of(&self, e: &Expr) -> u16 {
        self.depth.borrow().get(e.id.0 as usize).copied().unwrap_or(0)
    }

    fn type_depth(&self, t: &TypeExpr) -> u16 {
        match &t.kind {
            TypeExprKind::Named { args, .. } => args.iter().map(|a| self.depth_of(a)).max().unwrap_or(0),
            TypeExprKind::Tuple(ts) => ts.iter().map(|t| self.type_depth(t)).max().unwrap_or(0),
            TypeExprKind::Error => 0,
        }
        .saturating_add(1)
    }

    /// Builds an expression node, giving it an id and checking its depth: an expression nested deeper than
    /// [`MAX_NESTING`] becomes `Error`, reported once at the node that crossed the limit (its enclosing
    /// expressions become `Error` silently), so that no recursive pass over the tree can overflow the stack.
    pub fn expr(&self, kind: ExprKind, l: usize, r: usize) -> Expr {
        let span = self.span(l, r);
        let children = self.children_depth(&kind);
        if children == POISONED {
            return Expr { id: self.fresh(POISONED), kind: ExprKind::Error, span };
        }
        if usize::from(children) >= MAX_NESTING {
            // A binary operator whose left operand is one too, and the deeper side: a flat chain such as a sum.
            let chain = matches!(&kind, ExprKind::Binary { lhs, rhs, .. }
                if matches!(lhs.kind, ExprKind::Binary { .. } | ExprKind::Error)
                    && self.depth_of(lhs) >= self.depth_of(rhs));
            if chain { &self.chains_too_long } else { &self.too_deep }.borrow_mut().push(span);
            return Expr { id: self.fresh(POISONED), kind: ExprKind::Error, span };
        }
        Expr { id: self.fresh(children + 1), kind, span }
    }

    fn children_depth(&self, kind: &ExprKind) -> u16 {
        let d = |e: &Expr| self.depth_of(e);
        let max = |it: &mut dyn Iterator<Item = u16>| it.max().unwrap_or(0);
        match kind {
            ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Bool(_)
            | ExprKind::Str(_)
            | ExprKind::Wildcard
            | ExprKind::Error => 0,
            ExprKind::Name { generics, .. } => max(&mut generics.iter().map(d)),
            ExprKind::Tuple(es) => max(&mut es.iter().map(d)),
            ExprKind::Layout { shape, stride } => d(shape).max(d(stride)),
            ExprKind::Compose { outer, inner } => d(outer).max(d(inner)),
            ExprKind::Unary { operand, .. } => d(operand),
            ExprKind::Binary { lhs, rhs, .. } => d(lhs).max(d(rhs)),
            ExprKind::Call { callee, args } => d(callee).max(max(&mut args.iter().map(|a| d(&a.value)))),
            ExprKind::MethodCall { receiver, generics, args, .. } => {
                d(receiver).max(max(&mut generics.iter().map(d))).max(max(&mut args.iter().map(|a| d(&a.value))))
            }
            ExprKind::Field { base, .. } => d(base),
            ExprKind::Index { base, indices } => d(base).max(max(&mut indices.iter().map(d))),
            ExprKind::Cast { value, ty } => d(value).max(self.type_depth(ty)),
        }
    }

    /// `callee(args)`; a call of a field, `a.f(x)`, is the method call `a.f(x)`.
    pub fn call(&self, callee: Expr, args: Vec<Arg>, l: usize, r: usize) -> Expr {
        // A parenthesised field, `(a.f)(x)`, has its span widened to the parentheses: it stays a call.
        match callee.kind {
            ExprKind::Field { base, field } if callee.span.end == field.span.end => {
                let kind = ExprKind::MethodCall { receiver: base, method: field, generics: Vec::new(), args };
                self.expr(kind, l, r)
            }
            kind => {
                let callee = Expr { kind, ..callee };
                self.expr(ExprKind::Call { callee: Box::new(callee), args }, l, r)
            }
        }
    }

    /// `(e)`: the expression itself, its span covering the parentheses.
    /// `outer o inner`. CuTe prints a swizzled layout as `Sw<B,M,S> o offset o L`; an offset of `0` is the
    /// identity and is dropped, so that what CuTe (and cutec) prints reads back as the same value.
    pub fn compose(&self, outer: Expr, inner: Expr, l: usize, r: usize) -> Expr {
        if let ExprKind::Int(0) = outer.kind {
            return Expr { span: self.span(l, r), ..inner };
        }
        self.expr(ExprKind::Compose { outer: Box::new(outer), inner: Box::new(inner) }, l, r)
    }

    pub fn paren(&self, e: Expr, l: usize, r: usize) -> Expr {
        Expr { span: self.span(l, r), ..e }
    }

    pub fn error_expr(&self, l: usize, r: usize) -> Expr {
        self.expr(ExprKind::Error, l, r)
    }

    /// Folds `if c {..} else if d {..} ... else {..}` into nested `If` statements: each `else if` is an `If`
    /// alone in the else block, spanning from its `if` to the end of the chain. A chain longer than
    /// [`MAX_NESTING`] is cut there and reported.
    pub fn if_chain(
        &self,
        cond: Expr,
        then_block: Block,
        mut elifs: Vec<(usize, Expr, Block)>,
        els: Option<Block>,
    ) -> StmtKind {
        let mut els = els;
        if elifs.len() > MAX_NESTING {
            let cut = &elifs[MAX_NESTING];
            self.too_deep.borrow_mut().push(self.span(cut.0, cut.2.span.end as usize));
            elifs.truncate(MAX_NESTING);
            els = None;
        }
        let chain_end = |els: &Option<Block>, last: &Block| els.as_ref().map_or(last.span.end, |b| b.span.end);
        let mut tail = els;
        while let Some((start, c, block)) = elifs.pop() {
            let span = Span { start: start as u32, end: chain_end(&tail, &block) };
            let stmt = Stmt { kind: StmtKind::If { cond: c, then_block: block, else_block: tail }, span };
            tail = Some(Block { stmts: vec![stmt], span });
        }
        StmtKind::If { cond, then_block, else_block: tail }
    }

    pub fn recover(&self, e: Recovery<'src>) {
        self.recovered.borrow_mut().push(e);
    }
}

/// The text of a doc comment without its marker and without the one space that conventionally follows it.
pub fn doc_text(text: &str) -> String {
    text.strip_prefix(' ').unwrap_or(text).to_string()
}

/// Parses a whole file. Never panics; a broken file gives a tree with `Error` nodes and the errors.
pub fn parse(src: &str) -> (Module, Vec<SyntaxError>) {
    let lexed = lexer::lex(src);
    let ctx = Ctx::new();
    let tokens = lexed.tokens.iter().map(|&t| Ok::<_, Infallible>(t));
    let result = grammar::ModuleParser::new().parse(&ctx, tokens);
    let mut errors = lexed.errors.clone();
    let mut parse_errors: Vec<ParseError<usize, Token<'_>, Infallible>> =
        ctx.recovered.take().into_iter().map(|r| r.error).collect();
    let whole = Span::new(0, src.len());
    let mut module = match result {
        Ok(module) => module,
        Err(e) => {
            parse_errors.push(e);
            Module { docs: Vec::new(), items: Vec::new(), span: whole, node_count: 0 }
        }
    };
    for e in parse_errors {
        if let Some(error) = convert(e, &lexed, src) {
            errors.push(error);
        }
    }
    for span in ctx.too_deep.take() {
        errors.push(SyntaxError::new(SyntaxErrorKind::NestingTooDeep, span));
    }
    for span in ctx.chains_too_long.take() {
        errors.push(SyntaxError::new(SyntaxErrorKind::OperatorChainTooLong, span));
    }
    add_unclosed(&mut errors, &lexed, src);
    errors.sort_by_key(|e| (e.span.start, e.span.end));
    errors.dedup_by(|a, b| a.span == b.span && a.kind == b.kind);
    module.span = whole;
    module.node_count = ctx.next_id.get();
    (module, errors)
}

/// Tokens that continue an expression: after a complete operand, lalrpop expects all of them, and listing them
/// buries the one token that matters (`;`, `)`, `{`).
const CONTINUATIONS: &[&str] = &[
    "+",
    "-",
    "*",
    "/",
    "%",
    "<<",
    ">>",
    "&",
    "|",
    "^",
    "&&",
    "||",
    "==",
    "!=",
    "<",
    "<=",
    ">",
    ">=",
    "as",
    ".",
    "[",
    "(",
    ":",
    "=",
    "+=",
    "-=",
    "*=",
    "/=",
    "%=",
    "&=",
    "|=",
    "^=",
    "<<=",
    ">>=",
    "GenericOpen",
];
/// Tokens that start an expression.
const STARTERS: &[&str] = &["Int", "Float", "Ident", "Str", "Bool", "_", "(", "-", "!", "~"];

/// Tokens that start a statement but not an expression.
const STATEMENT_KEYWORDS: &[&str] = &["let", "for", "while", "if", "return", "break", "continue", "role", "{"];
/// Tokens that start an item.
const ITEM_STARTERS: &[&str] = &["kernel", "fn", "const", "use", "DocComment"];

/// Expected-token names as lalrpop writes them (`"\"(\""`, `"Ident"`), turned into diagnostic words and
/// summarised: the tokens that would continue an expression are left out (or become "an operator" when nothing
/// else was possible), the tokens that start one become "an expression", and `{name, (}` is "a type".
fn expected_words(expected: &[String]) -> Vec<String> {
    let raw: Vec<String> = expected.iter().map(|e| e.trim_matches('"').replace("\\\"", "\"")).collect();
    let has = |s: &str| raw.iter().any(|r| r == s);
    let binary_ops = CONTINUATIONS[..18].iter().filter(|o| has(o)).count();
    let continuing = binary_ops >= 8;
    let starting = STARTERS.iter().filter(|s| has(s)).count() >= 7;
    if raw.len() == 2 && has("Ident") && has("(") {
        return vec!["a type".to_string()];
    }
    // Where a statement may start, the statement keywords come with the expression starters.
    let statement = starting && has("let") && has("for");
    let item = has("kernel") && has("fn") && has("const") && has("use");
    let mut words = Vec::new();
    if statement {
        words.push("a statement".to_string());
    } else if starting {
        words.push("an expression".to_string());
    }
    if item {
        words.push("an item".to_string());
    }
    for r in &raw {
        let r = r.as_str();
        // `A o B` may continue any expression; it is never the helpful suggestion when something else fits.
        if r == "o" && raw.len() > 1 {
            continue;
        }
        if (continuing && CONTINUATIONS.contains(&r))
            || (starting && STARTERS.contains(&r))
            || (statement && STATEMENT_KEYWORDS.contains(&r))
            || (item && ITEM_STARTERS.contains(&r))
        {
            continue;
        }
        let word = match r {
            "Ident" => "a name".to_string(),
            "Int" => "an integer".to_string(),
            "Float" => "a float".to_string(),
            "Str" => "a string".to_string(),
            "Bool" => "`true` or `false`".to_string(),
            "DocComment" => "a doc comment".to_string(),
            "ModuleDoc" => continue,
            "GenericOpen" => "`<`".to_string(),
            "GenericClose" => "`>`".to_string(),
            other => format!("`{other}`"),
        };
        if !words.contains(&word) {
            words.push(word);
        }
    }
    if continuing && words.is_empty() {
        words.push("an operator".to_string());
    }
    words
}

fn convert(error: ParseError<usize, Token<'_>, Infallible>, lexed: &Lexed<'_>, src: &str) -> Option<SyntaxError> {
    match error {
        ParseError::UnrecognizedToken { token: (start, token, end), expected } => {
            let prev_end = prev_token_end(lexed, start);
            // Right after a dropped character or a cut-short string, the parser's complaint is a consequence.
            let gap_start = prev_end.unwrap_or(0);
            if lexed.suspects.iter().any(|&s| gap_start <= s && s <= start) {
                return None;
            }
            let span = Span::new(start, end);
            let has = |name: &str| expected.iter().any(|e| e.trim_matches('"') == name);
            // A keyword where a name is wanted; where an expression could start, the keyword is rather misplaced.
            // `o` is one too: the composition operator (`A o B`) cannot name anything.
            if (token.is_keyword() || token == Token::Compose) && has("Ident") && !has("Int") {
                let keyword = token.text().unwrap_or("?").to_string();
                return Some(SyntaxError::new(SyntaxErrorKind::KeywordAsName { keyword }, span));
            }
            // After the right operand of a comparison, every operator but the comparisons may follow.
            let comparison = matches!(token, Token::Lt | Token::Le | Token::Gt | Token::Ge | Token::EqEq | Token::Ne);
            if comparison && has("&&") && !has("<") && !has("==") {
                return Some(SyntaxError::new(SyntaxErrorKind::ChainedComparison, span));
            }
            if token == Token::Colon && !has(":") && follows_layout(lexed, start) {
                return Some(SyntaxError::new(SyntaxErrorKind::ChainedLayout, span));
            }
            let words = expected_words(&expected);
            let mut e = SyntaxError::new(
                SyntaxErrorKind::UnexpectedToken { found: token.to_string(), expected: words.clone() },
                span,
            );
            // Point at the opener that the expected closer would close: `f(a, b;` labels the `(`.
            if let Some(open) = nearest_unclosed(lexed, span.start, &words) {
                e = e.with_related(open, "unclosed delimiter");
            }
            // A missing `;` at the end of a line is best shown where it belongs: right after the previous token.
            if words.first().is_some_and(|w| w == "`;`")
                && let Some(prev_end) = prev_end
                && src.get(prev_end..start).is_some_and(|gap| gap.contains('\n'))
            {
                e = e.with_related(Span::new(prev_end, prev_end), "help: add `;` here");
            }
            Some(e)
        }
        ParseError::UnrecognizedEof { location, expected } => {
            if lexed.truncated || !lexed.unclosed.is_empty() {
                return None;
            }
            let at = location.min(src.len());
            if let Some(&(start, Token::DocComment(_), end)) = lexed.tokens.last() {
                return Some(SyntaxError::new(SyntaxErrorKind::DanglingDocComment, Span::new(start, end)));
            }
            Some(SyntaxError::new(
                SyntaxErrorKind::UnexpectedEof { expected: expected_words(&expected) },
                Span::new(at, at),
            ))
        }
        ParseError::ExtraToken { token: (start, token, end) } => Some(SyntaxError::new(
            SyntaxErrorKind::UnexpectedToken { found: token.to_string(), expected: Vec::new() },
            Span::new(start, end),
        )),
        ParseError::InvalidToken { location } => Some(SyntaxError::new(
            SyntaxErrorKind::UnexpectedEof { expected: Vec::new() },
            Span::new(location, location),
        )),
        ParseError::User { error } => match error {},
    }
}

/// Whether the `:` at `start` comes after a complete layout `shape:stride` of the same expression: a `:` at the
/// same bracket depth earlier in the expression, which is not the `:` of a binding (`let x: T`).
fn follows_layout(lexed: &Lexed<'_>, start: usize) -> bool {
    let tokens = &lexed.tokens;
    let mut depth = 0usize;
    let mut k = tokens.partition_point(|t| t.0 < start);
    while k > 0 {
        k -= 1;
        match tokens[k].1 {
            Token::RParen | Token::RBracket | Token::GenericClose => depth += 1,
            Token::LParen | Token::LBracket | Token::GenericOpen => match depth.checked_sub(1) {
                Some(d) => depth = d,
                None => return false,
            },
            Token::Colon if depth == 0 => {
                let binder = k >= 2
                    && matches!(tokens[k - 1].1, Token::Ident(_))
                    && matches!(tokens[k - 2].1, Token::Let | Token::Mut | Token::Const | Token::LParen | Token::Comma);
                return !binder;
            }
            Token::Semi | Token::LBrace | Token::RBrace | Token::Comma | Token::Eq if depth == 0 => return false,
            _ => {}
        }
    }
    false
}

/// The last unclosed opener before `start` whose closer is one of the `expected` words, found by a binary search
/// per kind of delimiter so that a parse error costs a logarithm of the openers, not their number.
fn nearest_unclosed(lexed: &Lexed<'_>, start: u32, expected: &[String]) -> Option<Span> {
    lexed
        .unclosed_by_kind
        .iter()
        .filter(|(d, _)| expected.contains(&format!("`{}`", crate::error::closer(*d))))
        .filter_map(|(_, openers)| openers.partition_point(|o| o.start < start).checked_sub(1).map(|i| openers[i]))
        .max_by_key(|o| o.start)
}

fn prev_token_end(lexed: &Lexed<'_>, start: usize) -> Option<usize> {
    let i = lexed.tokens.partition_point(|t| t.0 < start);
    i.checked_sub(1).map(|i| lexed.tokens[i].2)
}

/// One error per unclosed delimiter, pointing at the opener, with the end of the file as a secondary label.
fn add_unclosed(errors: &mut Vec<SyntaxError>, lexed: &Lexed<'_>, src: &str) {
    if lexed.truncated {
        return;
    }
    let eof = Span::new(src.len(), src.len());
    let pointed_at: std::collections::HashSet<Span> =
        errors.iter().flat_map(|e| e.related.iter().map(|(s, _)| *s)).collect();
    for (open, delim) in &lexed.unclosed {
        if *delim == '<' {
            continue;
        }
        // An opener already pointed at by a parse error needs no error of its own.
        if pointed_at.contains(open) {
            continue;
        }
        errors.push(
            SyntaxError::new(SyntaxErrorKind::UnclosedDelimiter { delim: *delim }, *open)
                .with_related(eof, "the file ends here"),
        );
    }
}
