//! Modes: `select<i, ...>(x)` (the modes of a layout, or a tensor seen through them) and `get<i, ...>(x)` (a
//! tuple's element, a layout's or tensor's mode), with the mode indices checked against the known rank.

use crate::body::Fcx;
use crate::builtins::{ArgKind, Builtin, GenericKind};
use crate::check_call::{layout, new_tensor};
use crate::check_type::GenVal;
use crate::errors::SemaError;
use crate::types::{Scalar, Type};
use cutec_grammar::ast::{Arg, Expr, Ident};

impl Fcx<'_, '_> {
    /// CuTe's `select<i, ...>(layout)`: the modes i, ... of a layout; of a tensor, the same elements seen
    /// through those modes (`select<1, 0>(b)` is `b` transposed).
    pub(crate) fn select_modes(&mut self, e: &Expr, name: &Ident, generics: &[Expr], args: &[Arg]) -> Type {
        let errors = self.cx.errors.len();
        let gens: Vec<GenVal> =
            generics.iter().map(|g| self.generic_arg(g, GenericKind::Int, "a mode index of `select`")).collect();
        let (pos, _) = self.split_args("select", args, &[]);
        let sig = "select<i, ...>(x: Layout | Tensor) -> Layout | Tensor";
        self.check_arity("function", name, e.span, &pos, 1, 1, None, Some(sig.to_owned()));
        let mut ty = layout(Some(generics.len()), false);
        for p in &pos {
            let t = self.value(p, Some(Scalar::Int));
            if !ArgKind::LayoutOrTensor.accepts(&t) {
                self.error(SemaError::WrongArgKind {
                    span: p.span,
                    expected: ArgKind::LayoutOrTensor.describe().to_owned(),
                    found: t.describe(),
                    param: "x".to_owned(),
                    signature: sig.to_owned(),
                });
            }
            if let Type::Tensor(t) = &t {
                ty = new_tensor(t.elem.clone(), Some(generics.len()), t.space);
            }
        }
        if self.cx.errors.len() == errors {
            self.fold_call(e, Builtin::Select, generics, &gens, &pos, &ty);
        }
        ty
    }

    /// `get<i, ...>(x)`: a tuple's element, a layout's or tensor's mode.
    pub(crate) fn get_mode(&mut self, x: &Type, gens: &[GenVal], generics: &[Expr]) -> Type {
        let mut t = x.clone();
        for (g, e) in gens.iter().zip(generics) {
            if !self.mode_in_range(&t, g.int(), e) {
                return Type::Error;
            }
            t = match (t, g.int()) {
                (Type::Tuple(v), Some(i)) => {
                    usize::try_from(i).ok().and_then(|i| v.get(i)).cloned().unwrap_or(Type::Error)
                }
                // An index that is a const generic without value: all modes alike, or some integer tuple.
                (Type::Tuple(v), None) if v.windows(2).all(|w| w[0] == w[1]) && !v.is_empty() => v[0].clone(),
                (t @ Type::Tuple(_), None) if t.is_int_tuple() => Type::IntTuple(None),
                (Type::Tuple(_), None) => Type::Error,
                // Untracked entries are taken to be integers (flat shapes); nesting is checked when layouts fold.
                (Type::IntTuple(_), _) => Type::INT,
                (Type::Layout(l), _) => layout(None, l.swizzled),
                (Type::Tensor(t), _) => new_tensor(t.elem.clone(), None, t.space),
                (other, _) => other,
            };
        }
        t
    }

    /// Reports a mode index beyond the known rank of a tuple, layout or tensor (`get<2>` of a rank-2 layout).
    pub(crate) fn mode_in_range(&mut self, x: &Type, index: Option<i64>, e: &Expr) -> bool {
        let (Some(i), Some(rank)) = (index, x.rank()) else { return true };
        if x.is_integer() || (0..rank as i64).contains(&i) {
            return true;
        }
        let what = match x {
            Type::Tensor(_) => "tensor",
            Type::Layout(_) => "layout",
            _ => "tuple",
        };
        let found = format!("mode {i} of a rank-{rank} {what}");
        self.error(SemaError::BadGenericArg {
            span: e.span,
            expected: "a mode index in range",
            found,
            suggestion: None,
        });
        false
    }
}
