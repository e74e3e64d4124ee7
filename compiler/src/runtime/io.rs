//! The SysY runtime library's input/output semantics, in Rust, for the interpreters.
//!
//! Every function behaves like the C runtime (`sysy_rt.c`) does on glibc: `getint` is
//! `scanf("%d")`, `getfloat` is `scanf("%a")` (which accepts decimal, hex-float, `inf` and
//! `nan` text like `strtof`), `putfloat` is `printf("%a", (double)x)`, and `putf` is `printf`.
//! Where C would leave a variable unset (input exhausted or malformed) the interpreters trap
//! with [`TrapKind::InputExhausted`] instead.

use super::outcome::TrapKind;

/// An argument of `putf`: ints are passed as `int`, floats promoted to `double` (C varargs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PutfArg {
    Int(i32),
    Float(f32),
}

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

    /// `scanf("%a")` (same as `%f`): optional whitespace, then the longest prefix that
    /// `strtof` accepts, correctly rounded to binary32.
    pub fn get_float(&mut self) -> Result<f32, TrapKind> {
        self.skip_space();
        let (value, len) = parse_float_prefix(&self.input[self.pos..]).ok_or(TrapKind::InputExhausted)?;
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

/// C's `printf("%a", x)` for a double, as glibc prints it: `0x1.921fb6p+1`, `0x0p+0`,
/// `-0x1.8p-13`, `inf`, `-nan`. Trailing zero hex digits of the fraction are dropped.
pub fn format_hex_float(x: f64) -> String {
    format_hex_float_spec(x, None, false)
}

/// `%a` / `%A` with an optional precision (glibc rounding: to nearest, ties to even).
fn format_hex_float_spec(x: f64, precision: Option<usize>, upper: bool) -> String {
    let mut s = String::new();
    if x.is_sign_negative() {
        s.push('-');
    }
    if x.is_nan() {
        s.push_str("nan");
    } else if x.is_infinite() {
        s.push_str("inf");
    } else {
        let bits = x.to_bits();
        let exp_bits = ((bits >> 52) & 0x7ff) as i64;
        let mut mant = bits & ((1u64 << 52) - 1);
        let (mut lead, exp) = if exp_bits == 0 {
            if mant == 0 { (0u64, 0i64) } else { (0u64, -1022i64) }
        } else {
            (1u64, exp_bits - 1023)
        };
        let mut digits = 13usize;
        if let Some(p) = precision {
            if p < 13 {
                let shift = (13 - p) * 4;
                let full = (lead << 52) | mant;
                let rem = full & ((1u64 << shift) - 1);
                let mut kept = full >> shift;
                let half = 1u64 << (shift - 1);
                if rem > half || (rem == half && kept & 1 == 1) {
                    kept += 1;
                }
                lead = kept >> (p * 4);
                mant = (kept & ((1u64 << (p * 4)) - 1)) << shift;
            }
            digits = p;
        }
        let mut frac = format!("{mant:013x}");
        if precision.is_none() {
            while frac.ends_with('0') {
                frac.pop();
            }
        } else if digits <= 13 {
            frac.truncate(digits);
        } else {
            while frac.len() < digits {
                frac.push('0');
            }
        }
        s.push_str("0x");
        s.push_str(&lead.to_string());
        if !frac.is_empty() {
            s.push('.');
            s.push_str(&frac);
        }
        s.push('p');
        if exp >= 0 {
            s.push('+');
        }
        s.push_str(&exp.to_string());
    }
    if upper { s.to_uppercase() } else { s }
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
        if rest.get(3) == Some(&b'(') {
            if let Some(close) = rest[4..].iter().position(|&c| c == b')') {
                if rest[4..4 + close].iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_') {
                    n = 4 + close + 1;
                }
            }
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
    let s = if s.ends_with('.') { &s[..s.len() - 1] } else { s };
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
    if shift >= 64 + 1 {
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

/// C `printf` for the conversions SysY programs can use: `%d %i %u %x %X %o %c %f %F %e %E %g
/// %G %a %A %%` with flags `-+ #0`, width and precision (`*` takes an int argument). Length
/// modifiers (`l`, `h`, ...) are accepted and ignored. A missing argument prints as 0.
pub fn format_printf(fmt: &[u8], args: &[PutfArg]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut args = args.iter().copied();
    let mut i = 0;
    while i < fmt.len() {
        let c = fmt[i];
        i += 1;
        if c != b'%' {
            out.push(c);
            continue;
        }
        let mut left = false;
        let mut plus = false;
        let mut space = false;
        let mut alt = false;
        let mut zero = false;
        while i < fmt.len() {
            match fmt[i] {
                b'-' => left = true,
                b'+' => plus = true,
                b' ' => space = true,
                b'#' => alt = true,
                b'0' => zero = true,
                _ => break,
            }
            i += 1;
        }
        let mut width: usize = 0;
        if fmt.get(i) == Some(&b'*') {
            i += 1;
            let w = arg_int(args.next());
            if w < 0 {
                left = true;
            }
            width = w.unsigned_abs() as usize;
        } else {
            while let Some(d @ b'0'..=b'9') = fmt.get(i).copied() {
                width = width * 10 + (d - b'0') as usize;
                i += 1;
            }
        }
        let mut precision: Option<usize> = None;
        if fmt.get(i) == Some(&b'.') {
            i += 1;
            if fmt.get(i) == Some(&b'*') {
                i += 1;
                let p = arg_int(args.next());
                precision = if p < 0 { None } else { Some(p as usize) };
            } else {
                let mut p = 0;
                while let Some(d @ b'0'..=b'9') = fmt.get(i).copied() {
                    p = p * 10 + (d - b'0') as usize;
                    i += 1;
                }
                precision = Some(p);
            }
        }
        while matches!(fmt.get(i), Some(b'l' | b'h' | b'L' | b'q' | b'j' | b'z' | b't')) {
            i += 1;
        }
        let Some(&conv) = fmt.get(i) else {
            out.push(b'%');
            break;
        };
        i += 1;
        let (body, sign_prefix, numeric): (String, String, bool) = match conv {
            b'%' => {
                out.push(b'%');
                continue;
            }
            b'd' | b'i' => {
                let v = arg_int(args.next()) as i64;
                let mut digits = v.unsigned_abs().to_string();
                if let Some(p) = precision {
                    if p == 0 && v == 0 {
                        digits.clear();
                    }
                    while digits.len() < p {
                        digits.insert(0, '0');
                    }
                }
                (digits, sign_of(v < 0, plus, space), true)
            }
            b'u' | b'x' | b'X' | b'o' => {
                let v = arg_int(args.next()) as u32;
                let mut digits = match conv {
                    b'u' => v.to_string(),
                    b'x' => format!("{v:x}"),
                    b'X' => format!("{v:X}"),
                    _ => format!("{v:o}"),
                };
                if let Some(p) = precision {
                    if p == 0 && v == 0 {
                        digits.clear();
                    }
                    while digits.len() < p {
                        digits.insert(0, '0');
                    }
                }
                let prefix = if alt && v != 0 {
                    match conv {
                        b'x' => "0x",
                        b'X' => "0X",
                        b'o' if !digits.starts_with('0') => "0",
                        _ => "",
                    }
                } else {
                    ""
                };
                (digits, prefix.to_string(), true)
            }
            b'c' => {
                let v = arg_int(args.next()) as u8;
                pad_into(&mut out, &[v], width, left, false, "");
                continue;
            }
            b'f' | b'F' | b'e' | b'E' | b'g' | b'G' | b'a' | b'A' => {
                let v = arg_float(args.next());
                let neg = v.is_sign_negative();
                let a = v.abs();
                let upper = conv.is_ascii_uppercase();
                let body = if a.is_nan() || a.is_infinite() {
                    let t = if a.is_nan() { "nan" } else { "inf" };
                    if upper { t.to_uppercase() } else { t.to_string() }
                } else {
                    match conv | 0x20 {
                        b'f' => format_fixed(a, precision.unwrap_or(6), alt),
                        b'e' => format_exp(a, precision.unwrap_or(6), alt, upper),
                        b'g' => format_general(a, precision.unwrap_or(6), alt, upper),
                        _ => {
                            let s = format_hex_float_spec(a, precision, upper);
                            if alt && !s.contains('.') {
                                s.replacen(if upper { "P" } else { "p" }, if upper { ".P" } else { ".p" }, 1)
                            } else {
                                s
                            }
                        }
                    }
                };
                let finite = v.is_finite();
                (body, sign_of(neg, plus, space), finite)
            }
            other => {
                // Unknown conversion: print it literally like glibc does for invalid specs.
                out.push(b'%');
                out.push(other);
                continue;
            }
        };
        let zero_pad = zero && !left && numeric && (precision.is_none() || !matches!(conv, b'd' | b'i' | b'u' | b'x' | b'X' | b'o'));
        pad_into(&mut out, body.as_bytes(), width, left, zero_pad, &sign_prefix);
    }
    out
}

fn pad_into(out: &mut Vec<u8>, body: &[u8], width: usize, left: bool, zero: bool, prefix: &str) {
    let len = body.len() + prefix.len();
    let pad = width.saturating_sub(len);
    if left {
        out.extend_from_slice(prefix.as_bytes());
        out.extend_from_slice(body);
        out.extend(std::iter::repeat_n(b' ', pad));
    } else if zero {
        out.extend_from_slice(prefix.as_bytes());
        out.extend(std::iter::repeat_n(b'0', pad));
        out.extend_from_slice(body);
    } else {
        out.extend(std::iter::repeat_n(b' ', pad));
        out.extend_from_slice(prefix.as_bytes());
        out.extend_from_slice(body);
    }
}

fn sign_of(neg: bool, plus: bool, space: bool) -> String {
    if neg {
        "-".into()
    } else if plus {
        "+".into()
    } else if space {
        " ".into()
    } else {
        String::new()
    }
}

fn arg_int(a: Option<PutfArg>) -> i32 {
    match a {
        Some(PutfArg::Int(v)) => v,
        // A float passed where an int is expected: C reads garbage; use the truncation.
        Some(PutfArg::Float(f)) => f as i32,
        None => 0,
    }
}

fn arg_float(a: Option<PutfArg>) -> f64 {
    match a {
        Some(PutfArg::Float(f)) => f as f64,
        Some(PutfArg::Int(v)) => v as f64,
        None => 0.0,
    }
}

/// `%.Nf` of a non-negative finite double, exact (Rust's formatting is exact and rounds
/// half to even on the exact binary value, as glibc does).
fn format_fixed(a: f64, prec: usize, alt: bool) -> String {
    let mut s = format!("{a:.prec$}");
    if alt && prec == 0 {
        s.push('.');
    }
    s
}

fn format_exp(a: f64, prec: usize, alt: bool, upper: bool) -> String {
    let s = format!("{a:.prec$e}");
    let (mant, exp) = s.split_once('e').unwrap();
    let exp: i32 = exp.parse().unwrap();
    let mut m = mant.to_string();
    if alt && prec == 0 {
        m.push('.');
    }
    let e = if upper { 'E' } else { 'e' };
    let sign = if exp < 0 { '-' } else { '+' };
    format!("{m}{e}{sign}{:02}", exp.abs())
}

fn format_general(a: f64, prec: usize, alt: bool, upper: bool) -> String {
    let p = if prec == 0 { 1 } else { prec };
    // The exponent X that %e with precision p-1 would print.
    let x: i32 = if a == 0.0 {
        0
    } else {
        let s = format!("{a:.*e}", p - 1);
        s.split_once('e').unwrap().1.parse().unwrap()
    };
    let mut s = if x < -4 || x >= p as i32 {
        format_exp(a, p - 1, alt, upper)
    } else {
        format_fixed(a, (p as i32 - 1 - x) as usize, alt)
    };
    if !alt {
        // Strip trailing zeros of the fraction (and the point).
        let (num, exp) = match s.find(['e', 'E']) {
            Some(pos) => (s[..pos].to_string(), s[pos..].to_string()),
            None => (s.clone(), String::new()),
        };
        let num = if num.contains('.') {
            num.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            num
        };
        s = num + &exp;
    }
    s
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
            PutfArg::Float(3.14159),
            PutfArg::Float(1234.5),
            PutfArg::Float(0.0001),
        ]);
        assert_eq!(String::from_utf8(out).unwrap(), "-3|   42|7  |-0012|ff|A|3.14|1.234500e+03|0.0001|%");
    }
}
