//! C `printf` formatting exactly as glibc does it, for `putf` and `putfloat` in the
//! interpreters (the compiled programs call glibc itself; `harness/tests/runtime_vs_io.rs`
//! compares the two on a large set of formats and values).
//!
//! Covered: conversions `d i u x X o b B c C p f F e E g G a A %`; flags `- + space # 0`,
//! and `'` and `I` (no effect in the C locale); width and precision, also as `*` arguments;
//! length modifiers `hh` and `h` (the argument is narrowed as C does), `l` (wide `%lc`;
//! otherwise the size of `int` on ARM32, like `z Z t`), `ll L q j` (accepted, see below).
//!
//! glibc behaviour reproduced beyond the C standard:
//! * an unknown conversion prints its specification back in a canonical form: flags in the
//!   order `#'+-0I` (`+` hides space; `0` shows whether zero padding is on), non-zero width,
//!   precision, the conversion letter; length modifiers are dropped (`%-08.3hk` prints
//!   `%-8.3k`);
//! * from the first unknown conversion on, glibc formats the rest of the format on its
//!   "positional" path, which differs in one respect: a negative `*` width left-justifies
//!   but does not switch zero padding off (the fast path does). Left-justified zero padding
//!   then appends zeros after `%f`/`%e`/`%g` output (`3.50000000`, `3.500000e+0000`),
//!   suppresses padding of `%a` entirely, and pads everything else with spaces;
//! * the positional path is also taken at a single `h` before a non-integer conversion
//!   (`%hc`, `%hf`, ...), which is then formatted as without the `h`;
//! * a format ending inside a specification (`"abc%"`, `"%5"`) ends the output there (on
//!   the positional path after printing the unfinished specification back), and so does a
//!   wide character (`%lc`, `%C`) outside ASCII, which the C locale cannot encode (printf
//!   returns -1);
//! * `%p` prints `(nil)` for 0 (padded with spaces), anything else like `%#x`, honouring the
//!   `+` and space flags;
//! * `%#g` where rounding carries the value into one more integer digit than the precision
//!   allows switches to exponent style *without* fraction digits: 999999.94 prints `1.e+06`
//!   (C asks for `1.00000e+06`). glibc picks the style from the exponent before rounding and
//!   keeps the fixed style's fraction digit count (0) when the carry forces the switch.
//!
//! Not modelled (programs using them get output that differs from the compiled program):
//! positional arguments (`%1$d`), `%n`, `%m`, `%s`, `%C`, `%S` (they print as unknown
//! conversions), and 64-bit integer arguments (`%lld`, `%jd`: SysY has no such values).
//!
//! Decimal conversions rely on Rust's float formatting being exact and rounding ties to
//! even, as glibc's does in the default rounding mode.

/// An argument of `putf`: ints are passed as `int`, floats promoted to `double` (C varargs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PutfArg {
    Int(i32),
    Float(f32),
}

/// C's `printf(fmt, args...)`. A missing argument reads as 0; an int where a float is
/// expected converts (C would read garbage).
pub fn format_printf(fmt: &[u8], args: &[PutfArg]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut args = args.iter().copied();
    let mut rest = fmt;
    let mut positional = false;
    while let Some(percent) = rest.iter().position(|&c| c == b'%') {
        out.extend_from_slice(&rest[..percent]);
        let (mut spec, len) = match Spec::parse(&rest[percent + 1..], &mut args) {
            Ok(parsed) => parsed,
            Err(mut unfinished) => {
                // The fast path gives up; the positional path prints what it parsed.
                if positional {
                    unfinished.positional = true;
                    unfinished.write_unknown(&mut out);
                }
                return out;
            }
        };
        positional |= spec.leaves_fast_path();
        spec.positional = positional;
        if spec.write(&mut out, &mut args).is_err() {
            return out;
        }
        rest = &rest[percent + 1 + len..];
    }
    out.extend_from_slice(rest);
    out
}

/// C's `printf("%a", x)`: `0x1.921fb6p+1`, `0x0p+0`, `-0x1.8p-13`, `inf`, `-nan`.
pub fn format_hex_float(x: f64) -> String {
    let sign = if x.is_sign_negative() { "-" } else { "" };
    if x.is_nan() {
        format!("{sign}nan")
    } else if x.is_infinite() {
        format!("{sign}inf")
    } else {
        format!("{sign}0x{}", hex_float_digits(x.abs(), None))
    }
}

/// The length modifiers that matter: `hh` / `h` narrow an integer argument, `l` makes `%c`
/// a wide character.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Length {
    #[default]
    Int,
    Short,
    Char,
    Long,
}

/// One conversion specification (what follows a `%`).
#[derive(Clone, Debug, Default)]
struct Spec {
    /// The `-` flag.
    minus: bool,
    plus: bool,
    space: bool,
    alt: bool,
    /// The `0` flag.
    zero: bool,
    group: bool,
    i18n: bool,
    /// The width came from a negative `*` argument.
    star_left: bool,
    /// Formatted on glibc's positional path (see the module documentation).
    positional: bool,
    width: usize,
    precision: Option<usize>,
    length: Length,
    conv: u8,
}

/// The output must stop here: glibc's printf fails (returns -1) at this specification.
struct Stop;

impl Spec {
    /// Parses the specification at the start of `text` (just after the `%`), taking `*`
    /// arguments from `args`. Returns it and its length, or, if `text` ends first, what was
    /// parsed (its conversion is 0).
    fn parse(text: &[u8], args: &mut impl Iterator<Item = PutfArg>) -> Result<(Spec, usize), Spec> {
        let mut s = Spec::default();
        let mut i = 0;
        loop {
            let Some(&c) = text.get(i) else { return Err(s) };
            match c {
                b'-' => s.minus = true,
                b'+' => s.plus = true,
                b' ' => s.space = true,
                b'#' => s.alt = true,
                b'0' => s.zero = true,
                b'\'' => s.group = true,
                b'I' => s.i18n = true,
                _ => break,
            }
            i += 1;
        }
        if text.get(i) == Some(&b'*') {
            i += 1;
            let w = arg_int(args.next());
            s.star_left = w < 0;
            s.width = w.unsigned_abs() as usize;
        } else {
            s.width = read_number(text, &mut i);
        }
        if text.get(i) == Some(&b'.') {
            i += 1;
            if text.get(i) == Some(&b'*') {
                i += 1;
                let p = arg_int(args.next());
                s.precision = usize::try_from(p).ok();
            } else {
                s.precision = Some(read_number(text, &mut i));
            }
        }
        let Some(&c) = text.get(i) else { return Err(s) };
        match c {
            b'h' if text.get(i + 1) == Some(&b'h') => {
                s.length = Length::Char;
                i += 2;
            }
            b'h' => {
                s.length = Length::Short;
                i += 1;
            }
            b'l' if text.get(i + 1) == Some(&b'l') => i += 2,
            b'l' => {
                s.length = Length::Long;
                i += 1;
            }
            b'L' | b'q' | b'j' | b'z' | b'Z' | b't' => i += 1,
            _ => {}
        }
        match text.get(i) {
            Some(&conv) => {
                s.conv = conv;
                Ok((s, i + 1))
            }
            None => Err(s),
        }
    }

    /// Whether glibc's fast path gives this specification to its positional path: unknown
    /// conversions (Io models all known ones but `s S n m`), and a single `h` before a
    /// conversion that is not an integer (found by experiment on glibc 2.36).
    fn leaves_fast_path(&self) -> bool {
        let known = b"diuxXobBcCpfFeEgGaA%sSnm".contains(&self.conv);
        !known || (self.length == Length::Short && b"cCpfFeEgGaAsSm".contains(&self.conv))
    }

    fn left(&self) -> bool {
        self.minus || self.star_left
    }

    /// glibc's "pad with zeros" state: set by the `0` flag unless `-` is given; a negative
    /// `*` width clears it, except on the positional path.
    fn pad_zero(&self) -> bool {
        self.zero && !self.minus && (self.positional || !self.star_left)
    }

    fn write(&self, out: &mut Vec<u8>, args: &mut impl Iterator<Item = PutfArg>) -> Result<(), Stop> {
        match self.conv {
            b'%' => out.push(b'%'),
            b'd' | b'i' => {
                let v = match self.length {
                    Length::Int | Length::Long => arg_int(args.next()) as i64,
                    Length::Short => arg_int(args.next()) as i16 as i64,
                    Length::Char => arg_int(args.next()) as i8 as i64,
                };
                let digits = self.int_digits(v.unsigned_abs(), 10, false);
                self.pad(out, sign(v < 0, self.plus, self.space), &digits, self.precision.is_none());
            }
            b'u' | b'x' | b'X' | b'o' | b'b' | b'B' => {
                let v = match self.length {
                    Length::Int | Length::Long => arg_int(args.next()) as u32 as u64,
                    Length::Short => arg_int(args.next()) as u16 as u64,
                    Length::Char => arg_int(args.next()) as u8 as u64,
                };
                let (radix, upper) = match self.conv {
                    b'u' => (10, false),
                    b'o' => (8, false),
                    b'b' | b'B' => (2, false),
                    c => (16, c == b'X'),
                };
                let digits = self.int_digits(v, radix, upper);
                let prefix = match self.conv {
                    _ if !self.alt => "",
                    // `#` makes octal start with a 0 digit, even for a 0 printed as nothing.
                    b'o' if !digits.starts_with('0') => "0",
                    b'x' if v != 0 => "0x",
                    b'X' if v != 0 => "0X",
                    b'b' if v != 0 => "0b",
                    b'B' if v != 0 => "0B",
                    _ => "",
                };
                self.pad(out, prefix, &digits, self.precision.is_none());
            }
            b'c' | b'C' if self.conv == b'C' || self.length == Length::Long => {
                // A wide character: the C locale encodes only ASCII.
                let c = u8::try_from(arg_int(args.next())).ok().filter(u8::is_ascii).ok_or(Stop)?;
                self.pad(out, "", [c], false);
            }
            b'c' => self.pad(out, "", [arg_int(args.next()) as u8], false),
            b'p' => match arg_int(args.next()) as u32 {
                0 => self.pad(out, "", "(nil)", false),
                v => {
                    let prefix = format!("{}0x", sign(false, self.plus, self.space));
                    self.pad(out, &prefix, self.int_digits(v as u64, 16, false), self.precision.is_none());
                }
            },
            b'f' | b'F' | b'e' | b'E' | b'g' | b'G' | b'a' | b'A' => self.write_float(out, arg_float(args.next())),
            _ => self.write_unknown(out),
        }
        Ok(())
    }

    /// The digits of an integer conversion: at least `precision` of them (an explicit zero
    /// precision prints the value 0 as nothing).
    fn int_digits(&self, v: u64, radix: u32, upper: bool) -> String {
        let mut digits = match radix {
            10 => v.to_string(),
            8 => format!("{v:o}"),
            2 => format!("{v:b}"),
            _ if upper => format!("{v:X}"),
            _ => format!("{v:x}"),
        };
        if let Some(p) = self.precision {
            if p == 0 && v == 0 {
                digits.clear();
            }
            if digits.len() < p {
                digits.insert_str(0, &"0".repeat(p - digits.len()));
            }
        }
        digits
    }

    fn write_float(&self, out: &mut Vec<u8>, v: f64) {
        let upper = self.conv.is_ascii_uppercase();
        let sign = sign(v.is_sign_negative(), self.plus, self.space);
        let a = v.abs();
        if !a.is_finite() {
            let word = match (a.is_nan(), upper) {
                (true, false) => "nan",
                (true, true) => "NAN",
                (false, false) => "inf",
                (false, true) => "INF",
            };
            return self.pad(out, sign, word, false);
        }
        let zero_left = self.left() && self.pad_zero();
        let body = match self.conv.to_ascii_lowercase() {
            b'f' => format_fixed(a, self.precision.unwrap_or(6), self.alt),
            b'e' => format_exp(a, self.precision.unwrap_or(6), self.alt, upper),
            b'g' => format_general(a, self.precision.unwrap_or(6), self.alt, upper),
            _ => {
                let mut digits = hex_float_digits(a, self.precision);
                if self.alt && !digits.contains('.') {
                    digits.insert(digits.find('p').unwrap_or(digits.len()), '.');
                }
                // Zero padding goes between "0x" and the digits.
                let prefix = format!("{sign}{}", if upper { "0X" } else { "0x" });
                let digits = if upper { digits.to_uppercase() } else { digits };
                if zero_left {
                    // glibc's hex-float printer pads neither side in this state.
                    out.extend_from_slice(prefix.as_bytes());
                    out.extend_from_slice(digits.as_bytes());
                    return;
                }
                return self.pad(out, &prefix, &digits, true);
            }
        };
        if zero_left {
            // glibc's decimal printer pads on the right with its pad character.
            let fill = self.width.saturating_sub(sign.len() + body.len());
            out.extend_from_slice(sign.as_bytes());
            out.extend_from_slice(body.as_bytes());
            out.extend(std::iter::repeat_n(b'0', fill));
            return;
        }
        self.pad(out, sign, &body, true);
    }

    /// glibc prints an unknown conversion's specification back, canonicalised.
    fn write_unknown(&self, out: &mut Vec<u8>) {
        out.push(b'%');
        let flags = [
            (self.alt, b'#'),
            (self.group, b'\''),
            (self.plus, b'+'),
            (self.space && !self.plus, b' '),
            (self.left(), b'-'),
            (self.pad_zero(), b'0'),
            (self.i18n, b'I'),
        ];
        out.extend(flags.iter().filter(|(on, _)| *on).map(|&(_, c)| c));
        if self.width != 0 {
            out.extend_from_slice(self.width.to_string().as_bytes());
        }
        if let Some(p) = self.precision {
            out.push(b'.');
            out.extend_from_slice(p.to_string().as_bytes());
        }
        if self.conv != 0 {
            out.push(self.conv);
        }
    }

    /// Writes `prefix` (sign, base prefix) and `body` padded to the field width: spaces on
    /// the right when left-justified, zeros between prefix and body when padding with zeros
    /// (and `zero_ok`), else spaces on the left.
    fn pad(&self, out: &mut Vec<u8>, prefix: &str, body: impl AsRef<[u8]>, zero_ok: bool) {
        let body = body.as_ref();
        let fill = self.width.saturating_sub(prefix.len() + body.len());
        if self.left() {
            out.extend_from_slice(prefix.as_bytes());
            out.extend_from_slice(body);
            out.extend(std::iter::repeat_n(b' ', fill));
        } else if self.pad_zero() && zero_ok {
            out.extend_from_slice(prefix.as_bytes());
            out.extend(std::iter::repeat_n(b'0', fill));
            out.extend_from_slice(body);
        } else {
            out.extend(std::iter::repeat_n(b' ', fill));
            out.extend_from_slice(prefix.as_bytes());
            out.extend_from_slice(body);
        }
    }
}

/// Reads decimal digits at `*i` (none reads as 0), saturating on absurd lengths.
fn read_number(text: &[u8], i: &mut usize) -> usize {
    let mut n: usize = 0;
    while let Some(d) = text.get(*i).filter(|c| c.is_ascii_digit()) {
        n = n.saturating_mul(10).saturating_add((d - b'0') as usize);
        *i += 1;
    }
    n
}

fn sign(negative: bool, plus: bool, space: bool) -> &'static str {
    match (negative, plus, space) {
        (true, _, _) => "-",
        (false, true, _) => "+",
        (false, false, true) => " ",
        _ => "",
    }
}

fn arg_int(a: Option<PutfArg>) -> i32 {
    match a {
        Some(PutfArg::Int(v)) => v,
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

/// `%a` of a finite non-negative double, without the "0x": `1.8p+1`. With a precision the
/// fraction is rounded to that many hex digits (to nearest, ties to even; the leading digit
/// may become 2, as in glibc); without one, trailing zero digits are dropped. Subnormals
/// print with a leading 0 and exponent -1022.
fn hex_float_digits(a: f64, precision: Option<usize>) -> String {
    const FRACTION_DIGITS: usize = 13; // 52 bits
    let bits = a.to_bits();
    let biased_exp = (bits >> 52) as i64;
    let mut fraction = bits & ((1 << 52) - 1);
    let (mut lead, exp) = match (biased_exp, fraction) {
        (0, 0) => (0, 0),
        (0, _) => (0, -1022),
        _ => (1u64, biased_exp - 1023),
    };
    if let Some(p) = precision.filter(|&p| p < FRACTION_DIGITS) {
        let dropped = (FRACTION_DIGITS - p) * 4;
        let full = (lead << 52) | fraction;
        let mut kept = full >> dropped;
        let rest = full & ((1 << dropped) - 1);
        let half = 1 << (dropped - 1);
        if rest > half || (rest == half && kept & 1 == 1) {
            kept += 1;
        }
        lead = kept >> (p * 4);
        fraction = (kept & ((1 << (p * 4)) - 1)) << dropped;
    }
    let mut digits = format!("{fraction:013x}");
    match precision {
        None => digits.truncate(digits.trim_end_matches('0').len()),
        Some(p) if p <= FRACTION_DIGITS => digits.truncate(p),
        Some(p) => digits.push_str(&"0".repeat(p - FRACTION_DIGITS)),
    }
    let point = if digits.is_empty() { "" } else { "." };
    format!("{lead}{point}{digits}p{exp:+}")
}

/// `%.Nf` of a finite non-negative double.
fn format_fixed(a: f64, precision: usize, alt: bool) -> String {
    let mut s = format!("{a:.precision$}");
    if alt && precision == 0 {
        s.push('.');
    }
    s
}

/// `%.Ne` of a finite non-negative double: at least two exponent digits.
fn format_exp(a: f64, precision: usize, alt: bool, upper: bool) -> String {
    let s = format!("{a:.precision$e}");
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let point = if alt && precision == 0 { "." } else { "" };
    let e = if upper { 'E' } else { 'e' };
    let exp_sign = if exp < 0 { '-' } else { '+' };
    format!("{mantissa}{point}{e}{exp_sign}{:02}", exp.unsigned_abs())
}

/// The decimal exponent of `a` (finite, positive) after rounding to `significant` digits.
fn decimal_exponent(a: f64, significant: usize) -> i32 {
    let s = format!("{a:.*e}", significant.saturating_sub(1));
    s.split_once('e').and_then(|(_, e)| e.parse().ok()).unwrap_or(0)
}

/// `%.Ng` of a finite non-negative double (see the module documentation for glibc's carry
/// quirk).
fn format_general(a: f64, precision: usize, alt: bool, upper: bool) -> String {
    let p = precision.max(1);
    let x = if a == 0.0 { 0 } else { decimal_exponent(a, p) };
    let mut s = if x < -4 || x >= p as i32 {
        // A double's exact decimal expansion has fewer than 800 significant digits, so this
        // exponent is that of the unrounded value.
        let carried_from_fixed = x == p as i32 && decimal_exponent(a, 800) == x - 1;
        format_exp(a, if carried_from_fixed { 0 } else { p - 1 }, alt, upper)
    } else {
        format_fixed(a, (p as i32 - 1 - x) as usize, alt)
    };
    if !alt {
        // Drop trailing zeros of the fraction, and the point if nothing follows it.
        let exp_at = s.find(['e', 'E']).unwrap_or(s.len());
        let (number, exp) = s.split_at(exp_at);
        if number.contains('.') {
            s = format!("{}{exp}", number.trim_end_matches('0').trim_end_matches('.'));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use PutfArg::{Float, Int};

    fn printf(fmt: &str, args: &[PutfArg]) -> String {
        String::from_utf8(format_printf(fmt.as_bytes(), args)).expect("ASCII output")
    }

    #[test]
    fn hex_floats() {
        assert_eq!(format_hex_float(std::f32::consts::PI as f64), "0x1.921fb6p+1");
        assert_eq!(format_hex_float(-0.0), "-0x0p+0");
        assert_eq!(format_hex_float(f32::from_bits(1) as f64), "0x1p-149");
        assert_eq!(format_hex_float(f64::from_bits(1)), "0x0.0000000000001p-1022");
        assert_eq!(printf("%.0a|%.1a|%#.0a", &[Float(1.5), Float(1.96875), Float(1.0)]), "0x2p+0|0x2.0p+0|0x1.p+0");
        assert_eq!(
            printf("%012a|%-+12A|%012a", &[Float(3.0), Float(3.0), Float(f32::NEG_INFINITY)]),
            "0x00001.8p+1|+0X1.8P+1   |        -inf"
        );
    }

    #[test]
    fn integers_with_flags_and_modifiers() {
        assert_eq!(printf("%#.0o|%#o|%#.0x|%#x", &[Int(0), Int(8), Int(0), Int(255)]), "0|010||0xff");
        assert_eq!(
            printf("%hd|%hhu|%hx|%#b|%08.3d", &[Int(65535), Int(-1), Int(0x12345), Int(5), Int(-7)]),
            "-1|255|2345|0b101|    -007"
        );
        assert_eq!(printf("%*d|%-*d|%.*d", &[Int(-4), Int(1), Int(3), Int(2), Int(-1), Int(0)]), "1   |2  |0");
        assert_eq!(
            printf("%'d|%Id|%p|%+p|%8p", &[Int(1234), Int(5), Int(0), Int(16), Int(0)]),
            "1234|5|(nil)|+0x10|   (nil)"
        );
    }

    #[test]
    fn unknown_conversions_and_truncated_formats() {
        assert_eq!(printf("%-08.3hk|%+ #k|%.k|%*k", &[Int(-3)]), "%-8.3k|%#+k|%.0k|%-3k");
        assert_eq!(printf("abc%", &[]), "abc");
        assert_eq!(printf("%d %5", &[Int(1)]), "1 ");
        assert_eq!(printf("100%%|%5%", &[]), "100%|%");
    }

    #[test]
    fn general_format_including_glibc_carry_quirk() {
        assert_eq!(
            printf("%g|%g|%g|%g", &[Float(0.0001), Float(123456.0), Float(1234567.0), Float(0.0)]),
            "0.0001|123456|1.23457e+06|0"
        );
        assert_eq!(printf("%#g|%#.3g|%#.2g", &[Float(1.5), Float(0.0001), Float(99.5)]), "1.50000|0.000100|1.e+02");
        assert_eq!(
            printf("%#g|%g|%#.5g", &[Float(999999.94), Float(999999.94), Float(999999.94)]),
            "1.e+06|1e+06|1.0000e+06"
        );
        assert_eq!(printf("%.1f|%.2f|%.0f|%.0f", &[Float(0.25), Float(0.125), Float(2.5), Float(3.5)]), "0.2|0.12|2|4");
    }
}
