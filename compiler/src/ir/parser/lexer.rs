//! Tokens of the IR text (see [`crate::ir::printer`] for the syntax).
//!
//! Newlines are tokens: every item and instruction ends at the end of its line, which keeps
//! the grammar free of lookahead puzzles and error messages on the right line. Numbers are
//! lexed without a sign (`-` is its own token) so `-2147483648` needs no special case.

use super::ParseError;

#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    /// Keywords, mnemonics, types, block labels: `[A-Za-z_][A-Za-z0-9_.]*`.
    Ident(String),
    /// `%name`.
    Local(String),
    /// `@name` or `@"quoted name"`.
    Global(String),
    /// `$n`.
    StrRef(u32),
    /// Unsigned decimal or `0x` hexadecimal integer.
    Int(u64),
    /// Decimal text containing `.` or an exponent.
    Float(String),
    Str(Vec<u8>),
    Minus,
    Arrow,
    LParen,
    RParen,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    Comma,
    Colon,
    Equals,
    Star,
    Newline,
    Eof,
}

impl Tok {
    /// How the token is named in "expected ..., found ..." messages.
    pub fn describe(&self) -> String {
        match self {
            Tok::Ident(s) => format!("`{s}`"),
            Tok::Local(s) => format!("`%{s}`"),
            Tok::Global(s) => format!("`@{s}`"),
            Tok::StrRef(n) => format!("`${n}`"),
            Tok::Int(n) => format!("`{n}`"),
            Tok::Float(s) => format!("`{s}`"),
            Tok::Str(_) => "a string literal".into(),
            Tok::Minus => "`-`".into(),
            Tok::Arrow => "`->`".into(),
            Tok::LParen => "`(`".into(),
            Tok::RParen => "`)`".into(),
            Tok::LBracket => "`[`".into(),
            Tok::RBracket => "`]`".into(),
            Tok::LBrace => "`{`".into(),
            Tok::RBrace => "`}`".into(),
            Tok::Comma => "`,`".into(),
            Tok::Colon => "`:`".into(),
            Tok::Equals => "`=`".into(),
            Tok::Star => "`*`".into(),
            Tok::Newline => "end of line".into(),
            Tok::Eof => "end of input".into(),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pos {
    pub line: u32,
    pub col: u32,
}

#[derive(Clone, Debug)]
pub struct Token {
    pub tok: Tok,
    pub pos: Pos,
}

pub fn tokenize(text: &str) -> Result<Vec<Token>, ParseError> {
    Lexer { src: text.as_bytes(), i: 0, line: 1, line_start: 0 }.run()
}

struct Lexer<'a> {
    src: &'a [u8],
    i: usize,
    line: u32,
    line_start: usize,
}

fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}

fn is_ident_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'.'
}

impl Lexer<'_> {
    fn pos(&self) -> Pos {
        Pos { line: self.line, col: (self.i - self.line_start + 1) as u32 }
    }

    fn err(&self, pos: Pos, message: impl Into<String>) -> ParseError {
        ParseError { line: pos.line, col: pos.col, message: message.into() }
    }

    fn peek(&self) -> Option<u8> {
        self.src.get(self.i).copied()
    }

    fn run(mut self) -> Result<Vec<Token>, ParseError> {
        let mut out = Vec::new();
        loop {
            // Skip blanks and comments (not newlines).
            while let Some(c) = self.peek() {
                if c == b' ' || c == b'\t' || c == b'\r' {
                    self.i += 1;
                } else if c == b';' {
                    while self.peek().is_some_and(|c| c != b'\n') {
                        self.i += 1;
                    }
                } else {
                    break;
                }
            }
            let pos = self.pos();
            let Some(c) = self.peek() else {
                out.push(Token { tok: Tok::Eof, pos });
                return Ok(out);
            };
            let tok = match c {
                b'\n' => {
                    self.i += 1;
                    self.line += 1;
                    self.line_start = self.i;
                    Tok::Newline
                }
                b'(' | b')' | b'[' | b']' | b'{' | b'}' | b',' | b':' | b'=' | b'*' => {
                    self.i += 1;
                    match c {
                        b'(' => Tok::LParen,
                        b')' => Tok::RParen,
                        b'[' => Tok::LBracket,
                        b']' => Tok::RBracket,
                        b'{' => Tok::LBrace,
                        b'}' => Tok::RBrace,
                        b',' => Tok::Comma,
                        b':' => Tok::Colon,
                        b'=' => Tok::Equals,
                        _ => Tok::Star,
                    }
                }
                b'-' => {
                    self.i += 1;
                    if self.peek() == Some(b'>') {
                        self.i += 1;
                        Tok::Arrow
                    } else {
                        Tok::Minus
                    }
                }
                b'%' => {
                    self.i += 1;
                    let name = self.take_while(is_ident_char);
                    if name.is_empty() {
                        return Err(self.err(pos, "expected a value name after `%`"));
                    }
                    Tok::Local(name)
                }
                b'@' => {
                    self.i += 1;
                    if self.peek() == Some(b'"') {
                        let bytes = self.string()?;
                        match String::from_utf8(bytes) {
                            Ok(s) => Tok::Global(s),
                            Err(_) => return Err(self.err(pos, "a quoted name must be valid UTF-8")),
                        }
                    } else {
                        let name = self.take_while(is_ident_char);
                        if name.is_empty() {
                            return Err(self.err(pos, "expected a name after `@`"));
                        }
                        Tok::Global(name)
                    }
                }
                b'$' => {
                    self.i += 1;
                    let digits = self.take_while(|c| c.is_ascii_digit());
                    match digits.parse::<u32>() {
                        Ok(n) => Tok::StrRef(n),
                        Err(_) => return Err(self.err(pos, "expected a string number after `$`")),
                    }
                }
                b'"' => Tok::Str(self.string()?),
                b'0'..=b'9' => self.number(pos)?,
                c if is_ident_start(c) => Tok::Ident(self.take_while(is_ident_char)),
                other => {
                    let shown = if other.is_ascii_graphic() {
                        format!("`{}`", other as char)
                    } else {
                        format!("byte 0x{other:02x}")
                    };
                    return Err(self.err(pos, format!("unexpected character {shown}")));
                }
            };
            out.push(Token { tok, pos });
        }
    }

    fn take_while(&mut self, pred: impl Fn(u8) -> bool) -> String {
        let start = self.i;
        while self.peek().is_some_and(&pred) {
            self.i += 1;
        }
        String::from_utf8_lossy(&self.src[start..self.i]).into_owned()
    }

    fn number(&mut self, pos: Pos) -> Result<Tok, ParseError> {
        if self.peek() == Some(b'0') && matches!(self.src.get(self.i + 1), Some(b'x' | b'X')) {
            self.i += 2;
            let digits = self.take_while(|c| c.is_ascii_hexdigit());
            return u64::from_str_radix(&digits, 16)
                .map(Tok::Int)
                .map_err(|_| self.err(pos, "malformed hexadecimal number"));
        }
        let start = self.i;
        let mut is_float = false;
        self.take_while(|c| c.is_ascii_digit());
        if self.peek() == Some(b'.') {
            is_float = true;
            self.i += 1;
            self.take_while(|c| c.is_ascii_digit());
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            is_float = true;
            self.i += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.i += 1;
            }
            if self.take_while(|c| c.is_ascii_digit()).is_empty() {
                return Err(self.err(pos, "missing exponent digits in a float literal"));
            }
        }
        if self.peek().is_some_and(is_ident_start) {
            return Err(self.err(pos, "malformed number"));
        }
        let text = String::from_utf8_lossy(&self.src[start..self.i]).into_owned();
        if is_float {
            Ok(Tok::Float(text))
        } else {
            text.parse::<u64>().map(Tok::Int).map_err(|_| self.err(pos, "integer literal too large"))
        }
    }

    /// A double-quoted literal starting at the current `"`.
    fn string(&mut self) -> Result<Vec<u8>, ParseError> {
        let start = self.pos();
        self.i += 1;
        let mut out = Vec::new();
        loop {
            let Some(c) = self.peek() else {
                return Err(self.err(start, "unterminated string literal"));
            };
            self.i += 1;
            match c {
                b'"' => return Ok(out),
                b'\n' => return Err(self.err(start, "unterminated string literal")),
                b'\\' => {
                    let esc_pos = Pos { line: self.line, col: (self.i - self.line_start) as u32 };
                    let Some(e) = self.peek() else {
                        return Err(self.err(start, "unterminated string literal"));
                    };
                    self.i += 1;
                    out.push(match e {
                        b'n' => b'\n',
                        b't' => b'\t',
                        b'r' => b'\r',
                        b'0' => 0,
                        b'\\' => b'\\',
                        b'"' => b'"',
                        b'x' => {
                            let hex = self
                                .src
                                .get(self.i..self.i + 2)
                                .filter(|h| h.iter().all(u8::is_ascii_hexdigit))
                                .and_then(|h| std::str::from_utf8(h).ok());
                            match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                                Some(b) => {
                                    self.i += 2;
                                    b
                                }
                                None => return Err(self.err(esc_pos, "`\\x` needs two hex digits")),
                            }
                        }
                        _ => return Err(self.err(esc_pos, "unknown escape sequence")),
                    });
                }
                _ => out.push(c),
            }
        }
    }
}
