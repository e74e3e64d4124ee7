//! The SysY runtime library's input/output semantics, in Rust, for the interpreters.
//!
//! Every function behaves like the C runtime (`sysy_rt.c`) does on glibc: `getint` is
//! `scanf("%d")`, `getfloat` is `scanf("%a")` (which accepts decimal, hex-float, `inf` and
//! `nan` text, see [`scan_float`] for how it differs from `strtof`), `putfloat` is
//! `printf("%a", (double)x)`, and `putf` is `printf` (see `printf.rs`).
//! Where C would leave a variable unset (input exhausted or malformed) the interpreters trap
//! with [`TrapKind::InputExhausted`] instead.

use super::outcome::TrapKind;
pub use super::printf::{PutfArg, format_hex_float, format_printf};

/// Standard input, standard output and the timers of one run.
#[derive(Clone, Debug, Default)]
pub struct Io {
    input: Vec<u8>,
    pos: usize,
    pub stdout: Vec<u8>,
    /// `(start line, stop line)` of each `starttime`/`stoptime` pair, in order.
    timers: Vec<(u32, u32)>,
    open_timer: Option<u32>,
}

impl Io {
    pub fn new(input: Vec<u8>) -> Io {
        Io { input, ..Io::default() }
    }

    pub fn take_stdout(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.stdout)
    }

    fn peek(&self) -> Option<u8> {
        self.input.get(self.pos).copied()
    }

    fn skip_space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)) {
            self.pos += 1;
        }
    }

    /// `scanf("%d")`: optional whitespace, optional sign, decimal digits. Out-of-range values
    /// saturate (glibc's `strtol` on a 32-bit `long`).
    pub fn get_int(&mut self) -> Result<i32, TrapKind> {
        self.skip_space();
        let start = self.pos;
        let mut neg = false;
        if let Some(c @ (b'+' | b'-')) = self.peek() {
            neg = c == b'-';
            self.pos += 1;
        }
        let digits_start = self.pos;
        let mut mag: i64 = 0;
        while let Some(c @ b'0'..=b'9') = self.peek() {
            mag = (mag * 10 + (c - b'0') as i64).min(1 << 40);
            self.pos += 1;
        }
        if self.pos == digits_start {
            self.pos = start;
            return Err(TrapKind::InputExhausted);
        }
        let v = if neg { -mag } else { mag };
        Ok(v.clamp(i32::MIN as i64, i32::MAX as i64) as i32)
    }

    /// `scanf("%c")`: the next byte, whitespace included.
    pub fn get_ch(&mut self) -> Result<i32, TrapKind> {
        let c = self.peek().ok_or(TrapKind::InputExhausted)?;
        self.pos += 1;
        Ok(c as i32)
    }

    /// `scanf("%a")` (same as `%f`): optional whitespace, then [`scan_float`].
    pub fn get_float(&mut self) -> Result<f32, TrapKind> {
        self.skip_space();
        let (value, len) = scan_float(&self.input[self.pos..]).ok_or(TrapKind::InputExhausted)?;
        self.pos += len;
        Ok(value)
    }

    pub fn put_int(&mut self, v: i32) {
        self.stdout.extend_from_slice(v.to_string().as_bytes());
    }

    pub fn put_ch(&mut self, c: i32) {
        self.stdout.push(c as u8);
    }

    pub fn put_float(&mut self, v: f32) {
        self.stdout.extend_from_slice(format_hex_float(v as f64).as_bytes());
    }

    /// `putarray(n, a)`: `"%d:"`, then `" %d"` per element, then a newline.
    pub fn put_array(&mut self, vals: &[i32]) {
        self.put_int(vals.len() as i32);
        self.stdout.push(b':');
        for &v in vals {
            self.stdout.push(b' ');
            self.put_int(v);
        }
        self.stdout.push(b'\n');
    }

    /// `putfarray(n, a)`: `"%d:"`, then `" %a"` per element, then a newline.
    pub fn put_farray(&mut self, vals: &[f32]) {
        self.put_int(vals.len() as i32);
        self.stdout.push(b':');
        for &v in vals {
            self.stdout.push(b' ');
            self.put_float(v);
        }
        self.stdout.push(b'\n');
    }

    /// `putf(fmt, ...)`: C `printf` over the given arguments.
    pub fn put_f(&mut self, fmt: &[u8], args: &[PutfArg]) {
        let s = format_printf(fmt, args);
        self.stdout.extend_from_slice(&s);
    }

    pub fn start_time(&mut self, line: u32) {
        self.open_timer = Some(line);
    }

    pub fn stop_time(&mut self, line: u32) {
        let start = self.open_timer.take().unwrap_or(0);
        self.timers.push((start, line));
    }

    /// The runtime's stderr report at exit, with zero durations (interpreters have no clock
    /// that means anything for the target): one `Timer@` line per pair, then `TOTAL`.
    pub fn timer_report(&self) -> String {
        let mut s = String::new();
        for &(a, b) in &self.timers {
            s.push_str(&format!("Timer@{a:04}-{b:04}: 0H-0M-0S-0us\n"));
        }
        s.push_str("TOTAL: 0H-0M-0S-0us\n");
        s
    }
}

/// glibc's `scanf("%a")` conversion, after the leading whitespace: the value and the number
/// of bytes consumed, or `None` where scanf fails to convert.
///
/// scanf cannot push back more than one character, so it does not look for the longest
/// prefix `strtof` would accept. It reads characters while they can still continue a number,
/// then converts what it read with `strtof` and keeps all of it consumed:
/// * after an optional sign, a text starting with `n` must continue `an` and one starting
///   with `i` must continue `nf`, and if the next letter is an `i`, `inity` (ignoring case);
///   otherwise the conversion fails. `nan(...)` leaves the parenthesis unread.
/// * a number: `0x`/`0X` selects hex (digits are then hex digits and the exponent letter is
///   `p`); then digits, at most one `.` before the exponent, the exponent letter once a digit
///   was read, and a sign right after the exponent letter. So `1e` and `1e+` consume the `e`
///   and the sign but convert as `1`, `0x1p` converts as `1`, and `0x.` as `0`.
/// * nothing read but a sign, or a bare `0x`, or text `strtof` cannot convert (`.`) fails.
pub fn scan_float(text: &[u8]) -> Option<(f32, usize)> {
    let at = |i: usize| text.get(i).map(u8::to_ascii_lowercase);
    let sign_len = usize::from(matches!(text.first(), Some(b'+' | b'-')));
    let mut i = sign_len;
    let word = |start: usize, letters: &[u8]| letters.iter().enumerate().all(|(k, &c)| at(start + k) == Some(c));
    match at(i)? {
        b'n' => {
            if !word(i, b"nan") {
                return None;
            }
            i += 3;
        }
        b'i' => {
            if !word(i, b"inf") {
                return None;
            }
            i += 3;
            if at(i) == Some(b'i') {
                if !word(i, b"inity") {
                    return None;
                }
                i += 5;
            }
        }
        _ => {
            let (mut got_digit, mut got_dot, mut got_exp) = (false, false, false);
            let mut hex = false;
            if at(i) == Some(b'0') {
                i += 1;
                if at(i) == Some(b'x') {
                    hex = true;
                    i += 1;
                } else {
                    got_digit = true;
                }
            }
            let exp_letter = if hex { b'p' } else { b'e' };
            while let Some(c) = at(i) {
                if c.is_ascii_digit() || (hex && !got_exp && c.is_ascii_hexdigit()) {
                    got_digit = true;
                } else if got_exp && at(i - 1) == Some(exp_letter) && matches!(c, b'+' | b'-') {
                    // The exponent's sign.
                } else if got_digit && !got_exp && c == exp_letter {
                    got_exp = true;
                    got_dot = true;
                } else if !got_dot && c == b'.' {
                    got_dot = true;
                } else {
                    break;
                }
                i += 1;
            }
            if i == sign_len || (hex && i == sign_len + 2) {
                return None;
            }
        }
    }
    let (value, _) = parse_float_prefix(&text[..i])?;
    Some((value, i))
}

/// Parses the longest prefix of `text` that C's `strtof` accepts (without leading
/// whitespace). Returns the value and the number of bytes consumed.
pub fn parse_float_prefix(text: &[u8]) -> Option<(f32, usize)> {
    let mut i = 0;
    let neg = match text.first() {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let rest = &text[i..];
    let lower = |n: usize| -> Vec<u8> { rest.iter().take(n).map(u8::to_ascii_lowercase).collect() };
    let sign = |v: f32| if neg { -v } else { v };
    if lower(8) == b"infinity" {
        return Some((sign(f32::INFINITY), i + 8));
    }
    if lower(3) == b"inf" {
        return Some((sign(f32::INFINITY), i + 3));
    }
    if lower(3) == b"nan" {
        let mut n = 3;
        if rest.get(3) == Some(&b'(')
            && let Some(close) = rest[4..].iter().position(|&c| c == b')')
            && rest[4..4 + close].iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
        {
            n = 4 + close + 1;
        }
        return Some((sign(f32::NAN), i + n));
    }
    if rest.len() >= 2 && rest[0] == b'0' && (rest[1] | 0x20) == b'x' {
        if let Some((v, n)) = parse_hex_float(&rest[2..]) {
            return Some((sign(v), i + 2 + n));
        }
        // "0x" not followed by hex digits: strtof reads just the "0".
        return Some((sign(0.0), i + 1));
    }
    // Decimal: digits [. digits] [e [sign] digits]
    let mut j = 0;
    let mut mantissa_digits = 0;
    while rest.get(j).is_some_and(u8::is_ascii_digit) {
        j += 1;
        mantissa_digits += 1;
    }
    if rest.get(j) == Some(&b'.') {
        j += 1;
        while rest.get(j).is_some_and(u8::is_ascii_digit) {
            j += 1;
            mantissa_digits += 1;
        }
    }
    if mantissa_digits == 0 {
        return None;
    }
    if matches!(rest.get(j), Some(b'e' | b'E')) {
        let mut k = j + 1;
        if matches!(rest.get(k), Some(b'+' | b'-')) {
            k += 1;
        }
        if rest.get(k).is_some_and(u8::is_ascii_digit) {
            while rest.get(k).is_some_and(u8::is_ascii_digit) {
                k += 1;
            }
            j = k;
        }
    }
    let s = std::str::from_utf8(&rest[..j]).ok()?;
    let s = s.strip_suffix('.').unwrap_or(s);
    let s = if let Some(stripped) = s.strip_prefix('.') { format!("0.{stripped}") } else { s.to_string() };
    let v: f32 = s.parse().ok()?;
    Some((sign(v), i + j))
}

/// Parses `hexdigits[.hexdigits][p[sign]digits]` (after "0x"), correctly rounded to binary32
/// (round to nearest, ties to even). Returns the value and the bytes consumed.
pub fn parse_hex_float(text: &[u8]) -> Option<(f32, usize)> {
    let mut j = 0;
    // Significand bits accumulated into a u64 with a sticky bit for what does not fit.
    let mut mant: u64 = 0;
    let mut sticky = false;
    let mut exp_adjust: i64 = 0;
    let mut any_digit = false;
    let mut seen_point = false;
    loop {
        match text.get(j) {
            Some(&c) if c.is_ascii_hexdigit() => {
                let d = (c as char).to_digit(16).unwrap() as u64;
                any_digit = true;
                if mant >> 56 == 0 {
                    mant = (mant << 4) | d;
                    if seen_point {
                        exp_adjust -= 4;
                    }
                } else {
                    sticky |= d != 0;
                    if !seen_point {
                        exp_adjust += 4;
                    }
                }
                j += 1;
            }
            Some(b'.') if !seen_point => {
                seen_point = true;
                j += 1;
            }
            _ => break,
        }
    }
    if !any_digit {
        return None;
    }
    let mut exp: i64 = 0;
    if matches!(text.get(j), Some(b'p' | b'P')) {
        let mut k = j + 1;
        let mut eneg = false;
        if let Some(&c @ (b'+' | b'-')) = text.get(k) {
            eneg = c == b'-';
            k += 1;
        }
        if text.get(k).is_some_and(u8::is_ascii_digit) {
            let mut e: i64 = 0;
            while let Some(&c) = text.get(k).filter(|c| c.is_ascii_digit()) {
                e = (e * 10 + (c - b'0') as i64).min(100_000);
                k += 1;
            }
            exp = if eneg { -e } else { e };
            j = k;
        }
    }
    Some((round_to_f32(mant, sticky, exp + exp_adjust), j))
}

/// `mant · 2^exp` (plus a sticky "something nonzero below") rounded to binary32.
fn round_to_f32(mant: u64, sticky: bool, exp: i64) -> f32 {
    if mant == 0 {
        return 0.0;
    }
    // Normalise so the top set bit is bit 63.
    let lz = mant.leading_zeros() as i64;
    let m = mant << lz;
    let e = exp - lz + 63; // value = 1.xxx · 2^e
    // binary32: normal exponent range [-126, 127], 24-bit significand.
    let shift: i64 = if e >= -126 { 40 } else { 40 + (-126 - e) }; // bits to drop from m
    if shift > 64 {
        return 0.0; // far below the smallest subnormal: rounds to zero (sticky can't reach half)
    }
    let (kept, rest_nonzero, half_bit) = if shift >= 64 {
        (0u64, m & !(1 << 63) != 0 || sticky, m >> 63 == 1)
    } else {
        let kept = m >> shift;
        let rem = m & ((1u64 << shift) - 1);
        let half = 1u64 << (shift - 1);
        (kept, (rem & (half - 1)) != 0 || sticky, rem & half != 0)
    };
    let mut kept = kept;
    if half_bit && (rest_nonzero || kept & 1 == 1) {
        kept += 1;
    }
    // Recompose: kept is the significand with (24 - denormal shift) bits.
    let value = if e >= -126 {
        // kept in [2^23, 2^24]; exponent e.
        kept as f64 * 2f64.powi((e - 23) as i32)
    } else {
        kept as f64 * 2f64.powi(-149)
    };
    if value >= 2f64.powi(128) { f32::INFINITY } else { value as f32 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_float_formats_like_glibc() {
        assert_eq!(format_hex_float(std::f32::consts::PI as f64), "0x1.921fb6p+1");
        assert_eq!(format_hex_float(0.0), "0x0p+0");
        assert_eq!(format_hex_float(-0.0), "-0x0p+0");
        assert_eq!(format_hex_float(-1.5 * 2f64.powi(-13)), "-0x1.8p-13");
        assert_eq!(format_hex_float(1.0), "0x1p+0");
        assert_eq!(format_hex_float(f64::INFINITY), "inf");
        assert_eq!(format_hex_float(-f64::NAN), "-nan");
    }

    #[test]
    fn reads_ints_and_floats() {
        let mut io = Io::new(b"  12 -7\n0x1.8p1 3.25 .5e1 inf x".to_vec());
        assert_eq!(io.get_int(), Ok(12));
        assert_eq!(io.get_int(), Ok(-7));
        assert_eq!(io.get_float(), Ok(3.0));
        assert_eq!(io.get_float(), Ok(3.25));
        assert_eq!(io.get_float(), Ok(5.0));
        assert_eq!(io.get_float(), Ok(f32::INFINITY));
        assert_eq!(io.get_int(), Err(TrapKind::InputExhausted));
    }

    #[test]
    fn hex_float_parse_rounds_to_nearest_even() {
        assert_eq!(parse_hex_float(b"1.921fb6p+1").unwrap().0, std::f32::consts::PI);
        // 1 + 2^-24 is a tie between 1 and 1+2^-23: rounds to even (1).
        assert_eq!(parse_hex_float(b"1.000001p0").unwrap().0, 1.0);
        assert_eq!(parse_hex_float(b"1.000003p0").unwrap().0, 1.0 + 2f32.powi(-22));
        assert_eq!(parse_hex_float(b"1p-149").unwrap().0, f32::from_bits(1));
        assert_eq!(parse_hex_float(b"1p128").unwrap().0, f32::INFINITY);
    }

    #[test]
    fn printf_subset() {
        let out = format_printf(b"%d|%5d|%-3d|%05d|%x|%c|%.2f|%e|%g|%%", &[
            PutfArg::Int(-3),
            PutfArg::Int(42),
            PutfArg::Int(7),
            PutfArg::Int(-12),
            PutfArg::Int(255),
            PutfArg::Int(65),
            PutfArg::Float(3.14209),
            PutfArg::Float(1234.5),
            PutfArg::Float(0.0001),
        ]);
        assert_eq!(String::from_utf8(out).unwrap(), "-3|   42|7  |-0012|ff|A|3.14|1.234500e+03|0.0001|%");
    }
}
