//! The pull reader: one JSON document as a sequence of tokens, for callers that convert a large
//! document straight into their own structures instead of building a [`Value`] tree first.
//!
//! It stands on the same [`Scanner`] as [`parse`](super::parse), so it accepts and rejects exactly
//! what `parse` does, with the same errors at the same positions and the same depth limit, provided
//! the caller reads until [`Reader::next`] returns `Ok(None)` (which checks that nothing follows
//! the value). Strings without escapes are borrowed from the input.

use super::error::ParseError;
use super::parse::{Limits, Scanner, Start};
use super::value::{Number, Value};
use std::borrow::Cow;

/// One token of a JSON document.
#[derive(Clone, Debug, PartialEq)]
pub enum Token<'a> {
    BeginObject,
    EndObject,
    BeginArray,
    EndArray,
    /// An object member's key (its `:` already read); the member's value follows.
    Key(Cow<'a, str>),
    String(Cow<'a, str>),
    Number(Number),
    Bool(bool),
    Null,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Container {
    Array,
    Object,
}

/// What the reader expects next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// A value (the document's, an array element after `,`, or a member's after its key).
    Value,
    /// Just after `[`: an element or `]`.
    ArrayStart,
    /// Just after `{`: a key or `}`.
    ObjectStart,
    /// After a value: `,` or the end of its container, or the end of the document.
    AfterValue,
    /// The document was read to its end.
    Done,
}

/// Reads one JSON document token by token.
///
/// ```
/// use agentteams_mcp::json::{Reader, Token};
/// let mut reader = Reader::new(br#"{"a": [1, true]}"#);
/// assert_eq!(reader.next(), Ok(Some(Token::BeginObject)));
/// assert_eq!(reader.next(), Ok(Some(Token::Key("a".into()))));
/// let array = reader.read_value().unwrap().unwrap();
/// assert_eq!(agentteams_mcp::json::to_string(&array), "[1,true]");
/// assert_eq!(reader.next(), Ok(Some(Token::EndObject)));
/// assert_eq!(reader.next(), Ok(None));
/// ```
pub struct Reader<'a> {
    scanner: Scanner<'a>,
    open: Vec<Container>,
    limits: Limits,
    state: State,
    /// The first error, returned again by every later call: the reader does not resynchronise.
    failed: Option<ParseError>,
}

impl<'a> Reader<'a> {
    /// A reader with the default limits (those of [`parse`](super::parse)).
    pub fn new(input: &'a [u8]) -> Reader<'a> {
        Reader::with_limits(input, Limits::default())
    }

    /// A reader with the limits of [`parse_with_limits`](super::parse_with_limits).
    pub fn with_limits(input: &'a [u8], limits: Limits) -> Reader<'a> {
        Reader {
            scanner: Scanner::new(input),
            open: Vec::new(),
            limits,
            state: State::Value,
            failed: None,
        }
    }

    /// The next token, or `Ok(None)` once the document has ended and only whitespace followed it.
    #[allow(clippy::should_implement_trait)]
    // Fallible, and borrows the input: not an Iterator.
    // Inlined with the state machine under it into each caller, which then matches the token
    // where it is made: called, the token was copied out twice and the calls' own cost was a
    // third of the reader's (recall's first query on the standard library: 2,009 M → 1,808 M
    // instructions).
    #[inline(always)]
    pub fn next(&mut self) -> Result<Option<Token<'a>>, ParseError> {
        if let Some(error) = &self.failed {
            return Err(error.clone());
        }
        let token = self.step();
        if let Err(error) = &token {
            self.failed = Some(error.clone());
        }
        token
    }

    /// Reads the next value whole, as [`parse`](super::parse) would build it (after a key, as an
    /// array element, or the document itself). `Ok(None)`, with nothing consumed, when no value
    /// comes next (a key, the end of a container or of the document): then call [`Reader::next`].
    pub fn read_value(&mut self) -> Result<Option<Value>, ParseError> {
        if let Some(error) = &self.failed {
            return Err(error.clone());
        }
        match self.state {
            State::Value => {}
            State::ArrayStart => {
                self.scanner.skip_whitespace();
                if self.scanner.peek() == Some(b']') {
                    return Ok(None);
                }
            }
            State::ObjectStart | State::AfterValue | State::Done => return Ok(None),
        }
        match self.scanner.parse_value(self.open.len(), &self.limits) {
            Ok(value) => {
                self.state = State::AfterValue;
                Ok(Some(value))
            }
            Err(error) => {
                self.failed = Some(error.clone());
                Err(error)
            }
        }
    }

    #[inline(always)]
    fn step(&mut self) -> Result<Option<Token<'a>>, ParseError> {
        match self.state {
            State::Done => Ok(None),
            State::Value => self.value(),
            State::ArrayStart => {
                if self.scanner.array_is_empty() {
                    Ok(Some(self.close()))
                } else {
                    self.value()
                }
            }
            State::ObjectStart => match self.scanner.object_first_key()? {
                Some(key) => self.key(key),
                None => Ok(Some(self.close())),
            },
            State::AfterValue => match self.open.last() {
                None => {
                    self.scanner.end_document()?;
                    self.state = State::Done;
                    Ok(None)
                }
                Some(Container::Array) => {
                    if self.scanner.array_continues()? {
                        self.value()
                    } else {
                        Ok(Some(self.close()))
                    }
                }
                Some(Container::Object) => match self.scanner.object_next_key()? {
                    Some(key) => self.key(key),
                    None => Ok(Some(self.close())),
                },
            },
        }
    }

    #[inline(always)]
    fn value(&mut self) -> Result<Option<Token<'a>>, ParseError> {
        let start = self
            .scanner
            .start_value(self.open.len(), self.limits.max_depth)?;
        // A scalar completes a value; a container's opening leaves the reader inside it.
        self.state = State::AfterValue;
        Ok(Some(match start {
            Start::Array => {
                self.open.push(Container::Array);
                self.state = State::ArrayStart;
                Token::BeginArray
            }
            Start::Object => {
                self.open.push(Container::Object);
                self.state = State::ObjectStart;
                Token::BeginObject
            }
            Start::String(s) => Token::String(s),
            Start::Number(n) => Token::Number(n),
            Start::Bool(b) => Token::Bool(b),
            Start::Null => Token::Null,
        }))
    }

    #[inline]
    fn key(&mut self, key: Cow<'a, str>) -> Result<Option<Token<'a>>, ParseError> {
        self.state = State::Value;
        Ok(Some(Token::Key(key)))
    }

    /// Closes the innermost container; the caller consumed its closing bracket.
    #[inline]
    fn close(&mut self) -> Token<'a> {
        self.state = State::AfterValue;
        match self.open.pop() {
            Some(Container::Object) => Token::EndObject,
            _ => Token::EndArray,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse::{parse, parse_with_limits};
    use crate::json::value::{Key, Map};
    use crate::json::write::to_string;

    /// The document rebuilt as compact text from tokens, taking every `whole_every`-th value
    /// with `read_value` (0: never), so both ways of reading are exercised.
    fn reread(input: &[u8], limits: Limits, whole_every: usize) -> Result<String, ParseError> {
        let mut reader = Reader::with_limits(input, limits);
        let mut out = String::new();
        // Per open container: whether a member or element was written (a comma is due).
        let mut written: Vec<bool> = Vec::new();
        let mut count = 0;
        loop {
            count += 1;
            let separator = |out: &mut String, written: &mut Vec<bool>| {
                if let Some(w) = written.last_mut() {
                    if *w {
                        out.push(',');
                    }
                    *w = true;
                }
            };
            if whole_every != 0 && count % whole_every == 0 {
                if let Some(value) = reader.read_value()? {
                    if !out.ends_with(':') {
                        separator(&mut out, &mut written);
                    }
                    out.push_str(&to_string(&value));
                    continue;
                }
            }
            let Some(token) = reader.next()? else {
                return Ok(out);
            };
            let scalar = match token {
                Token::BeginObject | Token::BeginArray => {
                    if !out.ends_with(':') {
                        separator(&mut out, &mut written);
                    }
                    out.push(if token == Token::BeginObject {
                        '{'
                    } else {
                        '['
                    });
                    written.push(false);
                    continue;
                }
                Token::EndObject | Token::EndArray => {
                    out.push(if token == Token::EndObject { '}' } else { ']' });
                    written.pop();
                    continue;
                }
                Token::Key(key) => {
                    separator(&mut out, &mut written);
                    out.push_str(&to_string(&Value::from(key.as_ref())));
                    out.push(':');
                    continue;
                }
                Token::String(s) => Value::from(s.as_ref()),
                Token::Number(n) => Value::Number(n),
                Token::Bool(b) => Value::Bool(b),
                Token::Null => Value::Null,
            };
            if !out.ends_with(':') {
                separator(&mut out, &mut written);
            }
            out.push_str(&to_string(&scalar));
        }
    }

    fn assert_agrees(input: &str) {
        let limits = Limits::default();
        let want = parse(input.as_bytes()).map(|v| to_string(&v));
        for whole_every in [0, 1, 2, 3, 5] {
            assert_eq!(
                reread(input.as_bytes(), limits, whole_every),
                want,
                "{input:?} (read_value every {whole_every})"
            );
        }
    }

    #[test]
    fn yields_the_tokens_in_document_order() {
        let mut reader = Reader::new(br#" {"k": ["a\n", -1.5, false, null, {}], "e": []} "#);
        let mut tokens = Vec::new();
        while let Some(token) = reader.next().unwrap() {
            tokens.push(token);
        }
        assert_eq!(
            tokens,
            vec![
                Token::BeginObject,
                Token::Key("k".into()),
                Token::BeginArray,
                Token::String("a\n".into()),
                Token::Number(parse(b"-1.5").unwrap().as_number().unwrap().clone()),
                Token::Bool(false),
                Token::Null,
                Token::BeginObject,
                Token::EndObject,
                Token::EndArray,
                Token::Key("e".into()),
                Token::BeginArray,
                Token::EndArray,
                Token::EndObject,
            ]
        );
        assert_eq!(reader.next(), Ok(None));
    }

    #[test]
    fn strings_without_escapes_are_borrowed() {
        let mut reader = Reader::new(br#"["plain", "esc\"aped"]"#);
        reader.next().unwrap();
        assert!(matches!(
            reader.next(),
            Ok(Some(Token::String(Cow::Borrowed("plain"))))
        ));
        assert!(matches!(
            reader.next(),
            Ok(Some(Token::String(Cow::Owned(s)))) if s == "esc\"aped"
        ));
    }

    #[test]
    fn accepts_and_rejects_what_parse_does_with_the_same_errors() {
        for input in [
            "",
            " ",
            "[]",
            "{}",
            "[1,]",
            "{\"a\":1,}",
            "{\"a\" 1}",
            "[1 2]",
            "{\"a\":1 \"b\"}",
            "{1:2}",
            "{\"a\":1,2}",
            "[1] x",
            "[",
            "[1",
            "{\"a\"",
            "{\"a\":",
            "{\"a\":1",
            "\"abc",
            "\"\\x\"",
            "\"\\ud800\"",
            "tru",
            "nul]",
            "-",
            "01",
            "1.",
            "1e",
            "[[[]],{\"x\":[{}]}]",
            "{\"a\":{\"b\":[1,2,{\"c\":null}]},\"a\":true}",
            "\"\u{e9}\\u00e9\\ud83d\\ude00\"",
            "[1e999, 18446744073709551616, -0, 0.1]",
        ] {
            assert_agrees(input);
        }
        assert_eq!(
            reread(b"[1,]", Limits::default(), 0).unwrap_err().offset(),
            3
        );
    }

    #[test]
    fn a_value_read_whole_is_held_to_the_tree_limit() {
        let input = format!("[[{}], 1]", vec!["0"; 1000].join(","));
        let limits = Limits {
            max_tree_bytes: 1024,
            ..Limits::default()
        };
        let mut reader = Reader::with_limits(input.as_bytes(), limits);
        assert_eq!(reader.next(), Ok(Some(Token::BeginArray)));
        let e = reader.read_value().unwrap_err();
        assert!(e.is_memory_limit(), "{e}");
        // Within the limit, the same value as without one.
        let mut reader = Reader::with_limits(b"[[0, \"ab\"], 1]", limits);
        assert_eq!(reader.next(), Ok(Some(Token::BeginArray)));
        let value = reader.read_value().unwrap().unwrap();
        assert_eq!(to_string(&value), r#"[0,"ab"]"#);
    }

    #[test]
    fn the_depth_limit_applies_at_the_same_edge_as_parse() {
        let limits = Limits {
            max_depth: 3,
            ..Limits::default()
        };
        for input in ["[[[]]]", "[[[[]]]]", "{\"a\":[{}]}", "{\"a\":[{\"b\":[]}]}"] {
            let want = parse_with_limits(input.as_bytes(), limits).map(|v| to_string(&v));
            for whole_every in [0, 2, 3] {
                assert_eq!(
                    reread(input.as_bytes(), limits, whole_every),
                    want,
                    "{input}"
                );
            }
        }
        assert!(reread(b"[[[[]]]]", limits, 0).unwrap_err().is_depth_limit());
    }

    #[test]
    fn an_error_is_returned_again_and_read_value_stops_at_ends() {
        let mut reader = Reader::new(b"[1 2]");
        reader.next().unwrap();
        reader.next().unwrap();
        let first = reader.next().unwrap_err();
        assert_eq!(reader.next(), Err(first.clone()));
        assert_eq!(reader.read_value(), Err(first));

        let mut reader = Reader::new(b"[]");
        reader.next().unwrap();
        assert_eq!(reader.read_value(), Ok(None));
        assert_eq!(reader.next(), Ok(Some(Token::EndArray)));
        assert_eq!(reader.read_value(), Ok(None));
        assert_eq!(reader.next(), Ok(None));
    }

    /// The document `input` rebuilt from the pull reader's tokens, which come from the scanner
    /// one at a time, never through the tree loop's array-of-numbers shortcut; or its error.
    fn tree_from_tokens(input: &[u8]) -> Result<Value, ParseError> {
        use crate::json::reader::{Reader, Token};
        enum Open {
            Array(Vec<Value>),
            Object(Vec<(Key, Value)>, Option<Key>),
        }
        let mut reader = Reader::new(input);
        let mut open: Vec<Open> = Vec::new();
        let mut done = None;
        while let Some(token) = reader.next()? {
            let value = match token {
                Token::BeginArray => {
                    open.push(Open::Array(Vec::new()));
                    continue;
                }
                Token::BeginObject => {
                    open.push(Open::Object(Vec::new(), None));
                    continue;
                }
                Token::Key(key) => {
                    if let Some(Open::Object(_, pending)) = open.last_mut() {
                        *pending = Some(Key::from(key));
                    }
                    continue;
                }
                Token::EndArray | Token::EndObject => match open.pop() {
                    Some(Open::Array(values)) => Value::from(values),
                    Some(Open::Object(entries, _)) => {
                        Value::Object(Map::from_parsed_entries(entries))
                    }
                    None => unreachable!("the reader balances containers"),
                },
                Token::String(s) => Value::String(s.into()),
                Token::Number(n) => Value::Number(n),
                Token::Bool(b) => Value::Bool(b),
                Token::Null => Value::Null,
            };
            match open.last_mut() {
                Some(Open::Array(values)) => values.push(value),
                Some(Open::Object(entries, pending)) => {
                    entries.push((pending.take().expect("a key before its value"), value))
                }
                None => done = Some(value),
            }
        }
        Ok(done.expect("a document has a value"))
    }

    #[test]
    fn arrays_of_numbers_parse_like_any_other_array_even_when_broken() {
        // Numeric arrays take the tree loop's shortcut; these documents, every prefix of them and
        // every one-byte change, must give what the token-by-token reader gives: the same tree,
        // or the same error at the same byte.
        let documents = [
            "[[-65.613616999999977,43.420273000000009],[-65.6,43.4]]",
            "[1,2,3]",
            "[1, 2 ,3 ]",
            "[1,\"a\",2,[3,4],{\"k\":[5]},6]",
            "[0,-0,1e5,-1.5E-3,12345678901234567890123,1e400]",
            "{\"c\":[[1,2],[3,[4,5]],[6,7,8]],\"d\":[9]}",
            "[[1,2],[],[3],[4,5,6,7,8,9,10,11,12]]",
        ];
        let replacements = b" ,]}[-+.0e\"x";
        let mut checked = 0;
        for document in documents {
            let bytes = document.as_bytes();
            let mut variants: Vec<Vec<u8>> =
                (0..=bytes.len()).map(|end| bytes[..end].to_vec()).collect();
            for at in 0..bytes.len() {
                for &b in replacements {
                    let mut changed = bytes.to_vec();
                    changed[at] = b;
                    variants.push(changed);
                }
                let mut removed = bytes.to_vec();
                removed.remove(at);
                variants.push(removed);
            }
            for variant in variants {
                let text = String::from_utf8_lossy(&variant).into_owned();
                let want = tree_from_tokens(&variant).map(|v| crate::json::write::to_string(&v));
                let got = parse(&variant).map(|v| crate::json::write::to_string(&v));
                match (&got, &want) {
                    (Ok(a), Ok(b)) => assert_eq!(a, b, "{text}"),
                    (Err(a), Err(b)) => {
                        assert_eq!(
                            (a.message(), a.offset()),
                            (b.message(), b.offset()),
                            "{text}"
                        )
                    }
                    _ => panic!("{text}: parse {got:?}, reader {want:?}"),
                }
                checked += 1;
            }
        }
        assert!(checked > 1000);
    }
}
