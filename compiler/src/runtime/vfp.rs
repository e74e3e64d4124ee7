//! Float arithmetic with the target's NaNs: the one rule both interpreters (the reference
//! interpreter of the source and the IR interpreter) follow, so that `putfloat` of a NaN
//! prints the sign the ARM program prints.
//!
//! IEEE 754 leaves the NaN an operation returns to the implementation. ARM's VFP (with
//! default-NaN mode off, as Linux runs programs) returns the first signalling NaN operand
//! quietened, else the first NaN operand, else the default NaN `0x7fc00000` (positive); an
//! x86 host's SSE unit returns a negative default NaN (`0xffc00000`) for an invalid operation
//! such as `0.0 / 0.0` or `inf - inf`, which `putfloat` would print as `-nan`.

/// The quiet bit of an `f32` NaN.
pub const QUIET_BIT: u32 = 0x0040_0000;
/// The NaN VFP returns for an invalid operation on non-NaN operands.
pub const DEFAULT_NAN: u32 = 0x7fc0_0000;

/// The bits of `r = f op g` (`r` computed on the host) as VFP produces them.
#[inline(always)]
pub fn result_bits(r: f32, f: f32, g: f32) -> u32 {
    if !r.is_nan() {
        return r.to_bits();
    }
    let signalling = |x: f32| x.is_nan() && x.to_bits() & QUIET_BIT == 0;
    if signalling(f) {
        f.to_bits() | QUIET_BIT
    } else if signalling(g) {
        g.to_bits() | QUIET_BIT
    } else if f.is_nan() {
        f.to_bits()
    } else if g.is_nan() {
        g.to_bits()
    } else {
        DEFAULT_NAN
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nan_results_follow_the_target() {
        let inf = f32::INFINITY;
        // Invalid operations give the positive default NaN (x86 would give a negative one).
        assert_eq!(result_bits(inf - inf, inf, inf), DEFAULT_NAN);
        assert_eq!(result_bits(-f32::NAN, 0.0, 0.0), DEFAULT_NAN);
        // A NaN operand propagates, sign and payload included; the first one wins.
        let neg_nan = f32::from_bits(0xffc0_0001);
        let pos_nan = f32::from_bits(0x7fc0_0002);
        assert_eq!(result_bits(neg_nan + 1.0, neg_nan, 1.0), 0xffc0_0001);
        assert_eq!(result_bits(1.0 + neg_nan, 1.0, neg_nan), 0xffc0_0001);
        assert_eq!(result_bits(pos_nan * neg_nan, pos_nan, neg_nan), 0x7fc0_0002);
        // A signalling NaN is preferred and quietened.
        let snan = f32::from_bits(0x7f80_0005);
        assert_eq!(result_bits(pos_nan + snan, pos_nan, snan), 0x7fc0_0005);
        assert_eq!(result_bits(1.5 + 2.0, 1.5, 2.0), 3.5f32.to_bits());
    }
}
