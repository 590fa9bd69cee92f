//! Swizzles and swizzled layouts (CuTe's `swizzle.hpp`, `layout_composed.hpp`, `swizzle_layout.hpp`).
//!
//! `Swizzle<B,M,S>` xors the `B` bits at `M + max(0,S)` (the YYY mask) into the `B` bits at `M - min(0,S)` (the
//! ZZZ mask):
//! ```text
//! 0bxxxxxxxxxxxxxxxYYYxxxxxxxZZZxxxx
//!                                ^--^ M: least-significant bits kept constant
//!                   ^-^       ^-^     B: bits in the mask
//!                     ^---------^     S: distance of the shift
//! ```
//! A swizzled layout `Sw o offset o L` maps a coordinate `c` to `Sw(offset + L(c))`; its domain (shape, size,
//! rank, tiling) is the one of `L`.

use std::fmt;

use crate::error::{LayoutError, Result, SwizzleRule, invalid};
use crate::eval::LayoutOp;
use crate::int_tuple::{self, Coord, Int, mul};
use crate::layout::Layout;

/// `Swizzle<B,M,S>`. Invariants: `B >= 0`, `M >= 0`, `|S| >= B`, and all masks fit in 62 bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Swizzle {
    bits: i32,
    base: i32,
    shift: i32,
}

impl Swizzle {
    /// `Swizzle<bits, base, shift>`.
    pub fn new(bits: i64, base: i64, shift: i64) -> Result<Swizzle> {
        let broken = |rule| Err(LayoutError::BadSwizzle { bits, base, shift, rule });
        if bits < 0 || base < 0 {
            return broken(SwizzleRule::NonNegative);
        }
        if shift.unsigned_abs() < bits.unsigned_abs() {
            return broken(SwizzleRule::ShiftCoversBits);
        }
        if bits.saturating_add(base).saturating_add(shift.saturating_abs()) > 62 {
            return broken(SwizzleRule::Fits);
        }
        Ok(Swizzle { bits: bits as i32, base: base as i32, shift: shift as i32 })
    }

    /// `Swizzle<0,4,3>`: the identity, as CuTe's unswizzled (`INTERLEAVE`) GMMA atoms write it.
    pub const fn identity() -> Swizzle {
        Swizzle { bits: 0, base: 4, shift: 3 }
    }

    pub fn bits(&self) -> i64 {
        self.bits as i64
    }

    pub fn base(&self) -> i64 {
        self.base as i64
    }

    pub fn shift(&self) -> i64 {
        self.shift as i64
    }

    /// The YYY mask: the bits that are read.
    pub fn yyy_mask(&self) -> i64 {
        ((1i64 << self.bits) - 1) << (self.base + self.shift.max(0))
    }

    /// The ZZZ mask: the bits that are flipped.
    pub fn zzz_mask(&self) -> i64 {
        ((1i64 << self.bits) - 1) << (self.base - self.shift.min(0))
    }

    /// The smallest power of two `P` with `Sw(x + k P) = Sw(x) + k P`: the swizzle reads and flips only bits
    /// below it (1 for the identity `Swizzle<0, M, S>`).
    pub fn period(&self) -> i64 {
        let touched = self.yyy_mask() | self.zzz_mask();
        1i64 << (64 - touched.leading_zeros())
    }

    /// `Sw(offset) = offset ^ shiftr(offset & YYY, S)`. An involution: `Sw(Sw(x)) == x`.
    pub fn apply(&self, offset: i64) -> i64 {
        let y = offset & self.yyy_mask();
        let moved = if self.shift >= 0 { y >> self.shift } else { y << -self.shift };
        offset ^ moved
    }

    /// `upcast<N>(Sw)`: the swizzle on elements `N` times wider (`N` a power of two): `M` shrinks by `log2 N`,
    /// and bits below the new element size disappear.
    pub fn upcast(&self, n: i64) -> Result<Swizzle> {
        let log = log2_exact(LayoutOp::Upcast, n)?;
        let new_base = self.base() - log;
        if new_base >= 0 {
            Swizzle::new(self.bits(), new_base, self.shift())
        } else {
            Swizzle::new((self.bits() + new_base).max(0), 0, self.shift())
        }
    }

    /// `downcast<N>(Sw)`: the swizzle on elements `N` times narrower: `M` grows by `log2 N`.
    pub fn downcast(&self, n: i64) -> Result<Swizzle> {
        let log = log2_exact(LayoutOp::Downcast, n)?;
        Swizzle::new(self.bits(), self.base() + log, self.shift())
    }
}

fn log2_exact(op: LayoutOp, n: i64) -> Result<i64> {
    if n < 1 || n.count_ones() != 1 {
        return Err(invalid(op, format!("the factor {n} of a swizzle must be a power of two")));
    }
    Ok(n.trailing_zeros() as i64)
}

impl fmt::Display for Swizzle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Sw<{},{},{}>", self.bits, self.base, self.shift)
    }
}

/// A swizzled layout `Sw o offset o L` (CuTe's `ComposedLayout<Swizzle, Offset, Layout>`): `c -> Sw(offset + L(c))`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ComposedLayout {
    pub swizzle: Swizzle,
    pub offset: Int,
    pub layout: Layout,
}

impl fmt::Display for ComposedLayout {
    /// CuTe's print: `Sw<3,4,3> o 0 o (8,64):(64,1)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} o {} o {}", self.swizzle, self.offset, self.layout)
    }
}

impl ComposedLayout {
    /// `composition(Sw, L)`: `Sw o 0 o L`.
    pub fn new(swizzle: Swizzle, layout: Layout) -> ComposedLayout {
        ComposedLayout { swizzle, offset: Int::Static(0), layout }
    }

    /// The same swizzle and offset over `f(L)`: how CuTe applies shape operations (tiling, coalescing,
    /// products) to a composed layout.
    pub fn map(&self, f: impl FnOnce(&Layout) -> Result<Layout>) -> Result<ComposedLayout> {
        Ok(ComposedLayout { swizzle: self.swizzle, offset: self.offset.clone(), layout: f(&self.layout)? })
    }

    /// `(Sw o off o L)(c) = Sw(off + L(c))`.
    pub fn call(&self, coord: &Coord) -> Result<i64> {
        let op = LayoutOp::Crd2idx;
        let inner = int_tuple::add(op, &self.offset, &self.layout.call(coord)?)?;
        Ok(self.swizzle.apply(inner.need(op)?))
    }

    /// All values for `0 <= i < size`.
    pub fn indices(&self) -> Result<Vec<i64>> {
        let off = self.offset.need(LayoutOp::Size)?;
        self.layout.indices()?.into_iter().map(|i| Ok(self.swizzle.apply(off.checked_add(i).unwrap_or(i)))).collect()
    }

    /// `slice_and_offset(c, Sw o off o L)` as `layout_composed.hpp` computes it: the offset moves into the
    /// composed layout (`Sw o (off + L(c)) o slice(c, L)`) and the pointer offset is 0. CuTe's swizzle-specific
    /// decay to a plain layout is not attempted.
    pub fn slice_and_offset(&self, coord: &Coord) -> Result<(ComposedLayout, Int)> {
        let (slice, off) = self.layout.slice_and_offset(coord)?;
        let offset = int_tuple::add(LayoutOp::Slice, &self.offset, &off)?;
        Ok((ComposedLayout { swizzle: self.swizzle, offset, layout: slice }, Int::Static(0)))
    }

    /// `upcast<N>`: upcast of the swizzle, the offset (exactly divided) and the layout.
    pub fn upcast(&self, n: i64) -> Result<ComposedLayout> {
        Ok(ComposedLayout {
            swizzle: self.swizzle.upcast(n)?,
            offset: int_tuple::safe_div(LayoutOp::Upcast, &self.offset, &Int::Static(n))?,
            layout: self.layout.upcast(n)?,
        })
    }

    /// `downcast<N>`: downcast of the swizzle, the offset and the layout.
    pub fn downcast(&self, n: i64) -> Result<ComposedLayout> {
        Ok(ComposedLayout {
            swizzle: self.swizzle.downcast(n)?,
            offset: mul(LayoutOp::Downcast, &self.offset, &Int::Static(n))?,
            layout: self.layout.downcast(n)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_period_is_the_first_power_of_two_above_every_bit_it_touches() {
        for (sw, period) in [((3, 4, 3), 1 << 10), ((3, 3, 3), 512), ((2, 0, -2), 16), ((0, 4, 3), 1)] {
            let s = Swizzle::new(sw.0, sw.1, sw.2).unwrap();
            assert_eq!(s.period(), period, "{s}");
            // Adding multiples of the period commutes with the swizzle, for every offset below two periods.
            for x in 0..2 * period {
                for k in [1, 3, 1000] {
                    assert_eq!(s.apply(x + k * period), s.apply(x) + k * period, "{s} at {x} + {k}P");
                }
            }
        }
    }

    #[test]
    fn masks_and_application() {
        let s = Swizzle::new(3, 4, 3).unwrap();
        assert_eq!((s.yyy_mask(), s.zzz_mask()), (0b111 << 7, 0b111 << 4));
        assert_eq!(s.apply(0b1000_0000), 0b1001_0000);
        let neg = Swizzle::new(2, 0, -2).unwrap();
        assert_eq!((neg.yyy_mask(), neg.zzz_mask()), (0b11, 0b1100));
        assert_eq!(neg.apply(0b01), 0b0101);
        assert!(Swizzle::new(3, 4, 2).is_err() && Swizzle::new(-1, 0, 0).is_err() && Swizzle::new(30, 30, 30).is_err());
    }

    #[test]
    fn upcast_and_downcast() {
        let s = Swizzle::new(3, 4, 3).unwrap();
        assert_eq!(s.upcast(2).unwrap().to_string(), "Sw<3,3,3>");
        assert_eq!(s.upcast(64).unwrap().to_string(), "Sw<1,0,3>");
        assert_eq!(s.downcast(2).unwrap().to_string(), "Sw<3,5,3>");
        assert!(s.upcast(3).is_err());
    }
}
