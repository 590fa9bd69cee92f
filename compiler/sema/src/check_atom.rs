//! Hopper atoms built from generic arguments (`Swizzle<B, M, S>`, the `SW*` swizzle atoms, `wgmma<M, N, K, A, B, C>`)
//! with the hardware's constraints, and the methods of a tiled MMA.

use crate::Resolution;
use crate::body::{Fcx, similar};
use crate::builtins::{Builtin, BuiltinInfo, Method, TILED_MMA_METHODS};
use crate::check_call::{layout, new_tensor, span_of, tensor};
use crate::check_type::GenVal;
use crate::errors::SemaError;
use crate::types::{MmaAtom, Scalar, Space, SwizzleType, Type};
use cutec_diagnostics::Span;
use cutec_grammar::ast::{Arg, Expr, Ident};

impl Fcx<'_, '_> {
    /// `Swizzle<B, M, S>`, `SW128_K<T>` and friends, `wgmma<M, N, K, A, B, C>`: values built from generics.
    pub fn constructor(&mut self, e: &Expr, b: &BuiltinInfo, generics: &[Expr]) -> Type {
        let Some(g) = self.builtin_generics(b, e.span, generics) else { return Type::Error };
        if g.contains(&GenVal::Error) {
            return Type::Error;
        }
        match b.builtin {
            Builtin::Swizzle => {
                let (bits, base, shift) = (g[0].int(), g[1].int(), g[2].int());
                let bad = bits.is_some_and(|b| b < 0)
                    || base.is_some_and(|m| m < 0)
                    || matches!((bits, shift), (Some(b), Some(s)) if s.abs() < b);
                if bad {
                    self.error(SemaError::BadAtom {
                        span: span_of(generics, e.span),
                        problem: "`Swizzle<B, M, S>` needs B >= 0, M >= 0 and |S| >= B".to_owned(),
                        help: Some("`Swizzle<3, 4, 3>` is the 128-byte swizzle of 16-bit elements".to_owned()),
                    });
                }
                Type::Swizzle(SwizzleType { bits, base, shift })
            }
            Builtin::Wgmma => {
                let [m, n, k, a, bb, c] = [g[0], g[1], g[2], g[3], g[4], g[5]];
                let (Some(a), Some(bt), Some(c)) = (a.dtype(), bb.dtype(), c.dtype()) else { return Type::Error };
                let atom = MmaAtom { m: m.int(), n: n.int(), k: k.int(), a, b: bt, c };
                self.check_wgmma(&atom, generics);
                Type::MmaAtom(atom)
            }
            _ => {
                if g[0].dtype() == Some(Scalar::Bool) {
                    let problem = "swizzle atoms need a numeric element type".to_owned();
                    self.error(SemaError::BadAtom { span: generics[0].span, problem, help: None });
                }
                layout(Some(2), true)
            }
        }
    }

    /// The shapes and types `wgmma.mma_async` supports (PTX ISA, "Asynchronous Warpgroup Level Matrix
    /// Instructions"): M = 64; N a multiple of 8 up to 256; K = 16 for 16-bit and 32 for 8-bit operands.
    fn check_wgmma(&mut self, atom: &MmaAtom, generics: &[Expr]) {
        let span = |i: usize| generics.get(i).map_or(Span::default(), |g| g.span);
        let bad = |this: &mut Self, i: usize, problem: String, help: Option<String>| {
            this.error(SemaError::BadAtom { span: span(i), problem, help });
        };
        if let Some(m) = atom.m
            && m != 64
        {
            bad(
                self,
                0,
                format!("wgmma needs M = 64, found {m}"),
                Some("tile M over warpgroups with `tiled_mma`".into()),
            );
        }
        if let Some(n) = atom.n
            && !(8..=256).contains(&n) | (n % 8 != 0)
        {
            bad(self, 1, format!("wgmma needs N to be a multiple of 8 in 8..=256, found {n}"), None);
        }
        use Scalar::*;
        let sixteen = matches!((atom.a, atom.b), (F16, F16) | (BF16, BF16));
        let fp8 = atom.a.is_fp8() && atom.b.is_fp8();
        let int8 = matches!(atom.a, I8 | U8) && matches!(atom.b, I8 | U8);
        if !(sixteen || fp8 || int8) {
            let problem = format!("wgmma has no `{}` x `{}` form", atom.a, atom.b);
            let help = Some("operands are both f16, both bf16, fp8 (e4m3/e5m2) or 8-bit integers".to_owned());
            bad(self, 3, problem, help);
            return;
        }
        let want_k = if sixteen { 16 } else { 32 };
        if let Some(k) = atom.k
            && k != want_k
        {
            bad(self, 2, format!("wgmma with `{}` operands needs K = {want_k}, found {k}", atom.a), None);
        }
        let c_ok = if int8 { atom.c == I32 } else { atom.c == F32 || (atom.c == F16 && atom.a != BF16) };
        if !c_ok {
            let want = if int8 {
                "i32"
            } else if atom.a == BF16 {
                "f32"
            } else {
                "f32 or f16"
            };
            bad(self, 5, format!("the accumulator of this wgmma must be {want}, found `{}`", atom.c), None);
        }
    }

    /// `receiver.method(args)`: the methods of a tiled MMA.
    pub fn method_call(&mut self, e: &Expr, receiver: &Expr, method: &Ident, generics: &[Expr], args: &[Arg]) -> Type {
        let rt = self.value(receiver, None);
        let names: Vec<&str> = TILED_MMA_METHODS.iter().map(|m| m.name).collect();
        let info = match &rt {
            Type::TiledMma(_) => TILED_MMA_METHODS.iter().find(|m| m.name == method.name),
            _ => None,
        };
        let (Type::TiledMma(tm), Some(info)) = (&rt, info) else {
            if !rt.is_error() {
                let is_mma = matches!(rt, Type::TiledMma(_));
                let suggestion = if is_mma { similar(&method.name, names.iter().copied()) } else { None };
                let available = if is_mma {
                    names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
                } else {
                    "none".into()
                };
                let ty = if is_mma { "a tiled MMA".to_owned() } else { rt.describe() };
                self.error(SemaError::UnknownMethod {
                    name: method.name.clone(),
                    span: method.span,
                    ty,
                    suggestion,
                    available,
                });
            }
            self.skip_generics(generics);
            self.skip_args(args);
            return Type::Error;
        };
        let atom = tm.atom;
        self.set_res(e.id, Resolution::Method(info.method));
        if !generics.is_empty() {
            self.error(SemaError::UnexpectedGenerics {
                name: method.name.clone(),
                span: span_of(generics, method.span),
            });
            self.skip_generics(generics);
        }
        let (pos, _) = self.split_args(info.name, args, &[]);
        let (n, sig) = (info.params.len(), Some(info.signature()));
        self.check_arity("method", method, e.span, &pos, n, n, None, sig);
        let row = crate::builtins::info(Builtin::TiledMma); // for the argument-kind messages' signature
        let types = self.builtin_args(
            &BuiltinInfo { name: info.name, params: info.params, ret: info.ret, ..*row },
            info.params,
            &pos,
        );
        let arg = types.first().cloned().unwrap_or(Type::Error);
        match info.method {
            Method::FragmentA => new_tensor(Type::Scalar(atom.a), None, Space::Rmem),
            Method::FragmentB => new_tensor(Type::Scalar(atom.b), None, Space::Rmem),
            Method::FragmentC => new_tensor(Type::Scalar(atom.c), None, Space::Rmem),
            Method::PartitionA | Method::PartitionB | Method::PartitionC => match tensor(&arg) {
                Some(t) => new_tensor(t.elem.clone(), None, t.space),
                None => Type::Error,
            },
        }
    }
}
