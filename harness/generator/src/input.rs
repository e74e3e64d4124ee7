//! The stdin bytes a generated program reads, and the values they hold.
//!
//! Input calls are only generated where they execute exactly once, in program order (the
//! top level of `main`, or a counted input loop there), so the generator writes the bytes in
//! the same order as it emits the calls. Tokens are laid out so that C's `scanf` and the
//! runtime model read exactly the intended values:
//! * numbers are preceded by one whitespace byte (`%d` and `%a` skip it);
//! * a `getch` byte follows the previous token directly, and comes from a set that cannot
//!   extend a number (no digits, signs, `.`, hex letters, `e`/`p`/`x`, or the letters of
//!   `inf`/`nan`), so `scanf` never reads it as part of the preceding number.

use super::choices::Choices;

/// Bytes `getch` may read: they cannot continue or start a number.
pub(super) const GETCH_BYTES: &[u8] = b"ghjkmoqrstuvwyzGHJKLMOQRSTUVWYZ!#$&*,;:?@_ \n";

#[derive(Clone, Debug, Default)]
pub(super) struct InputWriter {
    bytes: Vec<u8>,
}

impl InputWriter {
    fn separator(&mut self, newline: bool) {
        self.bytes.push(if newline { b'\n' } else { b' ' });
    }

    /// A `getint` value.
    pub(super) fn int(&mut self, v: i32, newline: bool) {
        self.separator(newline);
        self.bytes.extend_from_slice(v.to_string().as_bytes());
    }

    /// A `getfloat` value (finite), as decimal or hexadecimal float text.
    pub(super) fn float(&mut self, v: f32, hex: bool, newline: bool) {
        self.separator(newline);
        let text = if hex {
            sysyc::runtime::io::format_hex_float(v as f64)
        } else {
            // Shortest decimal that reads back as the same f32 (correct rounding on both sides).
            format!("{v:?}")
        };
        self.bytes.extend_from_slice(text.as_bytes());
    }

    /// A `getch` byte; must come from [`GETCH_BYTES`].
    pub(super) fn ch(&mut self, c: u8) {
        debug_assert!(GETCH_BYTES.contains(&c));
        self.bytes.push(c);
    }

    /// The stdin text, ending in a newline.
    pub(super) fn finish(mut self) -> Vec<u8> {
        if !self.bytes.is_empty() {
            self.bytes.push(b'\n');
        }
        self.bytes
    }
}

/// An input `int`: small, medium, anywhere, or a boundary value (`INT_MIN`, `INT_MAX`,
/// ±2^k, ±(2^k ± 1)).
pub(super) fn random_int(c: &mut dyn Choices) -> i32 {
    match c.weighted(&[3, 6, 2, 2]) {
        0 => c.range(0, 10) as i32,
        1 => c.range(-1000, 1000) as i32,
        2 => c.range(i32::MIN as i64, i32::MAX as i64) as i32,
        _ => {
            let k = c.range(0, 31) as u32;
            let p = (1i64 << k) + c.range(-1, 1);
            let v = if c.chance(0.5) { p } else { -p };
            v.clamp(i32::MIN as i64, i32::MAX as i64) as i32
        }
    }
}

/// An input `float`.
pub(super) fn random_float(c: &mut dyn Choices) -> f32 {
    match c.below(3) {
        0 => c.range(-80, 80) as f32 / 8.0,
        1 => c.range(-99_999, 99_999) as f32 / 100.0,
        _ => c.range(-1_000_000, 1_000_000) as f32 / 7.0 / 16.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sysyc::runtime::io::Io;

    #[test]
    fn runtime_reads_back_what_was_written() {
        let mut w = InputWriter::default();
        w.int(-17, false);
        w.ch(b'q');
        w.float(-1.5e-3, true, true);
        w.ch(b' ');
        w.float(12345.678, false, false);
        w.ch(b'z');
        w.int(i32::MIN, false);
        w.ch(b'\n');
        w.int(5, true);
        let mut io = Io::new(w.finish());
        assert_eq!(io.get_int(), Ok(-17));
        assert_eq!(io.get_ch(), Ok(b'q' as i32));
        assert_eq!(io.get_float(), Ok(-1.5e-3));
        assert_eq!(io.get_ch(), Ok(b' ' as i32));
        assert_eq!(io.get_float(), Ok(12345.678));
        assert_eq!(io.get_ch(), Ok(b'z' as i32));
        assert_eq!(io.get_int(), Ok(i32::MIN));
        assert_eq!(io.get_ch(), Ok(b'\n' as i32));
        assert_eq!(io.get_int(), Ok(5));
    }

    #[test]
    fn getch_bytes_never_extend_a_number() {
        for &c in GETCH_BYTES {
            assert!(
                !c.is_ascii_hexdigit() && !b"+-.xXpPeEiInN".contains(&c),
                "{}",
                c as char
            );
        }
    }
}
