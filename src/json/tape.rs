//! A parsed document laid flat: one array of nodes in document order, for input that is read
//! and navigated, not edited.
//!
//! [`parse`](super::parse) builds a [`Value`] tree: every container, and every string longer than
//! [`TEXT_INLINE_CAPACITY`](super::TEXT_INLINE_CAPACITY) bytes, is an allocation of its own, and
//! dropping the tree frees each one. A [`Tape`] holds the same document in two buffers whatever
//! its shape:
//! - its nodes, 16 bytes each, in document order; a container's node gives its length and where
//!   its last descendant ends, so a reader steps over it in one move;
//! - the text of the strings that had escapes, decoded.
//!
//! Strings without escapes, and numbers kept as text, are slices of the input, which the tape
//! borrows. So parsing makes a few allocations where [`parse`](super::parse) makes one per
//! container, and dropping the tape frees two buffers. That is the difference on documents of
//! many small containers: GeoJSON's coordinate pairs, or records.
//!
//! A tape accepts and rejects exactly what [`parse`](super::parse) does, with the same errors at
//! the same positions: both stand on the same scanner, in the same order. The exceptions are the
//! memory limit, which counts the tape's own buffers (see [`Tape::parse_with_limits`]), and
//! input of 4 GiB or more, which a tape does not take.
//!
//! What it is not: a tree to edit or build. [`Item::to_value`] converts any part of it.
//!
//! ```
//! use agentteams_mcp::json::Tape;
//! let input = br#"{"type": "Point", "coordinates": [102.5, 0.5], "id": 7}"#;
//! let tape = Tape::parse(input).unwrap();
//! let root = tape.root();
//! assert_eq!(root.get("type").and_then(|t| t.as_str()), Some("Point"));
//! let xy: Vec<f64> = root.get("coordinates").unwrap().elements().filter_map(|e| e.as_f64()).collect();
//! assert_eq!(xy, [102.5, 0.5]);
//! assert_eq!(root.get("id").and_then(|id| id.as_u64()), Some(7));
//! assert_eq!(root.to_string(), r#"{"type":"Point","coordinates":[102.5,0.5],"id":7}"#);
//! ```

use super::error::{Code, ParseError};
use super::parse::{Limits, Scanner, Start, StringAt};
use super::text::Text;
use super::value::{Array, Key, Map, Number, Value, N};
use super::write::{write_number, write_string, Sink};
use std::ops::Range;

/// The largest input a tape takes: its nodes address the input with 32-bit offsets.
pub const MAX_TAPE_INPUT_BYTES: usize = u32::MAX as usize;

/// A place in the input or in the tape's decoded text.
#[derive(Clone, Copy, Debug)]
struct Span {
    at: u32,
    len: u32,
}

impl Span {
    /// `range`, which lies inside a buffer of at most [`MAX_TAPE_INPUT_BYTES`] bytes: the input,
    /// or the decoded text, which is never longer than the input (an escape decodes to fewer
    /// bytes than it takes). Node indexes fit in `u32` for the same reason: every node takes at
    /// least one byte of input.
    fn of(range: Range<usize>) -> Span {
        Span {
            at: range.start as u32,
            len: (range.end - range.start) as u32,
        }
    }

    fn range(self) -> Range<usize> {
        self.at as usize..self.at as usize + self.len as usize
    }
}

/// One node of the tape. A container's node comes first, then each element's nodes (an object's
/// member being its key's node then its value's).
#[derive(Clone, Copy, Debug)]
enum Node {
    Null,
    Bool(bool),
    PosInt(u64),
    NegInt(i64),
    Float(f64),
    /// A number no primitive holds exactly: its text in the input.
    Verbatim(Span),
    /// A string without escapes: its text in the input.
    Plain(Span),
    /// A string with escapes: its text decoded, in the tape's buffer.
    Decoded(Span),
    /// `len` elements, whose nodes end before node `end`.
    Array {
        len: u32,
        end: u32,
    },
    /// `len` members, whose nodes end before node `end`.
    Object {
        len: u32,
        end: u32,
    },
}

// The reason for the tape: a node is two words, whatever it holds.
const _: () = assert!(std::mem::size_of::<Node>() == 16);

/// A JSON document parsed into one flat array of nodes; see the [module docs](self).
#[derive(Clone, Debug)]
pub struct Tape<'a> {
    input: &'a str,
    decoded: String,
    nodes: Vec<Node>,
}

/// A container being read: where its node is, whether it is an object, and its elements so far.
struct Open {
    node: u32,
    object: bool,
    len: u32,
}

/// The tape under construction, with the memory limit it is held to.
struct Builder {
    nodes: Vec<Node>,
    decoded: String,
    max_bytes: usize,
}

impl Builder {
    /// Bytes the tape holds (what [`Limits::max_tree_bytes`] bounds).
    fn held(&self) -> usize {
        self.nodes.capacity() * std::mem::size_of::<Node>() + self.decoded.capacity()
    }

    /// Appends `node`, growing the node buffer (within the limit) when it is full.
    #[inline(always)]
    fn push(&mut self, node: Node, scanner: &Scanner, limits: &Limits) -> Result<(), ParseError> {
        if self.nodes.len() == self.nodes.capacity() {
            self.grow(scanner, limits)?;
        }
        self.nodes.push(node);
        Ok(())
    }

    /// Doubles the node buffer (to [`MIN_NODES`] at first), or, where the limit does not admit
    /// that, grows it by as many nodes as the limit still holds, when that is one at least.
    #[cold]
    fn grow(&mut self, scanner: &Scanner, limits: &Limits) -> Result<(), ParseError> {
        let room = self.max_bytes.saturating_sub(self.held()) / std::mem::size_of::<Node>();
        let more = self.nodes.capacity().max(MIN_NODES).min(room);
        if more == 0 {
            return Err(scanner.tree_limit(limits));
        }
        self.nodes.reserve_exact(more);
        Ok(())
    }

    /// Reads the string at the scanner's opening quote. Its decoded text, if it has escapes,
    /// grows the text buffer within the limit beside the nodes, before each piece is added: as a
    /// `String` grows, by doubling, but never past the limit; a piece that does not fit stops
    /// the document there. Without a limit (the default) nothing is checked, as in the tree.
    #[inline(always)]
    fn read_string(
        &mut self,
        scanner: &mut Scanner,
        limits: &Limits,
    ) -> Result<StringAt, ParseError> {
        if self.max_bytes == usize::MAX {
            return scanner.parse_string_into(&mut self.decoded, |_, _| Ok(()));
        }
        let nodes = self.nodes.capacity() * std::mem::size_of::<Node>();
        let max = self.max_bytes.saturating_sub(nodes);
        let over = Code::TreeLimitExceeded(limits.max_tree_bytes);
        scanner.parse_string_into(&mut self.decoded, |text, more| {
            if text.capacity() - text.len() >= more {
                return Ok(());
            }
            let needed = text.len().saturating_add(more);
            if needed > max {
                return Err(over);
            }
            // As a `String` grows (doubling, 8 bytes at least), within `max`.
            let grown = text
                .capacity()
                .saturating_mul(2)
                .max(needed)
                .max(8)
                .min(max);
            text.reserve_exact(grown - text.len());
            Ok(())
        })
    }

    /// The node of a string read by [`Builder::read_string`].
    #[inline(always)]
    fn string(at: StringAt) -> Node {
        match at {
            StringAt::Input(range) => Node::Plain(Span::of(range)),
            StringAt::Decoded(range) => Node::Decoded(Span::of(range)),
        }
    }
}

/// The node buffer's first size, in nodes.
const MIN_NODES: usize = 64;

impl<'a> Tape<'a> {
    /// Parses one JSON document with the default limits (those of [`parse`](super::parse)).
    pub fn parse(input: &'a [u8]) -> Result<Tape<'a>, ParseError> {
        Tape::parse_with_limits(input, Limits::default())
    }

    /// Parses one JSON document within `limits`: the depth limit as for
    /// [`parse_with_limits`](super::parse_with_limits); [`Limits::max_tree_bytes`] bounds the
    /// tape's own buffers (its nodes' and its decoded text's capacity), each checked before it
    /// grows: the nodes' buffer before a node is added to a full one, the decoded text's before
    /// each piece of a string with escapes (a run without escapes, or one escape's character) is
    /// added, so a string far longer than the limit stops where its text passes it. Input of
    /// more than [`MAX_TAPE_INPUT_BYTES`] is refused, at its start.
    pub fn parse_with_limits(input: &'a [u8], limits: Limits) -> Result<Tape<'a>, ParseError> {
        if input.len() > MAX_TAPE_INPUT_BYTES {
            return Err(ParseError::at(
                Code::InputTooLarge(MAX_TAPE_INPUT_BYTES),
                input,
                0,
            ));
        }
        let mut scanner = Scanner::new(input);
        let mut tape = Builder {
            nodes: Vec::new(),
            decoded: String::new(),
            max_bytes: limits.max_tree_bytes,
        };
        let mut open: Vec<Open> = Vec::new();
        'value: loop {
            let read = |s: &mut Scanner<'a>| tape.read_string(s, &limits);
            let node = match scanner.start_value_with(open.len(), limits.max_depth, read)? {
                Start::Array => {
                    let at = tape.nodes.len() as u32;
                    if scanner.array_is_empty() {
                        Node::Array {
                            len: 0,
                            end: at + 1,
                        }
                    } else {
                        tape.push(Node::Array { len: 0, end: 0 }, &scanner, &limits)?;
                        open.push(Open {
                            node: at,
                            object: false,
                            len: 1,
                        });
                        continue 'value;
                    }
                }
                Start::Object => {
                    let at = tape.nodes.len() as u32;
                    let read = |s: &mut Scanner<'a>| tape.read_string(s, &limits);
                    match scanner.object_first_key_with(read)? {
                        None => Node::Object {
                            len: 0,
                            end: at + 1,
                        },
                        Some(key) => {
                            tape.push(Node::Object { len: 0, end: 0 }, &scanner, &limits)?;
                            let key = Builder::string(key);
                            tape.push(key, &scanner, &limits)?;
                            open.push(Open {
                                node: at,
                                object: true,
                                len: 1,
                            });
                            continue 'value;
                        }
                    }
                }
                Start::String(at) => Builder::string(at),
                Start::Number(number) => match number.n {
                    N::PosInt(u) => Node::PosInt(u),
                    N::NegInt(i) => Node::NegInt(i),
                    N::Float(f) => Node::Float(f),
                    N::Verbatim(text) => {
                        let end = scanner.position();
                        Node::Verbatim(Span::of(end - text.len()..end))
                    }
                },
                Start::Bool(b) => Node::Bool(b),
                Start::Null => Node::Null,
            };
            tape.push(node, &scanner, &limits)?;

            // The value is complete: go on in its container, closing containers as they end.
            while let Some(container) = open.last_mut() {
                if container.object {
                    let read = |s: &mut Scanner<'a>| tape.read_string(s, &limits);
                    if let Some(key) = scanner.object_next_key_with(read)? {
                        container.len += 1;
                        let key = Builder::string(key);
                        tape.push(key, &scanner, &limits)?;
                        continue 'value;
                    }
                } else if scanner.array_continues()? {
                    container.len += 1;
                    continue 'value;
                }
                let (len, end) = (container.len, tape.nodes.len() as u32);
                let node = &mut tape.nodes[container.node as usize];
                *node = if container.object {
                    Node::Object { len, end }
                } else {
                    Node::Array { len, end }
                };
                open.pop();
            }
            break;
        }
        scanner.end_document()?;
        let input = scanner
            .whole_text()
            .map_err(|bad| ParseError::at(Code::InvalidUtf8, input, bad))?;
        Ok(Tape {
            input,
            decoded: tape.decoded,
            nodes: tape.nodes,
        })
    }

    /// The document's value.
    pub fn root(&self) -> Item<'_> {
        Item { tape: self, at: 0 }
    }

    /// Bytes the tape holds beside the input it borrows.
    pub fn heap_bytes(&self) -> usize {
        self.nodes.capacity() * std::mem::size_of::<Node>() + self.decoded.capacity()
    }

    /// The node after all of node `at`'s.
    fn after(&self, at: usize) -> usize {
        match self.nodes[at] {
            Node::Array { end, .. } | Node::Object { end, .. } => end as usize,
            _ => at + 1,
        }
    }

    /// The text of a string node.
    fn text(&self, at: usize) -> Option<&str> {
        match self.nodes[at] {
            Node::Plain(span) => Some(&self.input[span.range()]),
            Node::Decoded(span) => Some(&self.decoded[span.range()]),
            _ => None,
        }
    }
}

/// One value of a [`Tape`]: a cheap handle (a reference and an index) to read it through.
#[derive(Clone, Copy)]
pub struct Item<'t> {
    tape: &'t Tape<'t>,
    at: usize,
}

impl<'t> Item<'t> {
    fn node(&self) -> Node {
        self.tape.nodes[self.at]
    }

    pub fn is_null(&self) -> bool {
        matches!(self.node(), Node::Null)
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self.node() {
            Node::Bool(b) => Some(b),
            _ => None,
        }
    }

    /// The text of a string.
    pub fn as_str(&self) -> Option<&'t str> {
        self.tape.text(self.at)
    }

    /// The number, as [`Value::as_number`] would hold it.
    pub fn as_number(&self) -> Option<Number> {
        let n = match self.node() {
            Node::PosInt(u) => N::PosInt(u),
            Node::NegInt(i) => N::NegInt(i),
            Node::Float(f) => N::Float(f),
            Node::Verbatim(span) => N::Verbatim(self.tape.input[span.range()].into()),
            _ => return None,
        };
        Some(Number { n })
    }

    /// As [`Value::as_u64`]: an integer token in range.
    pub fn as_u64(&self) -> Option<u64> {
        match self.node() {
            Node::PosInt(u) => Some(u),
            _ => None,
        }
    }

    /// As [`Value::as_i64`]: an integer token in range.
    pub fn as_i64(&self) -> Option<i64> {
        match self.node() {
            Node::PosInt(u) => i64::try_from(u).ok(),
            Node::NegInt(i) => Some(i),
            _ => None,
        }
    }

    /// As [`Value::as_f64`]: any number, as the nearest f64.
    pub fn as_f64(&self) -> Option<f64> {
        match self.node() {
            Node::Float(f) => Some(f),
            _ => self.as_number().map(|n| n.as_f64()),
        }
    }

    /// The elements of an array (empty for anything else).
    pub fn elements(&self) -> Elements<'t> {
        let (next, end) = self.children(false);
        Elements {
            tape: self.tape,
            next,
            end,
        }
    }

    /// The members of an object, key and value, in the document's order, repeated keys
    /// included (empty for anything else).
    pub fn members(&self) -> Members<'t> {
        let (next, end) = self.children(true);
        Members {
            tape: self.tape,
            next,
            end,
        }
    }

    /// The nodes of an object's members (`object`) or an array's elements, as the first and the
    /// one past the last; an empty range for anything else.
    fn children(&self, object: bool) -> (usize, usize) {
        match self.node() {
            Node::Object { end, .. } if object => (self.at + 1, end as usize),
            Node::Array { end, .. } if !object => (self.at + 1, end as usize),
            _ => (0, 0),
        }
    }

    /// The number of elements or members of a container, else `None`.
    pub fn length(&self) -> Option<usize> {
        match self.node() {
            Node::Array { len, .. } | Node::Object { len, .. } => Some(len as usize),
            _ => None,
        }
    }

    /// As [`Value::get`]: the value of an object's last member named `key` (as Python's `json`
    /// keeps it), a scan of the members.
    pub fn get(&self, key: &str) -> Option<Item<'t>> {
        self.members()
            .filter(|(name, _)| *name == key)
            .last()
            .map(|(_, value)| value)
    }

    /// As [`Value::type_name`].
    pub fn type_name(&self) -> &'static str {
        match self.node() {
            Node::Null => "null",
            Node::Bool(_) => "boolean",
            Node::PosInt(_) | Node::NegInt(_) => "integer",
            Node::Float(_) => "number",
            Node::Verbatim(_) => match self.as_number() {
                Some(n) if n.is_integer_token() => "integer",
                _ => "number",
            },
            Node::Plain(_) | Node::Decoded(_) => "string",
            Node::Array { .. } => "array",
            Node::Object { .. } => "object",
        }
    }

    /// The value as a [`Value`] tree, equal to what [`parse`](super::parse) makes of its text.
    pub fn to_value(&self) -> Value {
        let tape = self.tape;
        // Containers being filled, outermost first: each with its elements so far and its
        // length; an object with the key of the member whose value comes next.
        enum Filling {
            Array(Vec<Value>, usize),
            Object(Vec<(Key, Value)>, usize, Key),
        }
        let key_at = |at: usize| Key::from(tape.text(at).unwrap_or_default());
        let mut filling: Vec<Filling> = Vec::new();
        let mut at = self.at;
        loop {
            let mut value = match tape.nodes[at] {
                Node::Array { len, .. } if len > 0 => {
                    let len = len as usize;
                    filling.push(Filling::Array(Vec::with_capacity(len), len));
                    at += 1;
                    continue;
                }
                Node::Object { len, .. } if len > 0 => {
                    let len = len as usize;
                    filling.push(Filling::Object(
                        Vec::with_capacity(len),
                        len,
                        key_at(at + 1),
                    ));
                    at += 2;
                    continue;
                }
                Node::Array { .. } => Value::Array(Array::new()),
                Node::Object { .. } => Value::Object(Map::new()),
                Node::Null => Value::Null,
                Node::Bool(b) => Value::Bool(b),
                Node::Plain(_) | Node::Decoded(_) => {
                    Value::String(Text::from(tape.text(at).unwrap_or_default()))
                }
                Node::PosInt(_) | Node::NegInt(_) | Node::Float(_) | Node::Verbatim(_) => {
                    Item { tape, at }
                        .as_number()
                        .map_or(Value::Null, Value::Number)
                }
            };
            at += 1;
            // Attach the finished value, closing the containers it completes.
            loop {
                match filling.last_mut() {
                    None => return value,
                    Some(Filling::Array(elements, len)) => {
                        elements.push(value);
                        if elements.len() < *len {
                            break;
                        }
                        value = Value::Array(Array::from(std::mem::take(elements)));
                    }
                    Some(Filling::Object(entries, len, key)) => {
                        entries.push((std::mem::take(key), value));
                        if entries.len() < *len {
                            *key = key_at(at);
                            at += 1;
                            break;
                        }
                        value = Value::Object(Map::from_parsed_entries(std::mem::take(entries)));
                    }
                }
                filling.pop();
            }
        }
    }

    /// Writes the value as compact JSON, as [`write_compact`](super::write_compact) writes
    /// [`Item::to_value`]'s tree.
    pub fn write_compact(&self, out: &mut impl Sink) {
        let tape = self.tape;
        // Open containers: the byte that closes each, and how many of its elements are left.
        let mut open: Vec<(u8, u32)> = Vec::new();
        let mut at = self.at;
        loop {
            match tape.nodes[at] {
                Node::Array { len, .. } | Node::Object { len, .. } if len > 0 => {
                    let object = matches!(tape.nodes[at], Node::Object { .. });
                    out.push_ascii(if object { b'{' } else { b'[' });
                    open.push((if object { b'}' } else { b']' }, len));
                    at += 1;
                    if object {
                        self.write_key(at, out);
                        at += 1;
                    }
                    continue;
                }
                Node::Array { .. } => out.push_str("[]"),
                Node::Object { .. } => out.push_str("{}"),
                Node::Null => out.push_str("null"),
                Node::Bool(b) => out.push_str(if b { "true" } else { "false" }),
                Node::Plain(_) | Node::Decoded(_) => {
                    write_string(tape.text(at).unwrap_or_default(), out, false)
                }
                Node::Verbatim(span) => out.push_str(&tape.input[span.range()]),
                _ => {
                    if let Some(n) = (Item { tape, at }).as_number() {
                        write_number(&n, out);
                    }
                }
            }
            at += 1;
            loop {
                let Some((close, left)) = open.last_mut() else {
                    return;
                };
                *left -= 1;
                if *left > 0 {
                    out.push_ascii(b',');
                    if *close == b'}' {
                        self.write_key(at, out);
                        at += 1;
                    }
                    break;
                }
                out.push_ascii(*close);
                open.pop();
            }
        }
    }

    /// Writes the key at node `at` and the `:` after it.
    fn write_key(&self, at: usize, out: &mut impl Sink) {
        write_string(self.tape.text(at).unwrap_or_default(), out, false);
        out.push_ascii(b':');
    }
}

impl std::fmt::Debug for Item<'_> {
    /// Where it is and what it holds, not the whole tape it points into.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Item({} at node {})", self.type_name(), self.at)
    }
}

impl std::fmt::Display for Item<'_> {
    /// Compact JSON, as [`Item::write_compact`] writes it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut out = String::new();
        self.write_compact(&mut out);
        f.write_str(&out)
    }
}

/// The elements of an array on a tape ([`Item::elements`]).
#[derive(Clone, Debug)]
pub struct Elements<'t> {
    tape: &'t Tape<'t>,
    next: usize,
    end: usize,
}

impl<'t> Iterator for Elements<'t> {
    type Item = Item<'t>;

    fn next(&mut self) -> Option<Item<'t>> {
        if self.next >= self.end {
            return None;
        }
        let item = Item {
            tape: self.tape,
            at: self.next,
        };
        self.next = self.tape.after(self.next);
        Some(item)
    }
}

/// The members of an object on a tape ([`Item::members`]).
#[derive(Clone, Debug)]
pub struct Members<'t> {
    tape: &'t Tape<'t>,
    next: usize,
    end: usize,
}

impl<'t> Iterator for Members<'t> {
    type Item = (&'t str, Item<'t>);

    fn next(&mut self) -> Option<(&'t str, Item<'t>)> {
        if self.next >= self.end {
            return None;
        }
        let key = self.tape.text(self.next).unwrap_or_default();
        let value = Item {
            tape: self.tape,
            at: self.next + 1,
        };
        self.next = self.tape.after(self.next + 1);
        Some((key, value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse::{parse, parse_with_limits, DEFAULT_MAX_DEPTH};
    use crate::json::test_rng::TestRng;
    use crate::json::write::to_string;

    /// The tape of `input` against `parse`'s tree: the same decision, the same error at the same
    /// place, the same value and the same compact text.
    fn assert_same_as_parse(input: &[u8]) {
        let shown = String::from_utf8_lossy(input);
        match (Tape::parse(input), parse(input)) {
            (Ok(tape), Ok(value)) => {
                assert_eq!(tape.root().to_value(), value, "{shown}");
                assert_eq!(tape.root().to_string(), to_string(&value), "{shown}");
            }
            (Err(ours), Err(theirs)) => {
                assert_eq!(ours, theirs, "{shown}");
                assert_eq!(ours.to_string(), theirs.to_string(), "{shown}");
            }
            (ours, theirs) => panic!("{shown}: tape {ours:?}, tree {theirs:?}"),
        }
    }

    #[test]
    fn tapes_decide_and_hold_what_the_tree_does() {
        let cases: &[&[u8]] = &[
            b"0",
            b" null ",
            b"true",
            b"false",
            b"-0",
            b"-1.5e300",
            b"1e400",
            b"123456789012345678901234567890",
            b"-9223372036854775808",
            b"18446744073709551615",
            b"[]",
            b"{}",
            b"[[], {}, [[]], {\"a\": {}}]",
            br#""plain""#,
            br#""esc\"aped\\ \u00e9 \ud83d\ude00 \n""#,
            "\"caf\u{e9} \u{65e5}\u{672c}\"".as_bytes(),
            br#"{"a": 1, "a": 2, "b": [1, 2.5, "x", null, true, {"c": []}], "d\n": "e\t"}"#,
            br#"[{"k": "v"}, {"k": "w", "k": "x"}, [1, [2, [3, [4]]]]]"#,
            br#"{"outer": {"inner": {"deep": [[[["leaf"]]]]}}, "after": 1}"#,
            // Every error class, each where the tree reports it.
            b"",
            b" ",
            b"[1,]",
            b"{\"a\":1,}",
            b"[1 2]",
            b"{\"a\" 1}",
            b"{1: 2}",
            b"[1] x",
            b"01",
            b"1.",
            b"-",
            b"\"\\x\"",
            b"\"\\u12G4\"",
            b"\"\\ud800\"",
            b"\"\x01\"",
            b"\"abc",
            b"[\"a\", \"b",
            b"{\"a\": [1, {\"b\": tru}]}",
            b"[\"\xff\"]",
            b"[1, \"ok\"] \xff",
            b"\xef\xbb\xbf{}",
            b"[\"\\n\xc3\"]",
        ];
        for input in cases {
            assert_same_as_parse(input);
        }
    }

    #[test]
    fn depth_is_limited_at_the_same_level_as_the_tree() {
        for depth in [
            DEFAULT_MAX_DEPTH - 1,
            DEFAULT_MAX_DEPTH,
            DEFAULT_MAX_DEPTH + 1,
        ] {
            let arrays = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
            assert_same_as_parse(arrays.as_bytes());
            let objects = format!("{}0{}", "{\"a\":".repeat(depth), "}".repeat(depth));
            assert_same_as_parse(objects.as_bytes());
        }
        let limits = Limits {
            max_depth: 100_000,
            ..Limits::default()
        };
        // No recursion in parsing, reading or converting: a deep tape is fine.
        let deep = format!("{}{}", "[".repeat(50_000), "]".repeat(50_000));
        let tape = Tape::parse_with_limits(deep.as_bytes(), limits).unwrap();
        assert_eq!(tape.root().to_string(), deep);
        // (Compared as text: comparing trees recurses.)
        let tree = parse_with_limits(deep.as_bytes(), limits).unwrap();
        assert_eq!(to_string(&tape.root().to_value()), to_string(&tree));
    }

    #[test]
    fn input_past_the_tapes_offsets_is_refused_at_its_start() {
        // Zeroed by the allocator and never read: the length alone is refused, so the test costs
        // address space, not memory.
        let input = vec![0u8; MAX_TAPE_INPUT_BYTES + 1];
        let refused = Tape::parse(&input).unwrap_err();
        assert!(refused.is_memory_limit(), "{refused}");
        assert_eq!(refused.offset(), 0);
        assert_eq!(
            refused.message(),
            format!("the input is longer than the limit of {MAX_TAPE_INPUT_BYTES} bytes")
        );
    }

    #[test]
    fn items_read_every_kind_of_value() {
        let input = br#"{"n": null, "t": true, "u": 18446744073709551615, "i": -7, "f": 0.25,
            "big": 1e999, "s": "a\u0062c", "p": "plain", "a": [1, [2, 3], {"x": 4}, 5],
            "o": {"k": 1, "k": 2}, "e": [], "eo": {}}"#;
        let tape = Tape::parse(input).unwrap();
        let root = tape.root();
        assert_eq!(root.type_name(), "object");
        assert_eq!(root.length(), Some(12));
        assert!(root.get("n").unwrap().is_null());
        assert_eq!(root.get("t").unwrap().as_bool(), Some(true));
        assert_eq!(root.get("u").unwrap().as_u64(), Some(u64::MAX));
        assert_eq!(root.get("u").unwrap().as_i64(), None);
        assert_eq!(root.get("i").unwrap().as_i64(), Some(-7));
        assert_eq!(root.get("i").unwrap().as_u64(), None);
        assert_eq!(root.get("f").unwrap().as_f64(), Some(0.25));
        assert_eq!(root.get("i").unwrap().as_f64(), Some(-7.0));
        assert_eq!(root.get("big").unwrap().as_f64(), Some(f64::INFINITY));
        assert_eq!(root.get("big").unwrap().to_string(), "1e999");
        let types = [
            "null", "boolean", "integer", "integer", "number", "number", "string",
        ];
        let names: Vec<&str> = root.members().map(|(_, v)| v.type_name()).take(7).collect();
        assert_eq!(names, types);
        let huge = Tape::parse(b"[123456789012345678901234567890, -0]").unwrap();
        let names: Vec<&str> = huge.root().elements().map(|v| v.type_name()).collect();
        assert_eq!(names, ["integer", "integer"]);
        assert_eq!(root.get("s").unwrap().as_str(), Some("abc"));
        assert_eq!(root.get("p").unwrap().as_str(), Some("plain"));
        assert_eq!(root.get("p").unwrap().as_u64(), None);
        assert_eq!(root.get("missing").map(|m| m.type_name()), None);
        assert_eq!(
            format!("{:?}", root.get("s").unwrap()),
            "Item(string at node 14)"
        );
        // Elements step over nested containers whole.
        let a = root.get("a").unwrap();
        let shown: Vec<String> = a.elements().map(|e| e.to_string()).collect();
        assert_eq!(shown, ["1", "[2,3]", r#"{"x":4}"#, "5"]);
        assert_eq!(a.length(), Some(4));
        assert_eq!(a.members().count(), 0);
        assert_eq!(a.get("x").map(|x| x.type_name()), None);
        // The last of repeated keys, as the tree's `get`; `members` shows both.
        let o = root.get("o").unwrap();
        assert_eq!(o.get("k").unwrap().as_u64(), Some(2));
        let members: Vec<(&str, u64)> =
            o.members().map(|(k, v)| (k, v.as_u64().unwrap())).collect();
        assert_eq!(members, [("k", 1), ("k", 2)]);
        assert_eq!(root.get("e").unwrap().length(), Some(0));
        assert_eq!(root.get("e").unwrap().elements().count(), 0);
        assert_eq!(root.get("eo").unwrap().members().count(), 0);
        assert_eq!(root.get("s").unwrap().elements().count(), 0);
        let keys: Vec<&str> = root.members().map(|(k, _)| k).collect();
        assert_eq!(
            keys,
            ["n", "t", "u", "i", "f", "big", "s", "p", "a", "o", "e", "eo"]
        );
        assert_eq!(
            root.get("a").unwrap().to_value(),
            parse(b"[1, [2, 3], {\"x\": 4}, 5]").unwrap()
        );
    }

    #[test]
    fn the_memory_limit_counts_the_tapes_buffers_and_holds_at_its_edge() {
        let input = format!("[{}0]", "\"a\\nb\", ".repeat(5_000));
        let whole = Tape::parse(input.as_bytes()).unwrap();
        // The least limit that admits the tape, found by bisection, and the byte that refuses it.
        let admits = |max: usize| {
            let limits = Limits {
                max_tree_bytes: max,
                ..Limits::default()
            };
            Tape::parse_with_limits(input.as_bytes(), limits)
        };
        let (mut low, mut high) = (0, whole.heap_bytes() * 4);
        while low + 1 < high {
            let mid = (low + high) / 2;
            if admits(mid).is_ok() {
                high = mid;
            } else {
                low = mid;
            }
        }
        let tape = admits(high).unwrap();
        assert!(tape.heap_bytes() <= high, "{} > {high}", tape.heap_bytes());
        assert_eq!(tape.root().to_string(), whole.root().to_string());
        let refused = admits(low).unwrap_err();
        assert!(refused.is_memory_limit(), "{refused}");
        assert!(
            refused
                .to_string()
                .contains(&format!("more than the limit of {low} bytes")),
            "{refused}"
        );
    }

    #[test]
    fn a_small_document_fits_a_limit_that_holds_its_nodes() {
        // `0` is one node of 16 bytes: the first node buffer, 64 nodes, must not ask 1,024 bytes
        // of a limit that holds what the document needs.
        let limits = |max_tree_bytes| Limits {
            max_tree_bytes,
            ..Limits::default()
        };
        for (input, nodes) in [(&b"0"[..], 1), (b"[1, 2]", 3), (b"{\"a\": [true]}", 4)] {
            let max = nodes * std::mem::size_of::<Node>();
            let tape = Tape::parse_with_limits(input, limits(max)).unwrap();
            assert!(tape.heap_bytes() <= max, "{} > {max}", tape.heap_bytes());
            assert_eq!(tape.root().to_value(), parse(input).unwrap());
            let refused = Tape::parse_with_limits(input, limits(max - 1)).unwrap_err();
            assert!(refused.is_memory_limit(), "{refused}");
            let tape = Tape::parse_with_limits(input, limits(1_000)).unwrap();
            assert!(tape.heap_bytes() <= 1_000, "{}", tape.heap_bytes());
        }
    }

    #[test]
    fn the_decoded_text_grows_only_within_the_limit() {
        let limits = |max_tree_bytes| Limits {
            max_tree_bytes,
            ..Limits::default()
        };
        // One string with escapes far longer than the limit: refused where its text passes the
        // limit, not decoded whole first (1.3 MB of input, 500 KB of text, for a limit of 4 KiB).
        let long = format!("[\"\\n{}\"]", "a\\ud83d\\ude00".repeat(100_000));
        let refused = Tape::parse_with_limits(long.as_bytes(), limits(4_096)).unwrap_err();
        assert!(refused.is_memory_limit(), "{refused}");
        assert!(
            refused.offset() < 4_096 * 3,
            "refused at {}",
            refused.offset()
        );
        // Cut short, it is still refused at the limit: not decoded to its end to find it cut.
        let cut = &long.as_bytes()[..long.len() - 2];
        let refused = Tape::parse_with_limits(cut, limits(4_096)).unwrap_err();
        assert!(refused.is_memory_limit(), "{refused}");
        assert!(
            refused.offset() < 4_096 * 3,
            "refused at {}",
            refused.offset()
        );
        // Beside the first node buffer, text of 1,000 bytes then 1 byte more: a limit that holds
        // both admits them, however the text's buffer would have doubled (to 2,000 bytes).
        let input = format!("[\"\\n{}\", \"\\t\"]", "a".repeat(999));
        let nodes = MIN_NODES * std::mem::size_of::<Node>();
        for max in [nodes + 1_001, nodes + 1_500, nodes + 1_999] {
            let tape = Tape::parse_with_limits(input.as_bytes(), limits(max)).unwrap();
            assert!(tape.heap_bytes() <= max, "{} > {max}", tape.heap_bytes());
            assert_eq!(tape.root().to_value(), parse(input.as_bytes()).unwrap());
        }
        let refused = Tape::parse_with_limits(input.as_bytes(), limits(nodes + 1_000));
        assert!(refused.unwrap_err().is_memory_limit());
    }

    /// A random document of every kind of token, with escapes, non-ASCII text and nesting.
    fn random_document(rng: &mut TestRng, out: &mut String) {
        let mut open: Vec<(char, usize)> = Vec::new();
        loop {
            let budget = open.len() < 12 && out.len() < 4_000;
            match rng.next() % if budget { 10 } else { 8 } {
                0 => out.push_str("null"),
                1 => out.push_str(["true", "false"][(rng.next() % 2) as usize]),
                2 => out.push_str(&(rng.next() as i64 >> (rng.next() % 64)).to_string()),
                3 => out.push_str(&format!("{:e}", f64::from_bits(rng.next() >> 2))),
                4 => out.push_str(
                    ["1e400", "-0", "123456789012345678901234"][(rng.next() % 3) as usize],
                ),
                5..=7 => {
                    let pieces = [
                        "a",
                        "\\n",
                        "\\u00e9",
                        "\u{65e5}",
                        "\\ud83d\\ude00",
                        "\\\"",
                        " ",
                    ];
                    out.push('"');
                    for _ in 0..rng.next() % 30 {
                        out.push_str(pieces[(rng.next() % pieces.len() as u64) as usize]);
                    }
                    out.push('"');
                }
                8 => {
                    out.push('[');
                    open.push((']', (rng.next() % 5) as usize));
                }
                _ => {
                    out.push('{');
                    open.push(('}', (rng.next() % 5) as usize));
                }
            }
            loop {
                let Some((close, left)) = open.last_mut() else {
                    return;
                };
                if *left == 0 {
                    out.push(*close);
                    open.pop();
                    continue;
                }
                *left -= 1;
                if !out.ends_with(['[', '{']) {
                    out.push_str(", ");
                }
                if *close == '}' {
                    out.push_str(
                        [
                            "\"k\": ",
                            "\"k\": ",
                            "\"\\u006b\": ",
                            "\"long key of some length\": ",
                        ][(rng.next() % 4) as usize],
                    );
                }
                break;
            }
        }
    }

    #[test]
    fn random_documents_and_their_damaged_copies_parse_as_the_tree_does() {
        let mut rng = TestRng(0x3C6E_F372_FE94_F82B);
        for _ in 0..2_000 {
            let mut text = String::new();
            random_document(&mut rng, &mut text);
            assert_same_as_parse(text.as_bytes());
            // The same document cut short, or with one byte replaced.
            let mut bytes = text.into_bytes();
            let at = (rng.next() % bytes.len() as u64) as usize;
            assert_same_as_parse(&bytes[..at]);
            let damage = b"[]{},:\"\\0-eE.x \xff"[(rng.next() % 16) as usize];
            bytes[at] = damage;
            assert_same_as_parse(&bytes);
        }
    }

    #[test]
    fn under_any_memory_limit_a_tape_holds_the_trees_value_or_refuses_as_the_tree_does() {
        // Within the limit, or refused for it, or else the tree's very error: the limit is the
        // only exception to deciding as the tree does.
        let mut rng = TestRng(0x9E37_79B9_7F4A_7C15);
        let mut seen = [0; 3];
        for _ in 0..2_000 {
            let mut text = String::new();
            random_document(&mut rng, &mut text);
            let mut bytes = text.into_bytes();
            if rng.next() % 2 == 0 {
                let at = (rng.next() % bytes.len() as u64) as usize;
                bytes[at] = b"[]{},:\"\\0-eE.x \xff"[(rng.next() % 16) as usize];
            }
            let whole = Tape::parse(&bytes).map_or(4_096, |tape| tape.heap_bytes());
            let limits = Limits {
                max_tree_bytes: (rng.next() % (whole as u64 + 1)) as usize,
                ..Limits::default()
            };
            let shown = String::from_utf8_lossy(&bytes);
            match (Tape::parse_with_limits(&bytes, limits), parse(&bytes)) {
                (Ok(tape), Ok(value)) => {
                    assert!(tape.heap_bytes() <= limits.max_tree_bytes, "{shown}");
                    assert_eq!(tape.root().to_value(), value, "{shown}");
                    seen[0] += 1;
                }
                (Err(ours), _) if ours.is_memory_limit() => seen[1] += 1,
                (Err(ours), Err(theirs)) => {
                    assert_eq!(ours, theirs, "{shown}");
                    seen[2] += 1;
                }
                (ours, theirs) => panic!("{shown}: tape {ours:?}, tree {theirs:?}"),
            }
        }
        // Each way was taken.
        assert!(seen.iter().all(|&n| n > 100), "{seen:?}");
    }
}
