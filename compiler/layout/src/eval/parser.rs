//! The expression parser of `eval`: hand-written recursive descent over the tokens of the layout notation.
//!
//! ```text
//! expr    := colon ('o' colon)*          Sw<B,M,S> o [INT o] L is a swizzled layout; A o B is composition
//! colon   := primary [':' primary]       shape:stride
//! primary := INT | '_' | NAME [generics] [args] | '(' [expr (',' expr)* [',']] ')'
//! ```
//! A name that is neither called nor given generics is a dynamic integer; `Sw<B,M,S>` and `Swizzle<B,M,S>`
//! are swizzles.

use crate::eval::EvalError;
use crate::eval::ops::{LayoutOp, apply, apply_named};
use crate::eval::value::Value;
use crate::int_tuple::Int;
use crate::layout::Layout;
use crate::parse::{Cursor, ParseError, Tok};
use crate::swizzle::ComposedLayout;

/// Deepest nesting of parentheses and calls accepted (protects the stack against hostile input).
const MAX_DEPTH: usize = 64;

pub(crate) struct Parser {
    cur: Cursor,
    depth: usize,
}

impl Parser {
    pub(crate) fn new(src: &str) -> Result<Parser, ParseError> {
        Ok(Parser { cur: Cursor::new(src)?, depth: 0 })
    }

    /// A whole input: one expression and the end.
    pub(crate) fn parse_all(&mut self) -> Result<Value, EvalError> {
        let v = self.expr()?;
        self.cur.expect_end()?;
        Ok(v)
    }

    fn expr(&mut self) -> Result<Value, EvalError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.cur.error("expression nested too deeply").into());
        }
        let mut v = self.colon()?;
        while matches!(self.cur.peek(), Tok::Ident(o) if o == "o") {
            self.cur.bump();
            v = match v {
                Value::Swizzle(swizzle) => {
                    let offset = match (self.cur.peek().clone(), self.cur.peek_at(1).clone()) {
                        (Tok::Int(off), Tok::Ident(o)) if o == "o" => {
                            self.cur.bump();
                            self.cur.bump();
                            Int::Static(off)
                        }
                        _ => Int::Static(0),
                    };
                    let layout = self.colon()?.layout(LayoutOp::Composition).map_err(EvalError::Layout)?;
                    Value::Composed(ComposedLayout { swizzle, offset, layout })
                }
                lhs => {
                    let rhs = self.colon()?;
                    apply(crate::eval::LayoutOp::Composition, &[], &[lhs, rhs]).map_err(EvalError::Layout)?
                }
            };
        }
        self.depth -= 1;
        Ok(v)
    }

    fn colon(&mut self) -> Result<Value, EvalError> {
        let at = self.cur.offset();
        let shape = self.primary()?;
        if !self.cur.eat(':') {
            return Ok(shape);
        }
        let stride_at = self.cur.offset();
        let stride = self.primary()?;
        let s = shape.to_int_tuple().ok_or_else(|| ParseError {
            offset: at,
            message: format!("the shape of a layout must be an integer tuple, found {}", shape.kind()),
        })?;
        let d = stride.to_int_tuple().ok_or_else(|| ParseError {
            offset: stride_at,
            message: format!("the stride of a layout must be an integer tuple, found {}", stride.kind()),
        })?;
        Layout::new(s, d).map(Value::Layout).map_err(|e| ParseError { offset: at, message: e.to_string() }.into())
    }

    fn primary(&mut self) -> Result<Value, EvalError> {
        let at = self.cur.offset();
        match self.cur.bump() {
            Tok::Int(v) => Ok(Value::Int(Int::Static(v))),
            Tok::Ident(name) if name == "_" => Ok(Value::Underscore),
            Tok::Ident(name) if name == "Sw" || name == "Swizzle" => Ok(Value::Swizzle(self.cur.swizzle_args()?)),
            Tok::Ident(name) => {
                let generics = if *self.cur.peek() == Tok::Punct('<') { Some(self.cur.int_args()?) } else { None };
                if *self.cur.peek() == Tok::Punct('(') {
                    self.cur.bump();
                    let args = self.list()?;
                    apply_named(&name, generics.as_deref().unwrap_or(&[]), &args).map_err(EvalError::Layout)
                } else if let Some(g) = generics {
                    apply_named(&name, &g, &[]).map_err(EvalError::Layout)
                } else {
                    Ok(Value::Int(Int::named(name)))
                }
            }
            Tok::Punct('(') => {
                let items = self.list()?;
                Ok(Value::Tuple(items))
            }
            t => Err(ParseError { offset: at, message: format!("expected an expression, found {t}") }.into()),
        }
    }

    /// The items of a parenthesised list, after `(`, through `)`.
    fn list(&mut self) -> Result<Vec<Value>, EvalError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.cur.error("expression nested too deeply").into());
        }
        let mut items = Vec::new();
        while !self.cur.eat(')') {
            items.push(self.expr()?);
            if !self.cur.eat(',') {
                self.cur.expect(')')?;
                break;
            }
        }
        self.depth -= 1;
        Ok(items)
    }
}
