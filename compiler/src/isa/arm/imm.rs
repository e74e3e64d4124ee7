//! Immediate encodings of the ARM (A32) and VFP instruction sets, and the "magic number"
//! constants that turn signed division by a constant into a multiplication.
//!
//! * Data-processing immediates are an 8-bit value rotated right by an even amount
//!   ([`is_arm_imm`]).
//! * `vmov.f32 sd, #imm` accepts `±(16 + m)/16 · 2^e` with `0 ≤ m < 16`, `-3 ≤ e ≤ 4`
//!   ([`vfp_imm`]); notably `0.0` is *not* encodable.
//! * Division by a constant `d` (|d| ≥ 2, not a power of two) follows Hacker's Delight,
//!   chapter 10: `q = hi32(n · M)`, corrected by `± n` when the sign of `M` differs from the
//!   sign of `d`, shifted right arithmetically by `s`, plus one when the intermediate is
//!   negative (so the quotient truncates toward zero). [`DivMagic::apply`] simulates exactly
//!   that sequence so it can be tested against real division.

use std::fmt::{self, Write};

/// Writes the shortest sequence loading `v` into `rd`: `mov`, `mvn`, or `movw` (+ `movt`).
pub(crate) fn load_imm(out: &mut String, rd: impl fmt::Display, v: u32) {
    if is_arm_imm(v) {
        let _ = writeln!(out, "\tmov\t{rd}, #{}", imm_text(v));
    } else if is_arm_imm(!v) {
        let _ = writeln!(out, "\tmvn\t{rd}, #{}", imm_text(!v));
    } else {
        let _ = writeln!(out, "\tmovw\t{rd}, #{}", v & 0xffff);
        if v >> 16 != 0 {
            let _ = writeln!(out, "\tmovt\t{rd}, #{}", v >> 16);
        }
    }
}

/// An immediate as the assembly text shows it (hex above 16 bits). Written where it is
/// formatted, not made into a string first (the emitter formats several per instruction).
pub(crate) fn imm_text(v: u32) -> ImmText {
    ImmText(v)
}

#[derive(Clone, Copy)]
pub(crate) struct ImmText(u32);

impl fmt::Display for ImmText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = self.0;
        if v < 0x1_0000 { write!(f, "{v}") } else { write!(f, "{v:#x}") }
    }
}

/// True when `v` is an ARM modified immediate (an 8-bit value rotated right by an even count).
pub fn is_arm_imm(v: u32) -> bool {
    (0..16).any(|rot| v.rotate_left(2 * rot) <= 0xff)
}

/// The `vmov.f32` immediate for `f`, if `f` is encodable: returned as the float itself (the
/// assembler takes the decimal value), `None` otherwise.
pub fn vfp_imm(f: f32) -> Option<f32> {
    let bits = f.to_bits();
    let exp = (bits >> 23) & 0xff;
    let frac = bits & 0x7f_ffff;
    // Four fraction bits at most, unbiased exponent in -3..=4.
    if frac & 0x7_ffff == 0 && (124..=131).contains(&exp) { Some(f) } else { None }
}

/// `Some(k)` when `v == 2^k`.
pub fn log2_exact(v: u32) -> Option<u32> {
    if v.is_power_of_two() { Some(v.trailing_zeros()) } else { None }
}

/// Constants for signed division by a constant `d` (|d| ≥ 2, not a power of two).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DivMagic {
    /// The multiplier `M` (as a signed 32-bit value, as `smmul` reads it).
    pub multiplier: i32,
    /// The arithmetic right shift applied after the correction.
    pub shift: u32,
    /// `+1`: add the dividend after the high multiply; `-1`: subtract it; `0`: neither.
    pub correction: i8,
}

impl DivMagic {
    /// Computes the constants; `None` for divisors that the sequence does not handle
    /// (`|d| < 2`, powers of two and `i32::MIN`).
    pub fn for_divisor(d: i32) -> Option<DivMagic> {
        if d == i32::MIN || d.unsigned_abs() < 2 || d.unsigned_abs().is_power_of_two() {
            return None;
        }
        const TWO31: u32 = 0x8000_0000;
        let ad = d.unsigned_abs();
        let t = TWO31.wrapping_add((d as u32) >> 31);
        let anc = t - 1 - t % ad;
        let mut p = 31u32;
        let mut q1 = TWO31 / anc;
        let mut r1 = TWO31 - q1 * anc;
        let mut q2 = TWO31 / ad;
        let mut r2 = TWO31 - q2 * ad;
        loop {
            p += 1;
            q1 = q1.wrapping_mul(2);
            r1 = r1.wrapping_mul(2);
            if r1 >= anc {
                q1 = q1.wrapping_add(1);
                r1 = r1.wrapping_sub(anc);
            }
            q2 = q2.wrapping_mul(2);
            r2 = r2.wrapping_mul(2);
            if r2 >= ad {
                q2 = q2.wrapping_add(1);
                r2 = r2.wrapping_sub(ad);
            }
            let delta = ad - r2;
            if !(q1 < delta || (q1 == delta && r1 == 0)) {
                break;
            }
        }
        let m = q2.wrapping_add(1) as i32;
        let multiplier = if d < 0 { m.wrapping_neg() } else { m };
        let correction = if d > 0 && multiplier < 0 {
            1
        } else if d < 0 && multiplier > 0 {
            -1
        } else {
            0
        };
        Some(DivMagic { multiplier, shift: p - 32, correction })
    }

    /// The quotient computed by the instruction sequence the back end emits
    /// (`smmul`, optional `add`/`sub`, `asr`, `add q, q, q, lsr #31`).
    pub fn apply(self, n: i32) -> i32 {
        let q = self.estimate(n);
        q.wrapping_add(((q as u32) >> 31) as i32)
    }

    /// The quotient before its rounding correction (adding its own sign bit): the high word
    /// of the product, corrected by `n` and shifted.
    pub fn estimate(self, n: i32) -> i32 {
        let mut q = ((i64::from(n) * i64::from(self.multiplier)) >> 32) as i32;
        match self.correction {
            1 => q = q.wrapping_add(n),
            -1 => q = q.wrapping_sub(n),
            _ => {}
        }
        q >> self.shift
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arm_immediates() {
        for v in [0u32, 1, 0xff, 0x100, 0x3fc, 0xff00_0000, 0xf000_000f, 0x0003_fc00, 1 << 31] {
            assert!(is_arm_imm(v), "{v:#x} should be encodable");
        }
        for v in [0x101u32, 0x1ff, 0xffff, 0x1234, 0xffff_fffe, 0x0001_fe01] {
            assert!(!is_arm_imm(v), "{v:#x} should not be encodable");
        }
    }

    #[test]
    fn vfp_immediates() {
        for f in [1.0f32, -1.0, 0.5, 2.0, 10.0, 31.0, 0.125, 1.9375, -0.1875] {
            assert_eq!(vfp_imm(f), Some(f), "{f}");
        }
        for f in [0.0f32, -0.0, 0.1, 32.0, 0.0625, 1.03125, f32::NAN, f32::INFINITY] {
            assert_eq!(vfp_imm(f), None, "{f}");
        }
    }

    fn check_divisor(d: i32) {
        let magic = DivMagic::for_divisor(d).expect("magic exists");
        let mut samples = vec![
            0,
            1,
            -1,
            2,
            -2,
            d,
            d.wrapping_neg(),
            d.wrapping_sub(1),
            d.wrapping_add(1),
            i32::MAX,
            i32::MIN,
            i32::MIN + 1,
        ];
        let mut x: u32 = 0x1234_5678 ^ d as u32;
        for _ in 0..2000 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            samples.push(x as i32);
            samples.push((x as i32) >> (x % 31));
        }
        for k in [d.wrapping_mul(3), d.wrapping_mul(1000), d.wrapping_mul(-7)] {
            samples.extend([k.wrapping_sub(1), k, k.wrapping_add(1)]);
        }
        for n in samples {
            assert_eq!(magic.apply(n), n.wrapping_div(d), "{n} / {d} with {magic:?}");
            // The selection drops the correction for such operands.
            if d > 0 && n >= 0 {
                assert_eq!(magic.estimate(n), n / d, "{n} / {d} with {magic:?}, no correction");
            }
        }
    }

    #[test]
    fn division_magic_matches_division() {
        for d in 3..2000 {
            if !(d as u32).is_power_of_two() {
                check_divisor(d);
                check_divisor(-d);
            }
        }
        for d in [7919, 10007, 65535, 65537, 1_000_007, 998_244_353, i32::MAX, i32::MIN + 1, -1_000_000_007] {
            check_divisor(d);
        }
    }

    #[test]
    fn magic_rejects_trivial_divisors() {
        for d in [0, 1, -1, 2, -2, 4, 1024, -1024, 1 << 30, i32::MIN] {
            assert_eq!(DivMagic::for_divisor(d), None, "{d}");
        }
    }
}
