//! Lexer: SysY source text → tokens with byte-offset spans.
//!
//! The whole file is tokenised up front (SysY files are small) and the first lexical error
//! stops it. Literal rules follow C:
//! * integers are decimal, octal (leading `0`) or hex (`0x`); the value must fit in `u32` and
//!   is stored wrapped to `i32` (so `2147483648` becomes `i32::MIN`, which `-2147483648`
//!   needs);
//! * floats are C decimal floats (`5.5 .0 2. 1e-6 03.14` — a leading `0` does not make them
//!   octal) or hex floats (`0x1.8p3`, binary exponent mandatory), rounded once, correctly, to
//!   binary32 (Rust's `f32::from_str` and the runtime's `parse_hex_float` both do that);
//!   overflow gives infinity, as in C;
//! * a literal directly followed by a letter, digit or `_` is an error (no suffixes);
//! * string literals exist only for `putf`; C escapes are resolved to bytes.
//!
//! The lexer works on `&str`; callers holding raw bytes convert them lossily first (see
//! `frontend::source_from_bytes`), so a stray byte becomes U+FFFD and is reported as an
//! unexpected character (or, inside a string literal, as invalid UTF-8) rather than breaking
//! span arithmetic; in comments it is ignored (competition tests have GBK comments).

use super::ast::{IntBase, Span};
use super::diag::Diagnostic;
use crate::runtime::io::parse_hex_float;

#[derive(Clone, Debug, PartialEq)]
pub enum TokenKind {
    Ident(String),
    Int(i32, IntBase),
    Float(f32),
    Str(Vec<u8>),
    // Keywords.
    KwInt,
    KwFloat,
    KwVoid,
    KwConst,
    KwIf,
    KwElse,
    KwWhile,
    KwBreak,
    KwContinue,
    KwReturn,
    // Punctuation and operators.
    LParen,
    RParen,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    Comma,
    Semi,
    Assign,
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    Not,
    Lt,
    Gt,
    Le,
    Ge,
    EqEq,
    Ne,
    AndAnd,
    OrOr,
    Eof,
}

impl TokenKind {
    /// How the token is named in "expected X, found Y" messages.
    pub fn describe(&self) -> String {
        use TokenKind::*;
        let fixed = match self {
            Ident(name) => return format!("identifier `{name}`"),
            Int(..) => return "integer literal".to_string(),
            Float(_) => return "float literal".to_string(),
            Str(_) => return "string literal".to_string(),
            Eof => return "end of file".to_string(),
            KwInt => "int",
            KwFloat => "float",
            KwVoid => "void",
            KwConst => "const",
            KwIf => "if",
            KwElse => "else",
            KwWhile => "while",
            KwBreak => "break",
            KwContinue => "continue",
            KwReturn => "return",
            LParen => "(",
            RParen => ")",
            LBracket => "[",
            RBracket => "]",
            LBrace => "{",
            RBrace => "}",
            Comma => ",",
            Semi => ";",
            Assign => "=",
            Plus => "+",
            Minus => "-",
            Star => "*",
            Slash => "/",
            Percent => "%",
            Not => "!",
            Lt => "<",
            Gt => ">",
            Le => "<=",
            Ge => ">=",
            EqEq => "==",
            Ne => "!=",
            AndAnd => "&&",
            OrOr => "||",
        };
        format!("`{fixed}`")
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    pub kind: TokenKind,
    pub span: Span,
}

fn keyword(word: &str) -> Option<TokenKind> {
    use TokenKind::*;
    Some(match word {
        "int" => KwInt,
        "float" => KwFloat,
        "void" => KwVoid,
        "const" => KwConst,
        "if" => KwIf,
        "else" => KwElse,
        "while" => KwWhile,
        "break" => KwBreak,
        "continue" => KwContinue,
        "return" => KwReturn,
        _ => return None,
    })
}

fn is_ident_start(c: u8) -> bool {
    c == b'_' || c.is_ascii_alphabetic()
}

fn is_ident_continue(c: u8) -> bool {
    c == b'_' || c.is_ascii_alphanumeric()
}

/// Tokenises `src`. The result always ends with an `Eof` token.
pub fn tokenize(src: &str) -> Result<Vec<Token>, Diagnostic> {
    if src.len() > u32::MAX as usize {
        return Err(Diagnostic::error(Span::DUMMY, "source file too large (over 4 GiB)"));
    }
    let mut lexer = Lexer { src: src.as_bytes(), text: src, pos: 0 };
    let mut tokens = Vec::new();
    loop {
        let token = lexer.next_token()?;
        let done = token.kind == TokenKind::Eof;
        tokens.push(token);
        if done {
            return Ok(tokens);
        }
    }
}

struct Lexer<'a> {
    src: &'a [u8],
    text: &'a str,
    pos: usize,
}

impl<'a> Lexer<'a> {
    fn peek_at(&self, offset: usize) -> Option<u8> {
        self.src.get(self.pos + offset).copied()
    }

    fn span_from(&self, start: usize) -> Span {
        Span::new(start, self.pos)
    }

    /// Skips whitespace and comments.
    fn skip_trivia(&mut self) -> Result<(), Diagnostic> {
        loop {
            match (self.peek_at(0), self.peek_at(1)) {
                (Some(b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c), _) => self.pos += 1,
                (Some(b'/'), Some(b'/')) => {
                    while self.peek_at(0).is_some_and(|c| c != b'\n') {
                        self.pos += 1;
                    }
                }
                (Some(b'/'), Some(b'*')) => {
                    let start = self.pos;
                    match self.text[start + 2..].find("*/") {
                        Some(end) => self.pos = start + 2 + end + 2,
                        None => {
                            return Err(Diagnostic::error(Span::new(start, start + 2), "unterminated block comment"));
                        }
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    fn next_token(&mut self) -> Result<Token, Diagnostic> {
        self.skip_trivia()?;
        let start = self.pos;
        let Some(c) = self.peek_at(0) else {
            return Ok(Token { kind: TokenKind::Eof, span: Span::new(start, start) });
        };
        use TokenKind::*;
        let two = |this: &mut Self, kind: TokenKind| {
            this.pos += 2;
            Ok(Token { kind, span: this.span_from(start) })
        };
        let next = self.peek_at(1);
        match (c, next) {
            (b'<', Some(b'=')) => return two(self, Le),
            (b'>', Some(b'=')) => return two(self, Ge),
            (b'=', Some(b'=')) => return two(self, EqEq),
            (b'!', Some(b'=')) => return two(self, Ne),
            (b'&', Some(b'&')) => return two(self, AndAnd),
            (b'|', Some(b'|')) => return two(self, OrOr),
            _ => {}
        }
        let single = match c {
            b'(' => Some(LParen),
            b')' => Some(RParen),
            b'[' => Some(LBracket),
            b']' => Some(RBracket),
            b'{' => Some(LBrace),
            b'}' => Some(RBrace),
            b',' => Some(Comma),
            b';' => Some(Semi),
            b'=' => Some(Assign),
            b'+' => Some(Plus),
            b'-' => Some(Minus),
            b'*' => Some(Star),
            b'/' => Some(Slash),
            b'%' => Some(Percent),
            b'!' => Some(Not),
            b'<' => Some(Lt),
            b'>' => Some(Gt),
            _ => None,
        };
        if let Some(kind) = single {
            self.pos += 1;
            return Ok(Token { kind, span: self.span_from(start) });
        }
        if is_ident_start(c) {
            while self.peek_at(0).is_some_and(is_ident_continue) {
                self.pos += 1;
            }
            let word = &self.text[start..self.pos];
            let kind = keyword(word).unwrap_or_else(|| Ident(word.to_string()));
            return Ok(Token { kind, span: self.span_from(start) });
        }
        if c.is_ascii_digit() || (c == b'.' && next.is_some_and(|d| d.is_ascii_digit())) {
            return self.number();
        }
        if c == b'"' {
            return self.string();
        }
        // Report the whole (possibly multi-byte) character.
        let ch = self.text[start..].chars().next().unwrap_or('\u{fffd}');
        let span = Span::new(start, start + ch.len_utf8());
        let shown = if ch.is_ascii_graphic() { format!("`{ch}`") } else { format!("{:?}", ch) };
        Err(Diagnostic::error(span, format!("unexpected character {shown}")))
    }

    fn skip_digits(&mut self, pred: fn(&u8) -> bool) -> usize {
        let start = self.pos;
        while self.peek_at(0).as_ref().is_some_and(pred) {
            self.pos += 1;
        }
        self.pos - start
    }

    fn number(&mut self) -> Result<Token, Diagnostic> {
        let start = self.pos;
        let is_hex = self.peek_at(0) == Some(b'0') && matches!(self.peek_at(1), Some(b'x' | b'X'));
        let kind = if is_hex { self.hex_number(start)? } else { self.decimal_number(start)? };
        // C forbids a literal running straight into an identifier character (no suffixes).
        if self.peek_at(0).is_some_and(|c| is_ident_continue(c) || c == b'.') {
            while self.peek_at(0).is_some_and(|c| is_ident_continue(c) || c == b'.') {
                self.pos += 1;
            }
            return Err(Diagnostic::error(
                self.span_from(start),
                format!("invalid numeric literal `{}`", &self.text[start..self.pos]),
            ));
        }
        Ok(Token { kind, span: self.span_from(start) })
    }

    fn hex_number(&mut self, start: usize) -> Result<TokenKind, Diagnostic> {
        self.pos += 2;
        let int_digits = self.skip_digits(u8::is_ascii_hexdigit);
        let mut frac_digits = 0;
        let mut is_float = false;
        if self.peek_at(0) == Some(b'.') {
            is_float = true;
            self.pos += 1;
            frac_digits = self.skip_digits(u8::is_ascii_hexdigit);
        }
        if int_digits + frac_digits == 0 {
            return Err(Diagnostic::error(Span::new(start, self.pos), "hexadecimal literal has no digits"));
        }
        if matches!(self.peek_at(0), Some(b'p' | b'P')) {
            is_float = true;
            self.pos += 1;
            if matches!(self.peek_at(0), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if self.skip_digits(u8::is_ascii_digit) == 0 {
                return Err(Diagnostic::error(self.span_from(start), "hexadecimal float exponent has no digits"));
            }
        } else if is_float {
            return Err(Diagnostic::error(self.span_from(start), "hexadecimal float literal requires a `p` exponent"));
        }
        if is_float {
            let body = &self.src[start + 2..self.pos];
            match parse_hex_float(body) {
                Some((v, n)) if n == body.len() => Ok(TokenKind::Float(v)),
                _ => Err(Diagnostic::error(self.span_from(start), "malformed hexadecimal float literal")),
            }
        } else {
            let digits = &self.text[start + 2..self.pos];
            let v = int_value(digits, 16).ok_or_else(|| out_of_range(self.span_from(start)))?;
            Ok(TokenKind::Int(v, IntBase::Hex))
        }
    }

    fn decimal_number(&mut self, start: usize) -> Result<TokenKind, Diagnostic> {
        self.skip_digits(u8::is_ascii_digit);
        let mut is_float = false;
        if self.peek_at(0) == Some(b'.') {
            is_float = true;
            self.pos += 1;
            self.skip_digits(u8::is_ascii_digit);
        }
        if matches!(self.peek_at(0), Some(b'e' | b'E')) {
            let sign = usize::from(matches!(self.peek_at(1), Some(b'+' | b'-')));
            if self.peek_at(1 + sign).is_some_and(|c| c.is_ascii_digit()) {
                is_float = true;
                self.pos += 1 + sign;
                self.skip_digits(u8::is_ascii_digit);
            } else {
                self.pos += 1;
                return Err(Diagnostic::error(self.span_from(start), "float exponent has no digits"));
            }
        }
        let text = &self.text[start..self.pos];
        if is_float {
            // Rust's parser accepts every C decimal float form except a trailing `.` before
            // an exponent (`2.e3`); normalise that one.
            let normalised = text.replacen(".e", ".0e", 1).replacen(".E", ".0E", 1);
            return match normalised.parse::<f32>() {
                Ok(v) => Ok(TokenKind::Float(v)),
                Err(_) => Err(Diagnostic::error(self.span_from(start), "malformed float literal")),
            };
        }
        if text.len() > 1 && text.starts_with('0') {
            if let Some(bad) = text.bytes().position(|c| c >= b'8') {
                let at = start + bad;
                return Err(Diagnostic::error(
                    Span::new(at, at + 1),
                    format!("invalid digit `{}` in octal literal", &text[bad..bad + 1]),
                ));
            }
            let v = int_value(&text[1..], 8).ok_or_else(|| out_of_range(self.span_from(start)))?;
            return Ok(TokenKind::Int(v, IntBase::Oct));
        }
        let v = int_value(text, 10).ok_or_else(|| out_of_range(self.span_from(start)))?;
        Ok(TokenKind::Int(v, IntBase::Dec))
    }

    fn string(&mut self) -> Result<Token, Diagnostic> {
        let start = self.pos;
        self.pos += 1;
        let mut bytes = Vec::new();
        let unterminated = |at: usize| Diagnostic::error(Span::new(at, at + 1), "unterminated string literal");
        loop {
            let Some(c) = self.peek_at(0) else { return Err(unterminated(start)) };
            match c {
                b'"' => {
                    self.pos += 1;
                    return Ok(Token { kind: TokenKind::Str(bytes), span: self.span_from(start) });
                }
                b'\n' => return Err(unterminated(start)),
                _ if self.src[self.pos..].starts_with(REPLACEMENT_CHARACTER) => {
                    let at = Span::new(self.pos, self.pos + REPLACEMENT_CHARACTER.len());
                    return Err(Diagnostic::error(at, "invalid UTF-8 in a string literal")
                        .with_note("string literals must be UTF-8 (invalid bytes are only tolerated in comments)"));
                }
                b'\\' => {
                    let esc_start = self.pos;
                    self.pos += 1;
                    bytes.push(
                        self.escape(esc_start)
                            .map_err(|d| if self.pos >= self.src.len() { unterminated(start) } else { d })?,
                    );
                }
                _ => {
                    bytes.push(c);
                    self.pos += 1;
                }
            }
        }
    }

    /// One escape sequence after the backslash at `esc_start`.
    fn escape(&mut self, esc_start: usize) -> Result<u8, Diagnostic> {
        let Some(c) = self.peek_at(0) else {
            return Err(Diagnostic::error(Span::new(esc_start, self.pos), "unterminated escape"));
        };
        self.pos += 1;
        let simple = match c {
            b'n' => Some(b'\n'),
            b't' => Some(b'\t'),
            b'r' => Some(b'\r'),
            b'a' => Some(0x07),
            b'b' => Some(0x08),
            b'f' => Some(0x0c),
            b'v' => Some(0x0b),
            b'\\' => Some(b'\\'),
            b'"' => Some(b'"'),
            b'\'' => Some(b'\''),
            b'?' => Some(b'?'),
            _ => None,
        };
        if let Some(b) = simple {
            return Ok(b);
        }
        let bad_range = |this: &Self| Diagnostic::error(Span::new(esc_start, this.pos), "escape sequence out of range");
        match c {
            b'0'..=b'7' => {
                let mut v = (c - b'0') as u32;
                for _ in 0..2 {
                    match self.peek_at(0) {
                        Some(d @ b'0'..=b'7') => {
                            v = v * 8 + (d - b'0') as u32;
                            self.pos += 1;
                        }
                        _ => break,
                    }
                }
                u8::try_from(v).map_err(|_| bad_range(self))
            }
            b'x' => {
                // C: a hex escape takes every following hex digit.
                let mut v: u32 = 0;
                let digits = self.skip_digits(u8::is_ascii_hexdigit);
                if digits == 0 {
                    return Err(Diagnostic::error(
                        Span::new(esc_start, self.pos),
                        "`\\x` used with no following hex digits",
                    ));
                }
                for &d in &self.src[self.pos - digits..self.pos] {
                    let digit = (d as char).to_digit(16).unwrap_or(0);
                    v = v.saturating_mul(16).saturating_add(digit);
                }
                u8::try_from(v).map_err(|_| bad_range(self))
            }
            _ => {
                let ch = self.text[esc_start + 1..].chars().next().unwrap_or('\u{fffd}');
                self.pos = esc_start + 1 + ch.len_utf8();
                Err(Diagnostic::error(Span::new(esc_start, self.pos), format!("unknown escape sequence `\\{ch}`")))
            }
        }
    }
}

/// U+FFFD in UTF-8: what [`super::source_from_bytes`] turns each invalid byte into. Inside a
/// string literal it becomes bytes of the program's output, so it is rejected there (a
/// literal U+FFFD written in a valid file is rejected too: the two cannot be told apart).
const REPLACEMENT_CHARACTER: &[u8] = "\u{fffd}".as_bytes();

fn out_of_range(span: Span) -> Diagnostic {
    Diagnostic::error(span, "integer literal out of range")
}

/// Value of `digits` in `radix` if it fits in `u32`, reinterpreted as `i32`.
fn int_value(digits: &str, radix: u32) -> Option<i32> {
    let mut v: u32 = 0;
    for c in digits.chars() {
        v = v.checked_mul(radix)?.checked_add(c.to_digit(radix)?)?;
    }
    Some(v as i32)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<TokenKind> {
        tokenize(src).expect("lexes").into_iter().map(|t| t.kind).collect()
    }

    fn one(src: &str) -> TokenKind {
        let k = kinds(src);
        assert_eq!(k.len(), 2, "{src}: {k:?}");
        k[0].clone()
    }

    fn err(src: &str) -> Diagnostic {
        tokenize(src).expect_err(src)
    }

    #[test]
    fn integers() {
        assert_eq!(one("0"), TokenKind::Int(0, IntBase::Dec));
        assert_eq!(one("123"), TokenKind::Int(123, IntBase::Dec));
        assert_eq!(one("075"), TokenKind::Int(61, IntBase::Oct));
        assert_eq!(one("00"), TokenKind::Int(0, IntBase::Oct));
        assert_eq!(one("0x1F"), TokenKind::Int(31, IntBase::Hex));
        assert_eq!(one("0XfF"), TokenKind::Int(255, IntBase::Hex));
        assert_eq!(one("2147483648"), TokenKind::Int(i32::MIN, IntBase::Dec));
        assert_eq!(one("4294967295"), TokenKind::Int(-1, IntBase::Dec));
        assert_eq!(one("0xffffffff"), TokenKind::Int(-1, IntBase::Hex));
        assert_eq!(one("037777777777"), TokenKind::Int(-1, IntBase::Oct));
    }

    #[test]
    fn integer_errors() {
        assert!(err("4294967296").message.contains("integer literal out of range"));
        assert!(err("0x100000000").message.contains("integer literal out of range"));
        assert!(err("99999999999999999999999999").message.contains("out of range"));
        let e = err("  0789");
        assert!(e.message.contains("invalid digit `8` in octal"), "{}", e.message);
        assert_eq!(e.span, Span::new(4, 5));
        assert!(err("12abc").message.contains("invalid numeric literal `12abc`"));
        assert!(err("0x").message.contains("no digits"));
        assert!(err("1.5f").message.contains("invalid numeric literal"));
    }

    #[test]
    fn floats() {
        assert_eq!(one("5.5"), TokenKind::Float(5.5));
        assert_eq!(one(".0"), TokenKind::Float(0.0));
        assert_eq!(one("2."), TokenKind::Float(2.0));
        assert_eq!(one("2.e1"), TokenKind::Float(20.0));
        assert_eq!(one("1e-6"), TokenKind::Float(1e-6));
        assert_eq!(one(".33E+5"), TokenKind::Float(33000.0));
        assert_eq!(one("03.141592653589793"), TokenKind::Float(std::f32::consts::PI));
        assert_eq!(one("09.5"), TokenKind::Float(9.5));
        assert_eq!(one("0x1.921fb6p+1"), TokenKind::Float(f32::from_bits(0x40490fdb)));
        assert_eq!(one("0x.AP-3"), TokenKind::Float(0.078125));
        assert_eq!(one("0x1p3"), TokenKind::Float(8.0));
        assert_eq!(one("1e39"), TokenKind::Float(f32::INFINITY));
        // Correct rounding directly to f32 (double rounding would give the other neighbour).
        assert_eq!(one("1.00000005960464477539062500001"), TokenKind::Float(f32::from_bits(0x3f800001)));
    }

    #[test]
    fn float_errors() {
        assert!(err("0x1.8").message.contains("requires a `p` exponent"));
        assert!(err("0x1p").message.contains("exponent has no digits"));
        assert!(err("1e").message.contains("exponent has no digits"));
        assert!(err("1.2.3").message.contains("invalid numeric literal"));
    }

    #[test]
    fn strings_and_escapes() {
        assert_eq!(one(r#""a\n\t\\\"\'\0""#), TokenKind::Str(b"a\n\t\\\"'\0".to_vec()));
        assert_eq!(one(r#""\x41\101\7""#), TokenKind::Str(vec![0x41, 0x41, 7]));
        assert!(err(r#""abc"#).message.contains("unterminated string"));
        assert!(err("\"ab\ncd\"").message.contains("unterminated string"));
        assert!(err(r#""\q""#).message.contains("unknown escape"));
        assert!(err(r#""\x100""#).message.contains("out of range"));
        assert!(err(r#""\"#).message.contains("unterminated string"));
    }

    #[test]
    fn comments_and_operators() {
        use TokenKind::*;
        assert_eq!(
            kinds("a/*x*/<=b// c\n!=!&&||"),
            vec![Ident("a".into()), Le, Ident("b".into()), Ne, Not, AndAnd, OrOr, Eof]
        );
        let e = err("int /* never closed");
        assert_eq!(e.span, Span::new(4, 6));
        assert!(e.message.contains("unterminated block comment"));
    }

    #[test]
    fn bad_characters() {
        assert!(err("int a = 1 & 2;").message.contains("unexpected character `&`"));
        assert!(err("a\u{fffd}").message.contains("unexpected character"));
        assert!(err("é").message.contains("unexpected character"));
        assert_eq!(kinds(""), vec![TokenKind::Eof]);
    }
}
