//! The parse error: what was expected, and where (byte offset, line, column).

use std::fmt;

/// Why parsing stopped. Private so that new cases never break callers; the public surface is the
/// message and the position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Code {
    EofWhileParsingValue,
    EofWhileParsingString,
    EofWhileParsingArray,
    EofWhileParsingObject,
    ExpectedValue,
    ExpectedColon,
    ExpectedCommaOrEndOfArray,
    ExpectedCommaOrEndOfObject,
    ExpectedObjectKey,
    TrailingComma,
    TrailingCharacters,
    InvalidNumber,
    InvalidEscape,
    InvalidUnicodeEscape,
    LoneSurrogate,
    ControlCharacterInString,
    InvalidUtf8,
    DepthLimitExceeded(usize),
    /// The tree would take more than `Limits::max_tree_bytes`.
    TreeLimitExceeded(usize),
}

/// A JSON syntax error with its position in the input.
///
/// The line and column are computed only when the error is built, so a successful parse pays
/// nothing for them. Lines and columns count from 1; the column counts bytes.
///
/// Boxed, so a `Result` carrying it is no larger than its success value needs: the token reader
/// returns one per token, and the error path is cold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError(Box<Position>);

#[derive(Clone, Debug, PartialEq, Eq)]
struct Position {
    code: Code,
    offset: usize,
    line: usize,
    column: usize,
}

impl ParseError {
    #[cold]
    pub(crate) fn at(code: Code, input: &[u8], offset: usize) -> ParseError {
        let offset = offset.min(input.len());
        let before = &input[..offset];
        let line = 1 + before.iter().filter(|&&b| b == b'\n').count();
        let line_start = before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        ParseError(Box::new(Position {
            code,
            offset,
            line,
            column: offset - line_start + 1,
        }))
    }

    /// Byte offset of the offending byte (or of the end of input).
    pub fn offset(&self) -> usize {
        self.0.offset
    }
    /// 1-based line of the error.
    pub fn line(&self) -> usize {
        self.0.line
    }
    /// 1-based byte column of the error within its line.
    pub fn column(&self) -> usize {
        self.0.column
    }
    /// True when the input ended before the value did (more bytes could complete it).
    pub fn is_eof(&self) -> bool {
        matches!(
            self.0.code,
            Code::EofWhileParsingValue
                | Code::EofWhileParsingString
                | Code::EofWhileParsingArray
                | Code::EofWhileParsingObject
        )
    }
    /// True when the input nests deeper than the limit allows.
    pub fn is_depth_limit(&self) -> bool {
        matches!(self.0.code, Code::DepthLimitExceeded(_))
    }
    /// True when the tree would take more memory than the limit allows
    /// ([`Limits::max_tree_bytes`](super::Limits::max_tree_bytes)): the input may be valid JSON.
    pub fn is_memory_limit(&self) -> bool {
        matches!(self.0.code, Code::TreeLimitExceeded(_))
    }
    /// The message without the position.
    pub fn message(&self) -> String {
        match self.0.code {
            Code::EofWhileParsingValue => "unexpected end of input, expected a value".into(),
            Code::EofWhileParsingString => "unexpected end of input inside a string".into(),
            Code::EofWhileParsingArray => {
                "unexpected end of input inside an array, expected ',' or ']'".into()
            }
            Code::EofWhileParsingObject => {
                "unexpected end of input inside an object, expected ',' or '}'".into()
            }
            Code::ExpectedValue => "expected a value".into(),
            Code::ExpectedColon => "expected ':' after an object key".into(),
            Code::ExpectedCommaOrEndOfArray => "expected ',' or ']' in an array".into(),
            Code::ExpectedCommaOrEndOfObject => "expected ',' or '}' in an object".into(),
            Code::ExpectedObjectKey => "expected a string object key".into(),
            Code::TrailingComma => "trailing comma before the closing bracket".into(),
            Code::TrailingCharacters => "unexpected characters after the value".into(),
            Code::InvalidNumber => "invalid number".into(),
            Code::InvalidEscape => "invalid escape in a string".into(),
            Code::InvalidUnicodeEscape => "invalid \\u escape (expected four hex digits)".into(),
            Code::LoneSurrogate => "\\u escape is an unpaired surrogate".into(),
            Code::ControlCharacterInString => {
                "control character in a string (must be escaped)".into()
            }
            Code::InvalidUtf8 => "invalid UTF-8".into(),
            Code::DepthLimitExceeded(limit) => {
                format!("nesting deeper than the limit of {limit} levels")
            }
            Code::TreeLimitExceeded(limit) => {
                format!(
                    "the parsed value would take more than the limit of {limit} bytes of memory"
                )
            }
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} at line {} column {} (byte {})",
            self.message(),
            self.0.line,
            self.0.column,
            self.0.offset
        )
    }
}

impl std::error::Error for ParseError {}
