//! The strict RFC 8259 parser: bytes in, a [`Value`] or a positioned [`ParseError`] out.
//!
//! One pass over the input with an explicit stack of open containers (no recursion). Strings,
//! runs of spaces and runs of digits are scanned eight bytes at a time (word tricks on a `u64`);
//! strings without escapes are borrowed from the input, checked as UTF-8 once for the whole input
//! (each on its own only when that check fails, to find the bad byte). Not a streaming parser: the
//! caller hands over one complete document and bounds its size. The [`Scanner`] here (tokens, and the punctuation between them) is shared with the pull
//! [`Reader`](super::Reader), so both accept and reject exactly the same input at the same byte.

use super::error::{Code, ParseError};
use super::float::decimal_to_f64;
use super::scan::find_string_stop;
use super::text::Text;
use super::value::{Array, Key, Map, Number, Value};
use std::borrow::Cow;

/// How deep arrays and objects may nest by default. Deeper input is an error, never a stack overflow.
pub const DEFAULT_MAX_DEPTH: usize = 128;

/// Limits applied while parsing.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// The deepest nesting of arrays and objects accepted (a top-level `[]` is depth 1).
    pub max_depth: usize,
    /// The most memory, in bytes, the tree being built may take; unlimited by default. A tree can
    /// take many times its input (`[0,0,...]`: a 32-byte [`Value`] per two bytes, and twice that
    /// while its array is being collected), so a caller that must bound its memory by the input's
    /// size sets this. Counted as an estimate of what the allocator hands out (with glibc's header
    /// and rounding per allocation) for every string, key (counted as its own allocation even when
    /// it is held inline in its [`Key`](super::Key), so that a limit accepts and rejects what it
    /// did before keys could be inline), number kept as text and finished container, plus
    /// the parser's own buffers of elements waiting for their container (which is most of the
    /// peak), and checked before each allocation: an input whose tree would need more stops with
    /// an error ([`ParseError::is_memory_limit`]) at the byte where it would have passed the
    /// limit, having allocated at most about this much. A string with escapes is checked before
    /// each piece of it is decoded (a run of plain text, or one escape), counting the parser's
    /// reused decoding buffer as it grows and the string's own allocation: a long escaped string
    /// stops where it would pass the limit, not once decoded whole, and the buffer stays counted
    /// until the parse ends. [`Reader`](super::Reader) applies it to
    /// each value it reads whole; its tokens are not counted. `usize::MAX`, the default, counts
    /// nothing: the parser runs as fast as without the limit.
    pub max_tree_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_depth: DEFAULT_MAX_DEPTH,
            max_tree_bytes: usize::MAX,
        }
    }
}

/// What an allocation of `len` bytes is counted as against [`Limits::max_tree_bytes`]: glibc's
/// cost (an 8-byte header, 16-byte rounding, 32 bytes at least), nothing for an empty one (an
/// empty `String` or `Vec` does not allocate).
fn tree_bytes(len: usize) -> usize {
    if len == 0 {
        0
    } else {
        (len.saturating_add(23) & !15).max(32)
    }
}

/// The count against [`Limits::max_tree_bytes`] while a tree is built; when not `COUNTED` (no
/// limit), every check passes without counting.
struct Budget<const COUNTED: bool> {
    max: usize,
    /// Finished strings, keys, verbatim numbers and containers (their buffers), as
    /// [`tree_bytes`] counts them.
    held: usize,
    /// The scanner's reused buffer for decoding escaped strings, as [`tree_bytes`] counts it
    /// once this parse has grown it (it is held until the parse ends, like the element buffers).
    scratch: usize,
}

impl<const COUNTED: bool> Budget<COUNTED> {
    /// Counts `more` bytes as held if the budget admits them beside the element buffers.
    #[inline]
    fn take(&mut self, more: usize, elements: &Vec<Value>, entries: &Vec<(Key, Value)>) -> bool {
        if !COUNTED {
            return true;
        }
        let buffers = capacity_bytes(elements) + capacity_bytes(entries) + self.scratch;
        self.held = self.held.saturating_add(more);
        self.held.saturating_add(buffers) <= self.max
    }

    /// Makes room for `more` bytes of an escaped string being decoded onto `decoded` (the
    /// scanner's reused buffer), if the budget admits the buffer as grown and the string's own
    /// allocation of its length so far (counted as held when the string ends) beside what is
    /// held and the element buffers. Checked before each piece of the string, so a long escaped
    /// string stops where it would pass the limit instead of being decoded whole first.
    fn room_for_text(
        &mut self,
        decoded: &mut String,
        more: usize,
        elements: &Vec<Value>,
        entries: &Vec<(Key, Value)>,
    ) -> Result<(), Code> {
        if !COUNTED {
            return Ok(());
        }
        let needed = decoded.len().saturating_add(more);
        // Grown as a `String` grows: to twice its capacity at least.
        let grown = (needed > decoded.capacity())
            .then(|| needed.max(decoded.capacity().saturating_mul(2)).max(8));
        let scratch = grown.map_or(self.scratch, tree_bytes);
        let total = self
            .held
            .saturating_add(capacity_bytes(elements))
            .saturating_add(capacity_bytes(entries))
            .saturating_add(scratch)
            .saturating_add(tree_bytes(needed));
        if total > self.max {
            return Err(Code::TreeLimitExceeded(self.max));
        }
        if let Some(grown) = grown {
            decoded.reserve_exact(grown - decoded.len());
            self.scratch = scratch;
        }
        Ok(())
    }

    /// Makes room for one more item in `buffer`, one of the parser's element buffers, growing it
    /// by doubling as `Vec` does, if the budget admits twice the grown buffer beside what is held
    /// and the other buffer (`other` bytes): a reallocation may hold the old buffer and the new
    /// one at once, and the allocator may keep the memory of every smaller one it replaced
    /// (together less than the old one). glibc serves blocks below its mmap threshold, which
    /// rises up to 32 MiB once a larger block is freed, from its heap, where a freed block stays
    /// resident.
    #[inline]
    fn room_for_one<T>(&self, buffer: &mut Vec<T>, other: usize) -> bool {
        if !COUNTED || buffer.len() < buffer.capacity() {
            return true;
        }
        let size = std::mem::size_of::<T>();
        let grown = buffer.capacity().saturating_mul(2).max(8);
        let needed = tree_bytes(grown.saturating_mul(size)).saturating_mul(2);
        let held = self.held.saturating_add(self.scratch);
        if held.saturating_add(other).saturating_add(needed) > self.max {
            return false;
        }
        buffer.reserve_exact(grown - buffer.len());
        true
    }
}

/// Bytes one of the parser's element buffers holds allocated (its capacity, not its length).
#[inline]
fn capacity_bytes<T>(buffer: &Vec<T>) -> usize {
    tree_bytes(buffer.capacity() * std::mem::size_of::<T>())
}

/// Parses one JSON document with the default limits.
pub fn parse(input: &[u8]) -> Result<Value, ParseError> {
    parse_with_limits(input, Limits::default())
}

/// Parses one JSON document; surrounding whitespace is allowed, anything else after the value is not.
pub fn parse_with_limits(input: &[u8], limits: Limits) -> Result<Value, ParseError> {
    let mut scanner = Scanner::new(input);
    let value = scanner.parse_value(0, &limits)?;
    scanner.end_document()?;
    Ok(value)
}

/// An open container waiting for its next element. Elements themselves wait on the parser's shared
/// element stacks from `start` on, so each finished container is allocated once at its exact size
/// instead of growing by doubling.
enum Frame {
    Array {
        start: usize,
    },
    /// The key whose value is being parsed.
    Object {
        start: usize,
        key: Key,
    },
}

/// How a value begins: a container just opened, or a whole scalar (a string as the caller's
/// string reader gives it: borrowed text for the tree and the reader).
pub(super) enum Start<S> {
    Array,
    Object,
    String(S),
    Number(Number),
    Bool(bool),
    Null,
}

/// The lexical layer the tree parser and the pull reader stand on: a position in the input,
/// the token scanners, and the punctuation rules between tokens (each with the error it reports).
pub(super) struct Scanner<'a> {
    input: &'a [u8],
    /// The whole input as text when it is all UTF-8 (checked once, up front): strings are then
    /// sliced from it without a check each. `None` sends every string through its own check,
    /// which finds and reports the first bad byte inside a string where it is.
    text: Option<&'a str>,
    pos: usize,
    /// Reused buffer for decoding strings that contain escapes (each then takes one allocation
    /// of its decoded size).
    scratch: String,
}

/// Exponent digits beyond this value no longer change the result (any |exponent| above ~400
/// underflows or overflows); accumulation stops there so it cannot overflow.
const EXPONENT_SATURATION: i64 = 1 << 40;

impl<'a> Scanner<'a> {
    pub(super) fn new(input: &'a [u8]) -> Scanner<'a> {
        Scanner {
            input,
            text: std::str::from_utf8(input).ok(),
            pos: 0,
            scratch: String::new(),
        }
    }

    #[cold]
    fn error(&self, code: Code) -> ParseError {
        ParseError::at(code, self.input, self.pos)
    }

    #[cold]
    fn error_at(&self, code: Code, pos: usize) -> ParseError {
        ParseError::at(code, self.input, pos)
    }

    #[inline]
    pub(super) fn peek(&self) -> Option<u8> {
        self.input.get(self.pos).copied()
    }

    #[inline]
    pub(super) fn skip_whitespace(&mut self) {
        while let Some(&b) = self.input.get(self.pos) {
            if b == b' ' {
                // Indentation comes in runs of spaces: eight at a time.
                self.pos = skip_spaces(self.input, self.pos);
            } else if matches!(b, b'\n' | b'\r' | b'\t') {
                self.pos += 1;
            } else {
                break;
            }
        }
    }

    /// Reads the start of a value after optional whitespace: opens a container (`depth` of them
    /// being open already, at most `max_depth` allowed) or reads a whole scalar.
    #[inline(always)]
    pub(super) fn start_value(
        &mut self,
        depth: usize,
        max_depth: usize,
    ) -> Result<Start<Cow<'a, str>>, ParseError> {
        self.start_value_with(depth, max_depth, Self::parse_string)
    }

    /// [`Scanner::start_value`], reading a string (at its opening quote) with `read_string`.
    #[inline(always)]
    pub(super) fn start_value_with<S>(
        &mut self,
        depth: usize,
        max_depth: usize,
        read_string: impl FnOnce(&mut Self) -> Result<S, ParseError>,
    ) -> Result<Start<S>, ParseError> {
        self.skip_whitespace();
        Ok(match self.peek() {
            None => return Err(self.error(Code::EofWhileParsingValue)),
            Some(open @ (b'[' | b'{')) => {
                if depth >= max_depth {
                    return Err(self.error(Code::DepthLimitExceeded(max_depth)));
                }
                self.pos += 1;
                if open == b'[' {
                    Start::Array
                } else {
                    Start::Object
                }
            }
            Some(b'"') => Start::String(read_string(self)?),
            Some(b'-' | b'0'..=b'9') => Start::Number(self.parse_number()?),
            Some(b't') => self.parse_literal(b"true", Start::Bool(true))?,
            Some(b'f') => self.parse_literal(b"false", Start::Bool(false))?,
            Some(b'n') => self.parse_literal(b"null", Start::Null)?,
            Some(_) => return Err(self.error(Code::ExpectedValue)),
        })
    }

    /// Just after `[`: true (and the `]` consumed) when the array is empty.
    #[inline]
    pub(super) fn array_is_empty(&mut self) -> bool {
        self.skip_whitespace();
        let empty = self.peek() == Some(b']');
        self.pos += usize::from(empty);
        empty
    }

    /// After an array element: true when another element follows (the `,` consumed), false when
    /// the array ended (the `]` consumed).
    #[inline(always)]
    pub(super) fn array_continues(&mut self) -> Result<bool, ParseError> {
        self.skip_whitespace();
        match self.peek() {
            Some(b',') => {
                self.pos += 1;
                self.skip_whitespace();
                if self.peek() == Some(b']') {
                    return Err(self.error(Code::TrailingComma));
                }
                Ok(true)
            }
            Some(b']') => {
                self.pos += 1;
                Ok(false)
            }
            None => Err(self.error(Code::EofWhileParsingArray)),
            Some(_) => Err(self.error(Code::ExpectedCommaOrEndOfArray)),
        }
    }

    /// Just after `{`: the first key (and its `:`), or `None` (the `}` consumed) when empty.
    #[inline]
    pub(super) fn object_first_key(&mut self) -> Result<Option<Cow<'a, str>>, ParseError> {
        self.object_first_key_with(Self::parse_string)
    }

    /// [`Scanner::object_first_key`], reading the key with `read_string`.
    #[inline(always)]
    pub(super) fn object_first_key_with<S>(
        &mut self,
        read_string: impl FnOnce(&mut Self) -> Result<S, ParseError>,
    ) -> Result<Option<S>, ParseError> {
        self.skip_whitespace();
        match self.peek() {
            Some(b'}') => {
                self.pos += 1;
                Ok(None)
            }
            Some(b'"') => self.parse_key(read_string).map(Some),
            None => Err(self.error(Code::EofWhileParsingObject)),
            Some(_) => Err(self.error(Code::ExpectedObjectKey)),
        }
    }

    /// After an object member's value: the next key (and its `:`), or `None` (the `}` consumed)
    /// when the object ended.
    #[inline(always)]
    pub(super) fn object_next_key(&mut self) -> Result<Option<Cow<'a, str>>, ParseError> {
        self.object_next_key_with(Self::parse_string)
    }

    /// [`Scanner::object_next_key`], reading the key with `read_string`.
    #[inline(always)]
    pub(super) fn object_next_key_with<S>(
        &mut self,
        read_string: impl FnOnce(&mut Self) -> Result<S, ParseError>,
    ) -> Result<Option<S>, ParseError> {
        self.skip_whitespace();
        match self.peek() {
            Some(b',') => {
                self.pos += 1;
                self.skip_whitespace();
                match self.peek() {
                    Some(b'"') => self.parse_key(read_string).map(Some),
                    Some(b'}') => Err(self.error(Code::TrailingComma)),
                    None => Err(self.error(Code::EofWhileParsingObject)),
                    Some(_) => Err(self.error(Code::ExpectedObjectKey)),
                }
            }
            Some(b'}') => {
                self.pos += 1;
                Ok(None)
            }
            None => Err(self.error(Code::EofWhileParsingObject)),
            Some(_) => Err(self.error(Code::ExpectedCommaOrEndOfObject)),
        }
    }

    /// After the document's value: only whitespace may follow.
    pub(super) fn end_document(&mut self) -> Result<(), ParseError> {
        self.skip_whitespace();
        if self.pos != self.input.len() {
            return Err(self.error(Code::TrailingCharacters));
        }
        Ok(())
    }

    /// Parses one whole value into a tree, `depth` containers being open around it already,
    /// within `limits` (its own tree counted against `max_tree_bytes`).
    pub(super) fn parse_value(
        &mut self,
        depth: usize,
        limits: &Limits,
    ) -> Result<Value, ParseError> {
        // Unlimited (the default, every protocol message): no counting at all, so the parser is
        // as fast as without the limit.
        if limits.max_tree_bytes == usize::MAX {
            self.parse_tree::<false>(depth, limits)
        } else {
            self.parse_tree::<true>(depth, limits)
        }
    }

    /// [`Scanner::parse_value`], counting the tree against `limits.max_tree_bytes` if `COUNTED`.
    fn parse_tree<const COUNTED: bool>(
        &mut self,
        depth: usize,
        limits: &Limits,
    ) -> Result<Value, ParseError> {
        let max_depth = limits.max_depth;
        let mut budget = Budget::<COUNTED> {
            max: limits.max_tree_bytes,
            held: 0,
            scratch: 0,
        };
        let mut stack: Vec<Frame> = Vec::new();
        let mut elements: Vec<Value> = Vec::new();
        let mut entries: Vec<(Key, Value)> = Vec::new();
        'value: loop {
            let mut value = match self.start_value_with(depth + stack.len(), max_depth, |s| {
                s.parse_tree_string(&mut budget, &elements, &entries)
            })? {
                Start::Array => {
                    if self.array_is_empty() {
                        Value::Array(Array::new())
                    } else {
                        let start = elements.len();
                        let all_numbers = matches!(self.peek(), Some(b'-' | b'0'..=b'9'))
                            && self.read_numbers(&mut budget, &mut elements, &entries, limits)?;
                        if !all_numbers {
                            stack.push(Frame::Array { start });
                            continue 'value;
                        }
                        self.close_array(&mut budget, &mut elements, start, &entries, limits)?
                    }
                }
                Start::Object => match self.object_first_key_with(|s| {
                    s.parse_tree_string(&mut budget, &elements, &entries)
                })? {
                    None => Value::Object(Map::new()),
                    Some(key) => {
                        if !budget.take(tree_bytes(key.len()), &elements, &entries) {
                            return Err(self.tree_limit(limits));
                        }
                        stack.push(Frame::Object {
                            start: entries.len(),
                            key: Key::from(key),
                        });
                        continue 'value;
                    }
                },
                Start::String(s) => {
                    if !budget.take(tree_bytes(s.len()), &elements, &entries) {
                        return Err(self.tree_limit(limits));
                    }
                    Value::String(Text::from(s))
                }
                Start::Number(n) => {
                    if !budget.take(tree_bytes(n.text_len()), &elements, &entries) {
                        return Err(self.tree_limit(limits));
                    }
                    Value::Number(n)
                }
                Start::Bool(b) => Value::Bool(b),
                Start::Null => Value::Null,
            };

            // Attach the finished value to its container, closing containers as they end.
            loop {
                match stack.last_mut() {
                    None => return Ok(value),
                    Some(Frame::Array { start }) => {
                        let start = *start;
                        let other = capacity_bytes(&entries);
                        if !budget.room_for_one(&mut elements, other) {
                            return Err(self.tree_limit(limits));
                        }
                        elements.push(value);
                        if self.array_continues()? {
                            continue 'value;
                        }
                        stack.pop();
                        value =
                            self.close_array(&mut budget, &mut elements, start, &entries, limits)?;
                    }
                    Some(Frame::Object { start, key }) => {
                        let start = *start;
                        let key = std::mem::take(key);
                        let other = capacity_bytes(&elements);
                        if !budget.room_for_one(&mut entries, other) {
                            return Err(self.tree_limit(limits));
                        }
                        entries.push((key, value));
                        let next_key = self.object_next_key_with(|s| {
                            s.parse_tree_string(&mut budget, &elements, &entries)
                        })?;
                        match next_key {
                            Some(next_key) => {
                                let bytes = tree_bytes(next_key.len());
                                if !budget.take(bytes, &elements, &entries) {
                                    return Err(self.tree_limit(limits));
                                }
                                if let Some(Frame::Object { key, .. }) = stack.last_mut() {
                                    *key = Key::from(next_key);
                                }
                                continue 'value;
                            }
                            None => {
                                stack.pop();
                                let bytes =
                                    (entries.len() - start) * std::mem::size_of::<(Key, Value)>();
                                if !budget.take(tree_bytes(bytes), &elements, &entries) {
                                    return Err(self.tree_limit(limits));
                                }
                                value = Value::Object(Map::from_parsed_entries(
                                    entries.split_off(start),
                                ));
                            }
                        }
                    }
                }
            }
        }
    }

    /// Reads the elements of an array whose next element starts a number, onto `elements`, while
    /// they are numbers: true when the array ended (its `]` consumed) with every element a number,
    /// false when, after a `,`, the next element is something else (left for the tree loop). A
    /// GeoJSON ring or a vector is mostly such arrays; this loop takes each number straight to
    /// the element stack, with the same checks, errors and counting as the tree loop's way round.
    #[inline(always)]
    fn read_numbers<const COUNTED: bool>(
        &mut self,
        budget: &mut Budget<COUNTED>,
        elements: &mut Vec<Value>,
        entries: &Vec<(Key, Value)>,
        limits: &Limits,
    ) -> Result<bool, ParseError> {
        loop {
            let number = self.read_number()?;
            if !budget.take(tree_bytes(number.text_len()), elements, entries) {
                return Err(self.tree_limit(limits));
            }
            if !budget.room_for_one(elements, capacity_bytes(entries)) {
                return Err(self.tree_limit(limits));
            }
            elements.push(Value::Number(number));
            if !self.array_continues()? {
                return Ok(true);
            }
            if !matches!(self.peek(), Some(b'-' | b'0'..=b'9')) {
                return Ok(false);
            }
        }
    }

    /// The array of the elements from `start` on, taken off the element stack into one
    /// allocation of their exact size, once `budget` admits it.
    #[inline(always)]
    fn close_array<const COUNTED: bool>(
        &self,
        budget: &mut Budget<COUNTED>,
        elements: &mut Vec<Value>,
        start: usize,
        entries: &Vec<(Key, Value)>,
        limits: &Limits,
    ) -> Result<Value, ParseError> {
        let bytes = (elements.len() - start) * std::mem::size_of::<Value>();
        if !budget.take(tree_bytes(bytes), elements, entries) {
            return Err(self.tree_limit(limits));
        }
        let array = if elements.len() - start == 2 {
            // A coordinate pair, the commonest array of all in geographic data: moved into place
            // by two stores, where `split_off` would call `memcpy` for its 64 bytes.
            let second = elements.pop().expect("two elements");
            let first = elements.pop().expect("two elements");
            vec![first, second]
        } else {
            elements.split_off(start)
        };
        Ok(Value::Array(Array::from(array)))
    }

    /// The error for a tree that would pass `limits.max_tree_bytes`, at the current byte.
    #[cold]
    pub(super) fn tree_limit(&self, limits: &Limits) -> ParseError {
        self.error(Code::TreeLimitExceeded(limits.max_tree_bytes))
    }

    /// Parses `"key"` (with `read_string`) and the `:` after it.
    #[inline(always)]
    fn parse_key<S>(
        &mut self,
        read_string: impl FnOnce(&mut Self) -> Result<S, ParseError>,
    ) -> Result<S, ParseError> {
        let key = read_string(self)?;
        self.skip_whitespace();
        match self.peek() {
            Some(b':') => {
                self.pos += 1;
                Ok(key)
            }
            None => Err(self.error(Code::EofWhileParsingObject)),
            Some(_) => Err(self.error(Code::ExpectedColon)),
        }
    }

    fn parse_literal<T>(&mut self, word: &[u8], value: T) -> Result<T, ParseError> {
        let end = self.pos + word.len();
        match self.input.get(self.pos..end) {
            Some(found) if found == word => {
                self.pos = end;
                Ok(value)
            }
            _ => {
                // Point at the first byte that differs (or the end of input).
                let matching = self.input[self.pos..]
                    .iter()
                    .zip(word)
                    .take_while(|(a, b)| a == b)
                    .count();
                let at = self.pos + matching;
                if at >= self.input.len() {
                    Err(self.error_at(Code::EofWhileParsingValue, at))
                } else {
                    Err(self.error_at(Code::ExpectedValue, at))
                }
            }
        }
    }

    /// Parses a string starting at the opening quote; borrowed from the input unless it has escapes.
    fn parse_string(&mut self) -> Result<Cow<'a, str>, ParseError> {
        self.parse_string_within(|_, _| Ok(()))
    }

    /// A string of the tree, decoded within `budget` when it is `COUNTED`.
    #[inline(always)]
    fn parse_tree_string<const COUNTED: bool>(
        &mut self,
        budget: &mut Budget<COUNTED>,
        elements: &Vec<Value>,
        entries: &Vec<(Key, Value)>,
    ) -> Result<Cow<'a, str>, ParseError> {
        if !COUNTED {
            return self.parse_string();
        }
        self.parse_string_within(|decoded, more| {
            budget.room_for_text(decoded, more, elements, entries)
        })
    }

    /// [`Scanner::parse_string`], an escaped string decoded with `room` making room before each
    /// piece of its text (see [`Scanner::decode_escaped`]).
    #[inline(always)]
    fn parse_string_within(
        &mut self,
        room: impl FnMut(&mut String, usize) -> Result<(), Code>,
    ) -> Result<Cow<'a, str>, ParseError> {
        let start = self.pos + 1;
        let i = find_string_stop(self.input, start);
        // Fast path: no escapes.
        if self.input.get(i) == Some(&b'"') {
            // Both ends are next to ASCII bytes (quotes), so they are character boundaries.
            let text = self
                .text_of(start, i)
                .map_err(|bad| self.error_at(Code::InvalidUtf8, bad))?;
            self.pos = i + 1;
            return Ok(Cow::Borrowed(text));
        }
        self.parse_string_with_escapes(start, i, room)
            .map(Cow::Owned)
    }

    /// `input[start..end]` (both ends character boundaries) as text: sliced from the input's
    /// checked text when there is one, else checked here; `Err` gives the first bad byte.
    #[inline]
    fn text_of(&self, start: usize, end: usize) -> Result<&'a str, usize> {
        match self.text.and_then(|text| text.get(start..end)) {
            Some(text) => Ok(text),
            None => {
                std::str::from_utf8(&self.input[start..end]).map_err(|e| start + e.valid_up_to())
            }
        }
    }

    /// Decodes a string that has escapes (or stops at a byte it cannot hold, for the error),
    /// `input[start..i]` being its plain start: into the reused scratch buffer, then one
    /// allocation of the decoded size.
    #[cold]
    fn parse_string_with_escapes(
        &mut self,
        start: usize,
        i: usize,
        room: impl FnMut(&mut String, usize) -> Result<(), Code>,
    ) -> Result<String, ParseError> {
        let mut decoded = std::mem::take(&mut self.scratch);
        decoded.clear();
        let result = self
            .decode_escaped(start, i, &mut decoded, room)
            .map(|()| decoded.as_str().to_owned());
        self.scratch = decoded;
        result
    }

    /// [`Scanner::parse_string_with_escapes`]'s loop, decoding onto the end of `decoded`. A bad
    /// UTF-8 byte is reported only at the closing quote, so that any other error of the string
    /// comes first, as it always has. Before each piece of text (a plain run, or one escape's
    /// character) is added, `room(decoded, its length)` makes room for it: its error stops the
    /// string there, at the piece's first byte (the memory limit of a tree that counts one;
    /// otherwise `room` makes none and lets `decoded` grow as a `String` does).
    fn decode_escaped(
        &mut self,
        start: usize,
        mut i: usize,
        decoded: &mut String,
        mut room: impl FnMut(&mut String, usize) -> Result<(), Code>,
    ) -> Result<(), ParseError> {
        let mut bad_utf8 = None;
        self.push_plain_run(decoded, start, i, &mut bad_utf8, &mut room)?;
        loop {
            let Some(&b) = self.input.get(i) else {
                return Err(self.error_at(Code::EofWhileParsingString, i));
            };
            match b {
                b'"' => {
                    self.pos = i + 1;
                    return match bad_utf8 {
                        Some(at) => Err(self.error_at(Code::InvalidUtf8, at)),
                        None => Ok(()),
                    };
                }
                b'\\' => {
                    let escape_at = i;
                    let Some(&e) = self.input.get(i + 1) else {
                        return Err(self.error_at(Code::EofWhileParsingString, i + 1));
                    };
                    i += 2;
                    let simple = match e {
                        b'"' => Some('"'),
                        b'\\' => Some('\\'),
                        b'/' => Some('/'),
                        b'b' => Some('\u{8}'),
                        b'f' => Some('\u{c}'),
                        b'n' => Some('\n'),
                        b'r' => Some('\r'),
                        b't' => Some('\t'),
                        b'u' => None,
                        _ => return Err(self.error_at(Code::InvalidEscape, escape_at)),
                    };
                    if let Some(ch) = simple {
                        room(decoded, 1).map_err(|code| self.error_at(code, escape_at))?;
                        decoded.push(ch);
                        continue;
                    }
                    let unit = self.hex4(i, escape_at)?;
                    i += 4;
                    let ch = match unit {
                        0xD800..=0xDBFF => {
                            // A high surrogate must be followed by an escaped low surrogate.
                            if self.input.get(i) != Some(&b'\\')
                                || self.input.get(i + 1) != Some(&b'u')
                            {
                                return Err(self.error_at(Code::LoneSurrogate, escape_at));
                            }
                            let low = self.hex4(i + 2, i)?;
                            if !(0xDC00..=0xDFFF).contains(&low) {
                                return Err(self.error_at(Code::LoneSurrogate, escape_at));
                            }
                            i += 6;
                            0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                        }
                        0xDC00..=0xDFFF => {
                            return Err(self.error_at(Code::LoneSurrogate, escape_at));
                        }
                        _ => unit,
                    };
                    let ch = char::from_u32(ch).expect("surrogates were excluded above");
                    room(decoded, ch.len_utf8()).map_err(|code| self.error_at(code, escape_at))?;
                    decoded.push(ch);
                }
                0x00..=0x1f => return Err(self.error_at(Code::ControlCharacterInString, i)),
                _ => {
                    // The run up to the next byte that needs attention.
                    let run_start = i;
                    i = find_string_stop(self.input, i);
                    self.push_plain_run(decoded, run_start, i, &mut bad_utf8, &mut room)?;
                }
            }
        }
    }

    /// Appends the plain run `input[start..end]` (its ends next to ASCII bytes, so character
    /// boundaries) to `decoded` once `room` made room for it, or keeps its first bad byte in
    /// `bad_utf8` (after which nothing more is kept: the string is an error).
    #[inline]
    fn push_plain_run(
        &self,
        decoded: &mut String,
        start: usize,
        end: usize,
        bad_utf8: &mut Option<usize>,
        room: &mut impl FnMut(&mut String, usize) -> Result<(), Code>,
    ) -> Result<(), ParseError> {
        if bad_utf8.is_none() {
            match self.text_of(start, end) {
                Ok(run) => {
                    room(decoded, run.len()).map_err(|code| self.error_at(code, start))?;
                    decoded.push_str(run);
                }
                Err(bad) => *bad_utf8 = Some(bad),
            }
        }
        Ok(())
    }

    /// Four hex digits at `at`; errors point at the escape that began at `escape_at`.
    fn hex4(&self, at: usize, escape_at: usize) -> Result<u32, ParseError> {
        let Some(digits) = self.input.get(at..at + 4) else {
            return Err(
                if self.input.len() < at + 4
                    && self.input[at.min(self.input.len())..]
                        .iter()
                        .all(u8::is_ascii_hexdigit)
                {
                    self.error_at(Code::EofWhileParsingString, self.input.len())
                } else {
                    self.error_at(Code::InvalidUnicodeEscape, escape_at)
                },
            );
        };
        let mut unit = 0u32;
        for &d in digits {
            let v = match d {
                b'0'..=b'9' => d - b'0',
                b'a'..=b'f' => d - b'a' + 10,
                b'A'..=b'F' => d - b'A' + 10,
                _ => return Err(self.error_at(Code::InvalidUnicodeEscape, escape_at)),
            };
            unit = unit * 16 + u32::from(v);
        }
        Ok(unit)
    }

    /// Parses a number token per RFC 8259's grammar.
    fn parse_number(&mut self) -> Result<Number, ParseError> {
        self.read_number()
    }

    /// [`Scanner::parse_number`], inlined into the loop over an array of numbers.
    #[inline(always)]
    fn read_number(&mut self) -> Result<Number, ParseError> {
        let input = self.input;
        let start = self.pos;
        let negative = input[start] == b'-';
        let int_start = start + usize::from(negative);
        // Every digit goes into `mantissa`, wrapping; it is only trusted while at most 19
        // significant digits were read (10^19 < 2^64), which is counted once, at the end.
        let mut mantissa: u64 = 0;
        let mut i = match input.get(int_start) {
            Some(b'0') => int_start + 1,
            Some(b'1'..=b'9') => accumulate_integer_digits(input, int_start, &mut mantissa),
            None => return Err(self.error_at(Code::EofWhileParsingValue, int_start)),
            Some(_) => return Err(self.error_at(Code::InvalidNumber, int_start)),
        };
        let int_digits = i - int_start;
        if !matches!(input.get(i), Some(b'.' | b'e' | b'E')) {
            self.pos = i;
            return Ok(integer_number(
                input, start, i, negative, mantissa, int_digits,
            ));
        }
        let mut fraction_digits = 0;
        if input[i] == b'.' {
            i += 1;
            let fraction_start = i;
            i = accumulate_digits(input, i, &mut mantissa);
            fraction_digits = i - fraction_start;
            if fraction_digits == 0 {
                return Err(self.error_at(Code::InvalidNumber, i));
            }
        }
        let mut exponent: i64 = 0;
        if let Some(b'e' | b'E') = input.get(i) {
            i += 1;
            let exponent_negative = input.get(i) == Some(&b'-');
            if let Some(b'+' | b'-') = input.get(i) {
                i += 1;
            }
            let digits_start = i;
            while let Some(&d) = input.get(i) {
                let digit = d.wrapping_sub(b'0');
                if digit > 9 {
                    break;
                }
                exponent = (exponent * 10 + i64::from(digit)).min(EXPONENT_SATURATION);
                i += 1;
            }
            if i == digits_start {
                return Err(self.error_at(Code::InvalidNumber, i));
            }
            if exponent_negative {
                exponent = -exponent;
            }
        }
        self.pos = i;
        let significant_fits = int_digits + fraction_digits <= 19
            || significant_digits(input, int_start, int_digits, fraction_digits) <= 19;
        let exact = if significant_fits && exponent.abs() < EXPONENT_SATURATION {
            decimal_to_f64(mantissa, exponent - fraction_digits as i64)
        } else {
            None
        };
        let f = match exact {
            Some(magnitude) if negative => -magnitude,
            Some(magnitude) => magnitude,
            None => ascii(input, start, i)
                .parse()
                .map_err(|_| self.error_at(Code::InvalidNumber, start))?,
        };
        if f.is_finite() {
            Ok(Number::float(f))
        } else {
            // Beyond f64's range: keep the text so it is written back unchanged.
            Ok(Number::verbatim(ascii(input, start, i)))
        }
    }
}

/// The significant digits of a number whose integer part (`int_digits` digits from `int_start`)
/// is followed by `fraction_digits` digits after the point: all of them, except that an integer
/// part "0" and the zeros after the point that lead the fraction are not significant.
#[cold]
fn significant_digits(
    input: &[u8],
    int_start: usize,
    int_digits: usize,
    fraction_digits: usize,
) -> usize {
    if input[int_start] != b'0' {
        // An integer part has no leading zeros, so all its digits count. (Not `mantissa == 0`:
        // a long integer part can wrap the accumulator to exactly zero.)
        return int_digits + fraction_digits;
    }
    let fraction_start = int_start + 2;
    let fraction = &input[fraction_start..fraction_start + fraction_digits];
    fraction_digits - fraction.iter().take_while(|&&d| d == b'0').count()
}

/// The text of `input[start..end]`, a token the parser found to be ASCII.
fn ascii(input: &[u8], start: usize, end: usize) -> &str {
    std::str::from_utf8(&input[start..end]).expect("number tokens are ASCII")
}

const ONES: u64 = 0x0101_0101_0101_0101;

/// `10^n` for a run of `n` digits, up to eight.
const POWERS_OF_TEN_TO_EIGHT: [u64; 9] = {
    let mut powers = [1u64; 9];
    let mut n = 1;
    while n < powers.len() {
        powers[n] = powers[n - 1] * 10;
        n += 1;
    }
    powers
};

/// Integer parts are read one digit at a time up to this many digits, then eight at a time: most
/// are short (a coordinate's degrees, a count), where the lane arithmetic costs more than it saves.
const SHORT_INTEGER_DIGITS: usize = 4;

/// [`accumulate_digits`] for an integer part: its first [`SHORT_INTEGER_DIGITS`] digits one at a
/// time, the rest eight at a time.
#[inline(always)]
fn accumulate_integer_digits(input: &[u8], mut i: usize, mantissa: &mut u64) -> usize {
    for _ in 0..SHORT_INTEGER_DIGITS {
        match input.get(i) {
            Some(&d) if d.is_ascii_digit() => {
                *mantissa = mantissa.wrapping_mul(10).wrapping_add(u64::from(d - b'0'));
                i += 1;
            }
            _ => return i,
        }
    }
    accumulate_digits(input, i, mantissa)
}

/// Reads decimal digits from `i` into `mantissa` (wrapping; the caller counts digits) and returns
/// the index after the last digit. Eight bytes per step: the run of digits at the start of the
/// word is found by one lane test and its value computed in the lanes.
#[inline]
fn accumulate_digits(input: &[u8], mut i: usize, mantissa: &mut u64) -> usize {
    while let Some(chunk) = input.get(i..i + 8) {
        let word = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
        let run = leading_digit_bytes(word);
        if run == 0 {
            return i;
        }
        // The run's digit values, moved up to the top lanes; the lanes below them read as
        // leading zeros. (Subtracting '0' borrows only out of the non-digit lanes after the run,
        // towards the higher lanes the shift discards.)
        let lanes = word.wrapping_sub(ONES * u64::from(b'0')) << (8 * (8 - run));
        *mantissa = mantissa
            .wrapping_mul(POWERS_OF_TEN_TO_EIGHT[run])
            .wrapping_add(u64::from(lanes_value(lanes)));
        i += run;
        if run < 8 {
            return i;
        }
    }
    // Fewer than eight bytes left in the input: one at a time.
    while let Some(&d) = input.get(i) {
        let digit = d.wrapping_sub(b'0');
        if digit > 9 {
            break;
        }
        *mantissa = mantissa.wrapping_mul(10).wrapping_add(u64::from(digit));
        i += 1;
    }
    i
}

/// How many of the eight bytes of `word` (the first in the lowest lane) are ASCII digits before
/// the first that is not, 8 when all are.
#[inline]
fn leading_digit_bytes(word: u64) -> usize {
    // A byte is a digit when its high nibble is 3 and adding 6 leaves it 3 (0x30..=0x39). The
    // addition carries out of a lane only from a byte of 0xFA or more, itself not a digit, into
    // the lanes above it, so the lowest flagged lane is always exact.
    let non_digits = ((word & (ONES * 0xF0)) ^ (ONES * 0x30))
        | ((word.wrapping_add(ONES * 6) & (ONES * 0xF0)) ^ (ONES * 0x30));
    (non_digits.trailing_zeros() / 8) as usize
}

/// The number whose eight decimal digits are the byte lanes of `digits` (each 0..=9, the lowest
/// lane the most significant): pairs of digits, then pairs of pairs, combined by two
/// multiplications.
#[inline]
fn lanes_value(digits: u64) -> u32 {
    // Byte lanes 0, 2, 4, 6 now hold two-digit values (10 × first + second; no carry, at most 99).
    let pairs = digits * 10 + (digits >> 8);
    const LANES_0_AND_4: u64 = 0x0000_00FF_0000_00FF;
    // (p0 × 100 + p1) in the low half and p0 × 10^6 + p1 × 10^4 + p2 × 100 + p3 in the high half.
    // (What would pass bit 63 is not wanted: the products wrap.)
    let value = ((pairs & LANES_0_AND_4).wrapping_mul(100 + (1_000_000 << 32)))
        .wrapping_add(((pairs >> 16) & LANES_0_AND_4).wrapping_mul(1 + (10_000 << 32)))
        >> 32;
    value as u32
}

/// The index of the first byte at or after `i` that is not a space.
#[inline]
fn skip_spaces(input: &[u8], mut i: usize) -> usize {
    const SPACES: u64 = 0x2020_2020_2020_2020;
    while let Some(chunk) = input.get(i..i + 8) {
        // Zero bytes where the spaces are; the lowest set bit is in the first other byte.
        let others = u64::from_le_bytes(chunk.try_into().expect("eight bytes")) ^ SPACES;
        if others != 0 {
            return i + (others.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while input.get(i) == Some(&b' ') {
        i += 1;
    }
    i
}

/// The number for an integer token `input[start..end]` whose `digits` digits (without the sign)
/// were accumulated into `mantissa`: exact as u64/i64 where it fits, else kept as text.
#[inline(always)]
fn integer_number(
    input: &[u8],
    start: usize,
    end: usize,
    negative: bool,
    mantissa: u64,
    digits: usize,
) -> Number {
    let magnitude = match digits {
        // Nineteen digits always fit in a u64, so the wrapping accumulation was exact.
        0..=19 => Some(mantissa),
        20 => ascii(input, end - digits, end).parse::<u64>().ok(),
        _ => None,
    };
    match (magnitude, negative) {
        (Some(m), false) => Number::from(m),
        (Some(m), true) if m != 0 && m <= 1u64 << 63 => Number::from((m as i64).wrapping_neg()),
        // -0, or an integer beyond 64 bits: keep the text so it is written back unchanged.
        _ => Number::verbatim(ascii(input, start, end)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::text::INLINE_CAPACITY as TEXT_INLINE_CAPACITY;
    use crate::json::value::KEY_INLINE_CAPACITY;

    fn err(input: &str) -> (String, usize, usize, usize) {
        let e = parse(input.as_bytes()).unwrap_err();
        (e.message(), e.offset(), e.line(), e.column())
    }

    #[test]
    fn errors_name_what_was_expected_and_where() {
        let cases: &[(&str, &str, usize, usize, usize)] = &[
            ("", "unexpected end of input, expected a value", 0, 1, 1),
            ("[1,]", "trailing comma before the closing bracket", 3, 1, 4),
            ("{\"a\" 1}", "expected ':' after an object key", 5, 1, 6),
            ("[1 2]", "expected ',' or ']' in an array", 3, 1, 4),
            (
                "{\"a\":1 \"b\"}",
                "expected ',' or '}' in an object",
                7,
                1,
                8,
            ),
            ("{1:2}", "expected a string object key", 1, 1, 2),
            ("[\n  tru]", "expected a value", 7, 2, 6),
            ("\"abc", "unexpected end of input inside a string", 4, 1, 5),
            (
                "[1",
                "unexpected end of input inside an array, expected ',' or ']'",
                2,
                1,
                3,
            ),
            ("01", "unexpected characters after the value", 1, 1, 2),
            ("1.", "invalid number", 2, 1, 3),
            ("-", "unexpected end of input, expected a value", 1, 1, 2),
            ("\"\\x\"", "invalid escape in a string", 1, 1, 2),
            (
                "\"\\u12G4\"",
                "invalid \\u escape (expected four hex digits)",
                1,
                1,
                2,
            ),
            (
                "\"\\udc00\"",
                "\\u escape is an unpaired surrogate",
                1,
                1,
                2,
            ),
            (
                "\"a\tb\"",
                "control character in a string (must be escaped)",
                2,
                1,
                3,
            ),
            (
                "\"\u{e9}\"x",
                "unexpected characters after the value",
                4,
                1,
                5,
            ),
        ];
        for &(input, message, offset, line, column) in cases {
            assert_eq!(
                err(input),
                (message.to_string(), offset, line, column),
                "input {input:?}"
            );
        }
    }

    #[test]
    fn invalid_utf8_is_located() {
        let e = parse(b"[\"ab\xff\"]").unwrap_err();
        assert_eq!((e.message().as_str(), e.offset()), ("invalid UTF-8", 4));
        let e = parse(b"[\"a\\n\xc3\"]").unwrap_err();
        assert_eq!((e.message().as_str(), e.offset()), ("invalid UTF-8", 5));
    }

    #[test]
    fn invalid_utf8_anywhere_leaves_errors_where_they_were() {
        // The whole-input check only chooses how strings are checked: a syntax error before the
        // bad byte is still the error, and the bad byte is still found inside its string.
        let e = parse(b"[1 2, \"\xff\"]").unwrap_err();
        assert_eq!(e.offset(), 3);
        assert_ne!(e.message(), "invalid UTF-8");
        let e = parse(b"[\"\xc3\xa9\", \"ok\", \"x\xe9y\"]").unwrap_err();
        assert_eq!((e.message().as_str(), e.offset()), ("invalid UTF-8", 15));
        let v = parse("[\"\u{e9}\", {\"\u{4e2d}\": \"\u{1f600}\"}]".as_bytes()).unwrap();
        assert_eq!(v.as_array().unwrap()[0].as_str(), Some("\u{e9}"));
    }

    #[test]
    fn depth_limit_is_an_error_at_the_edge() {
        let ok = "[".repeat(DEFAULT_MAX_DEPTH) + &"]".repeat(DEFAULT_MAX_DEPTH);
        assert!(parse(ok.as_bytes()).is_ok());
        let deep = "[".repeat(DEFAULT_MAX_DEPTH + 1) + &"]".repeat(DEFAULT_MAX_DEPTH + 1);
        let e = parse(deep.as_bytes()).unwrap_err();
        assert!(e.is_depth_limit());
        assert_eq!(e.offset(), DEFAULT_MAX_DEPTH);
        let objects = "{\"a\":".repeat(DEFAULT_MAX_DEPTH + 1);
        assert!(parse(objects.as_bytes()).unwrap_err().is_depth_limit());
        // A huge nesting attempt is refused quickly, without recursion.
        let huge = "[".repeat(10_000_000);
        assert!(parse(huge.as_bytes()).unwrap_err().is_depth_limit());
    }

    /// The smallest `max_tree_bytes` with which `input` parses (found by bisection).
    fn least_tree_budget(input: &str) -> usize {
        let with = |max_tree_bytes| {
            parse_with_limits(
                input.as_bytes(),
                Limits {
                    max_tree_bytes,
                    ..Limits::default()
                },
            )
        };
        let (mut low, mut high) = (0, 1 << 40);
        while low < high {
            let mid = low + (high - low) / 2;
            if with(mid).is_ok() {
                high = mid;
            } else {
                low = mid + 1;
            }
        }
        // At the edge: the same tree as without a limit; one byte less, the memory error.
        assert_eq!(
            with(low).map(|v| crate::json::write::to_string(&v)),
            parse(input.as_bytes()).map(|v| crate::json::write::to_string(&v))
        );
        if low > 0 {
            let e = with(low - 1).unwrap_err();
            assert!(
                e.is_memory_limit() && !e.is_depth_limit() && !e.is_eof(),
                "{e}"
            );
            assert_eq!(
                e.message(),
                format!(
                    "the parsed value would take more than the limit of {} bytes of memory",
                    low - 1
                )
            );
        }
        low
    }

    #[test]
    fn the_tree_budget_is_an_error_at_the_edge_and_counts_what_is_allocated() {
        // Scalars without text and empty containers allocate nothing.
        for input in ["0", "null", "[]", "{}", "\"\"", "1.5"] {
            assert_eq!(least_tree_budget(input), 0, "{input}");
        }
        assert_eq!(least_tree_budget("\"abc\""), 32);
        assert_eq!(least_tree_budget("123456789012345678901234567890"), 48);
        // An array of n scalars: its own buffer (32 bytes a value) and the parser's element buffer
        // at its doubled capacity, twice (with the buffers it replaced while growing).
        let value = std::mem::size_of::<Value>();
        for n in [1, 8, 9, 1000, 100_000] {
            let input = format!("[{}]", vec!["0"; n].join(","));
            let least = least_tree_budget(&input);
            let capacity = n.next_power_of_two().max(8);
            assert!(least >= n * value + capacity * value, "{n}: {least}");
            assert!(least <= 4 * (n * value + capacity * value), "{n}: {least}");
        }
        // Objects: an entry and a key each; nested containers: each one's buffer.
        let objects = format!("{{{}}}", vec![r#""a":{}"#; 1000].join(","));
        let entry = std::mem::size_of::<(String, Value)>();
        assert!(least_tree_budget(&objects) >= 1000 * (entry + 32 + entry));
        let nested = format!("[{}]", vec!["[0]"; 1000].join(","));
        assert!(least_tree_budget(&nested) >= 1000 * (value + 32) + 1024 * value);
        let mixed = r#"{"a": [1, "x", {"b": [null, true, "yy\u00e9"]}], "a": {"c": []}}"#;
        least_tree_budget(mixed);
        // The error stops the parse where the tree passed the limit, not at the end.
        let numbers = format!("[{}]", vec!["0"; 100_000].join(","));
        let e = parse_with_limits(
            numbers.as_bytes(),
            Limits {
                max_tree_bytes: 64 * 1024,
                ..Limits::default()
            },
        )
        .unwrap_err();
        assert!(e.is_memory_limit() && e.offset() < numbers.len() / 4, "{e}");
        // A syntax error before the tree passes the limit is reported as such.
        let e = parse_with_limits(
            b"[0, 0,]",
            Limits {
                max_tree_bytes: 1 << 20,
                ..Limits::default()
            },
        )
        .unwrap_err();
        assert!(!e.is_memory_limit());
    }

    #[test]
    fn tree_budget_decisions_on_short_and_long_keys_are_pinned() {
        // Keys of 0 to 40 bytes (inline and on the heap now; all allocated before keys could be
        // inline), counted as before: the same smallest budget and the same error offsets as
        // when every key was a `String`.
        let keys: Vec<String> = (0..=40).map(|len| "k".repeat(len)).collect();
        let members: Vec<String> = keys
            .iter()
            .enumerate()
            .map(|(i, key)| format!(r#""{key}": {{"id": {i}, "seatCategoryId\u00e9": [{i}, "x"], "a key longer than twenty-two bytes": null}}"#))
            .collect();
        let document = format!("{{{}}}", members.join(", "));
        let least = least_tree_budget(&document);
        let offsets: Vec<usize> = [1, 2, 3, 5, 7]
            .iter()
            .map(|eighths| {
                parse_with_limits(
                    document.as_bytes(),
                    Limits {
                        max_tree_bytes: least * eighths / 8,
                        ..Limits::default()
                    },
                )
                .unwrap_err()
                .offset()
            })
            .collect();
        let small = least_tree_budget(
            r#"{"id": 1, "0123456789012345678912": [], "01234567890123456789123": {"\u00e9": "v"}}"#,
        );
        // Since the buffer escaped strings are decoded in is counted too (48 bytes here, grown
        // twice by `seatCategoryId\u00e9`), the least budget is 48 bytes more, and two of the
        // errors stop inside an escaped key, at the piece that would pass the limit.
        assert_eq!(
            (least, offsets, small),
            (24160, vec![526, 1108, 1508, 3264, 4514], 960)
        );
    }

    #[test]
    fn an_escaped_string_stops_where_it_would_pass_the_limit() {
        // A string of 1 MB decoded from 2 MB of input: with a limit of 64 KiB the parse stops
        // inside it, near where its decoded text reached the limit, instead of decoding it whole
        // first (it stopped at its closing quote, the buffer grown to the whole string).
        let limit = 64 * 1024;
        let limited = |input: &str| {
            parse_with_limits(
                input.as_bytes(),
                Limits {
                    max_tree_bytes: limit,
                    ..Limits::default()
                },
            )
            .unwrap_err()
        };
        let e = limited(&format!("[\"{}\"]", "\\n".repeat(1 << 20)));
        assert!(e.is_memory_limit(), "{e}");
        // Each escape decodes to one byte: the limit is met at about a third of it (the buffer
        // as grown by doubling, and the string's own copy).
        assert!(e.offset() < 2 * limit, "{}", e.offset());
        assert!(e.offset() > limit / 2, "{}", e.offset());
        // Plain runs between escapes are checked as whole pieces.
        let e = limited(&format!("[\"{}\"]", "abcdefgh\\t".repeat(100_000)));
        assert!(e.is_memory_limit() && e.offset() < 2 * limit, "{e}");
        // The least budget of escaped strings, keys and values, is found at its edge, and it
        // counts the decoding buffer: the same text written without escapes (`\/` is `/`) needs
        // less.
        for input in [
            r#""a\/b""#.to_owned(),
            r#"{"k\/y": "v\/w", "k\/y": ["\/", "x\/y"]}"#.to_owned(),
            format!(r#"["{}", "\/"]"#, "x\\/".repeat(1000)),
        ] {
            let least = least_tree_budget(&input);
            let plain = least_tree_budget(&input.replace("\\/", "/"));
            assert!(
                least > plain,
                "{input}: {least} against {plain} without escapes"
            );
        }
        // Escaped strings parsed with a limit give the same tree as without one.
        least_tree_budget(r#"{"k\u00e9y": "v\tw", "k\u00e9y": ["\ud83d\ude00", "x\"y"]}"#);
    }

    #[test]
    fn numbers_keep_what_the_wire_needs() {
        let v = parse(b"[0, -1, 18446744073709551615, -9223372036854775808, 18446744073709551616, -0, 1.5, 1e400, 0.1]").unwrap();
        let a = v.as_array().unwrap();
        assert_eq!(a[0].as_u64(), Some(0));
        assert_eq!(a[1].as_i64(), Some(-1));
        assert_eq!(a[2].as_u64(), Some(u64::MAX));
        assert_eq!(a[3].as_i64(), Some(i64::MIN));
        assert_eq!(a[4].as_u64(), None);
        assert_eq!(a[6].as_f64(), Some(1.5));
        assert_eq!(a[8].as_f64(), Some(0.1));
        assert_eq!(
            crate::json::write::to_string(&v),
            "[0,-1,18446744073709551615,-9223372036854775808,18446744073709551616,-0,1.5,1e400,0.1]"
        );
    }

    #[test]
    fn strings_decode_escapes_and_surrogate_pairs() {
        let v = parse(br#"["a\"b\\c\/d\b\f\n\r\t", "\u00e9\ud83d\ude00", "plain"]"#).unwrap();
        let a = v.as_array().unwrap();
        assert_eq!(a[0].as_str(), Some("a\"b\\c/d\u{8}\u{c}\n\r\t"));
        assert_eq!(a[1].as_str(), Some("\u{e9}\u{1F600}"));
        assert_eq!(a[2].as_str(), Some("plain"));
    }

    #[test]
    fn escaped_strings_reuse_one_buffer_and_keep_their_errors_in_order() {
        // A long escaped string, then shorter ones: each decodes to its own text (the decoding
        // buffer is reused, emptied each time), with non-ASCII runs between escapes.
        let long = format!("{}\\n{}", "\\u00e9x".repeat(40), "\\u4e2d".repeat(30));
        let input = format!(r#"["{long}", "a\tb", "\u00e9中\/", "{long}"]"#);
        let v = parse(input.as_bytes()).unwrap();
        let a = v.as_array().unwrap();
        let decoded_long = format!("{}\n{}", "\u{e9}x".repeat(40), "\u{4e2d}".repeat(30));
        assert_eq!(a[0].as_str(), Some(decoded_long.as_str()));
        assert_eq!(a[1].as_str(), Some("a\tb"));
        assert_eq!(a[2].as_str(), Some("\u{e9}\u{4e2d}/"));
        assert_eq!(a[3], a[0]);
        // In a string with escapes, a bad byte is reported where it is, but only once the string
        // has no other error: a bad escape, a control character or the end of input after it
        // comes first, as before the decoder kept its runs as text.
        let cases: &[(&[u8], &str, usize)] = &[
            (b"[\"a\\n\xffb\"]", "invalid UTF-8", 5),
            (b"[\"a\\n\xc3\\nb\"]", "invalid UTF-8", 5),
            (b"[\"\xe9\\n\xff\"]", "invalid UTF-8", 2),
            (b"[\"a\\n\xffb\\q\"]", "invalid escape in a string", 7),
            (
                b"[\"a\\n\xff\x01\"]",
                "control character in a string (must be escaped)",
                6,
            ),
            (
                b"[\"a\\n\xffb",
                "unexpected end of input inside a string",
                7,
            ),
        ];
        for &(input, message, offset) in cases {
            let e = parse(input).unwrap_err();
            assert_eq!(
                (e.message().as_str(), e.offset()),
                (message, offset),
                "{}",
                String::from_utf8_lossy(input)
            );
        }
    }

    #[test]
    fn text_of_every_length_parses_to_itself() {
        // Keys and string values of 0 to 40 bytes of ASCII, and of two-, three- and four-byte characters after
        // zero or one ASCII byte (so the inline/heap boundary, 22/23 bytes, falls before, inside
        // and after a character), each on the wire as it is and escaped (a key built from
        // decoded text), as keys in an object and in a nested one, and as a string value.
        let characters = ['k', '\u{e9}', '\u{20ac}', '\u{1d11e}', '"', '\\'];
        for character in characters {
            let escaped = match character {
                '"' => "\\\"".to_owned(),
                '\\' => "\\\\".to_owned(),
                _ => character
                    .encode_utf16(&mut [0; 2])
                    .iter()
                    .map(|unit| format!("\\u{unit:04x}"))
                    .collect(),
            };
            for prefix in ["", "k"] {
                for count in 0..=40 {
                    let key = format!("{prefix}{}", character.to_string().repeat(count));
                    let mut wires = vec![format!("{prefix}{}", escaped.repeat(count))];
                    if !matches!(character, '"' | '\\') {
                        wires.push(key.clone());
                    }
                    for wire in wires {
                        let input = format!(
                            r#"{{"{wire}": {count}, "x": [{{"{wire}": true}}], "s": "{wire}"}}"#
                        );
                        let v = parse(input.as_bytes()).unwrap();
                        let m = v.as_object().unwrap();
                        let parsed = m.keys().next().unwrap();
                        assert_eq!(parsed.as_str(), key, "{input}");
                        assert_eq!(parsed.as_bytes(), key.as_bytes());
                        assert_eq!(
                            parsed.is_inline(),
                            key.len() <= KEY_INLINE_CAPACITY,
                            "{key}"
                        );
                        assert_eq!(m.get(&key).and_then(Value::as_u64), Some(count as u64));
                        let inner = &m.get("x").unwrap().as_array().unwrap()[0];
                        assert_eq!(inner.get(&key), Some(&Value::Bool(true)));
                        let Some(Value::String(string)) = m.get("s") else {
                            panic!("{input}: no string value");
                        };
                        assert_eq!(string.as_str(), key, "{input}");
                        assert_eq!(string.is_inline(), key.len() <= TEXT_INLINE_CAPACITY);
                        let text = crate::json::write::to_string(&v);
                        let written = key.replace('\\', "\\\\").replace('"', "\\\"");
                        let expected = format!(
                            r#"{{"{written}":{count},"x":[{{"{written}":true}}],"s":"{written}"}}"#
                        );
                        assert_eq!(text, expected);
                        let mut bytes = Vec::new();
                        crate::json::write::write_compact(&v, &mut bytes);
                        assert_eq!(bytes, expected.as_bytes());
                        assert_eq!(parse(text.as_bytes()).unwrap(), v, "{text}");
                    }
                }
            }
        }
    }

    #[test]
    fn objects_keep_order_and_duplicates() {
        let v = parse(br#"{"b":1,"a":2,"b":3}"#).unwrap();
        let m = v.as_object().unwrap();
        assert_eq!(m.keys().collect::<Vec<_>>(), ["b", "a", "b"]);
        assert_eq!(m.get("b").and_then(Value::as_u64), Some(3));
    }

    #[test]
    fn floats_are_correctly_rounded_in_every_token_shape() {
        let mut rng = crate::json::test_rng::TestRng(0x2545_F491_4F6C_DD1D);
        let mut next = move || rng.next();
        for _ in 0..100_000 {
            let digits = |n: u64, r: u64| -> String {
                let s = r.to_string();
                s[..(n as usize).min(s.len())].to_string()
            };
            let int = digits(1 + next() % 12, next());
            let int = int.trim_start_matches('0');
            let int = if int.is_empty() { "0" } else { int };
            let fraction = match next() % 3 {
                0 => String::new(),
                1 => format!(".{}", digits(1 + next() % 19, next())),
                _ => format!(".{}{}", "0".repeat((next() % 30) as usize), next()),
            };
            let exponent = match next() % 3 {
                0 if !fraction.is_empty() => String::new(),
                _ => format!("e{}", (next() % 700) as i64 - 350),
            };
            let sign = if next() % 2 == 0 { "-" } else { "" };
            assert_parses_like_std(&format!("{sign}{int}{fraction}{exponent}"));
        }
    }

    /// A float token parses to `str::parse`'s value, or (beyond f64) is kept as written.
    fn assert_parses_like_std(text: &str) {
        let want: f64 = text.parse().unwrap();
        let got = parse(text.as_bytes()).unwrap();
        if want.is_finite() {
            assert_eq!(
                got.as_f64().map(f64::to_bits),
                Some(want.to_bits()),
                "{text}"
            );
        } else {
            assert_eq!(crate::json::write::to_string(&got), text, "{text}");
        }
    }

    #[test]
    fn long_and_saturated_numbers_fall_back_exactly() {
        let cases = [
            "0.1000000000000000055511151231257827021181583404541015625",
            "2.4703282292062327208828439643411068618252990130716238221279284125033775363510437593264991818081799618989828234772285886546332835517796989819938739800539093906315035659515570226392290858392449105184435931802849936536152500319370457678249219365623669863658480757001585769269903706311928279558551332927834338409351978015531246597263579574622766465272827220056374006485499977096599470454020828166226237857393450736339007967761930577506740176324673600968951340535537458516661134223766678604162159680461914467291840300530057530849048765391711386591646239524912623653881879636239373280423891018672348497668235089863388587925628302755995657524455507255189313690836254779186948667994968324049705821028513185451396213837722826145437693412532098591327667236328125e-324",
            "1e-99999999999999999999",
            "1e99999999999999999999",
            "0.0000000000000000000000000000001e31",
            "123456789012345678901234567890e-30",
        ];
        for text in cases {
            assert_parses_like_std(text);
        }
    }

    #[test]
    fn fuzz_crash_integer_part_wrapping_to_zero_is_not_mistaken_for_zero() {
        // 184467440737095516160 = 10 * 2^64: the wrapping accumulator reads it as 0, which once made
        // this number parse as 0.1 (found by the json_parse fuzz target).
        assert_parses_like_std("184467440737095516160.1");
        assert_parses_like_std("-368934881474191032320e-1");
    }

    #[test]
    fn integers_are_exact_at_the_64_bit_edges() {
        for (text, unsigned, signed) in [
            (
                "9999999999999999999",
                Some(9_999_999_999_999_999_999u64),
                None,
            ),
            ("18446744073709551615", Some(u64::MAX), None),
            ("-9223372036854775808", None, Some(i64::MIN)),
            ("-9223372036854775807", None, Some(i64::MIN + 1)),
            ("9223372036854775807", Some(i64::MAX as u64), Some(i64::MAX)),
        ] {
            let v = parse(text.as_bytes()).unwrap();
            assert_eq!(
                (v.as_u64(), v.as_i64().filter(|_| signed.is_some())),
                (unsigned, signed),
                "{text}"
            );
        }
        for text in [
            "18446744073709551616",
            "99999999999999999999",
            "-9223372036854775809",
            "-0",
        ] {
            let v = parse(text.as_bytes()).unwrap();
            assert_eq!((v.as_u64(), v.as_i64()), (None, None), "{text}");
            assert_eq!(crate::json::write::to_string(&v), text);
        }
    }

    /// The value of the eight bytes at `i` when all eight are ASCII digits.
    fn eight_digits_at(input: &[u8], i: usize) -> Option<u32> {
        let chunk = input.get(i..i + 8)?;
        let word = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
        (leading_digit_bytes(word) == 8).then(|| lanes_value(word - ONES * u64::from(b'0')))
    }

    #[test]
    fn digit_runs_of_every_length_accumulate_like_one_digit_at_a_time() {
        let mut rng = crate::json::test_rng::TestRng(0x5851_F42D_4C95_7F2D);
        // Bytes that end a run: near misses on both sides of '0'..='9', and bytes whose lane
        // arithmetic carries or borrows into the next lane.
        let stops = [
            b'/', b':', b'.', b'e', b',', b']', b' ', 0, 0x3F, 0xB0, 0xB9, 0xFA, 0xFF,
        ];
        for _ in 0..200_000 {
            let digits = (rng.next() % 26) as usize;
            let mut text: Vec<u8> = (0..digits)
                .map(|_| b'0' + (rng.next() % 10) as u8)
                .collect();
            if rng.next() % 8 != 0 {
                text.push(stops[(rng.next() % stops.len() as u64) as usize]);
            }
            for _ in 0..rng.next() % 12 {
                text.push(rng.next() as u8);
            }
            let start = (rng.next() % 3) as usize;
            let text = [&b"-0."[..start], &text].concat();
            let (mut want, mut end) = (7u64, start);
            while let Some(d) = text.get(end).filter(|d| d.is_ascii_digit()) {
                want = want.wrapping_mul(10).wrapping_add(u64::from(d - b'0'));
                end += 1;
            }
            for accumulate in [accumulate_digits, accumulate_integer_digits] {
                let mut got = 7u64;
                assert_eq!(accumulate(&text, start, &mut got), end, "{text:?}");
                assert_eq!(got, want, "{text:?}");
            }
        }
    }

    #[test]
    fn eight_digit_chunks_agree_with_one_digit_at_a_time() {
        let mut rng = crate::json::test_rng::TestRng(0x9E37_79B9_7F4A_7C15);
        for _ in 0..200_000 {
            let mut chunk: [u8; 8] = format!("{:08}", rng.next() % 100_000_000)
                .as_bytes()
                .try_into()
                .unwrap();
            // Sometimes one byte is a near miss: just outside '0'..='9', or a digit's neighbour.
            if rng.next() % 2 == 0 {
                let at = (rng.next() % 8) as usize;
                chunk[at] = [b'/', b':', b'.', b'e', 0x30 + 10, 0xB0, 0x39 + 0x80, 0]
                    [(rng.next() % 8) as usize];
            }
            let want = chunk
                .iter()
                .all(u8::is_ascii_digit)
                .then(|| std::str::from_utf8(&chunk).unwrap().parse::<u32>().unwrap());
            assert_eq!(eight_digits_at(&chunk, 0), want, "{chunk:?}");
        }
        for byte in 0..=255u8 {
            let mut chunk = *b"12345678";
            for at in 0..8 {
                let saved = chunk[at];
                chunk[at] = byte;
                let want = byte
                    .is_ascii_digit()
                    .then(|| std::str::from_utf8(&chunk).unwrap().parse::<u32>().unwrap());
                assert_eq!(eight_digits_at(&chunk, 0), want, "{chunk:?}");
                chunk[at] = saved;
            }
        }
        assert_eq!(eight_digits_at(b"1234567", 0), None);
    }

    #[test]
    fn whitespace_runs_are_skipped_to_the_same_byte() {
        for spaces in 0..40 {
            for tail in ["]", "x", "\n]", "\t ]", ""] {
                let text = format!("[0{}{tail}", " ".repeat(spaces));
                let want = 2
                    + spaces
                    + tail
                        .find(|c: char| !c.is_ascii_whitespace())
                        .unwrap_or(tail.len());
                let mut scanner = Scanner::new(text.as_bytes());
                scanner.pos = 2;
                scanner.skip_whitespace();
                assert_eq!(scanner.pos, want, "{text:?}");
            }
        }
    }

    #[test]
    fn numbers_read_eight_digits_at_a_time_keep_their_value() {
        for text in [
            "12345678",
            "123456789012345678",
            "1234567890123456789",
            "0.12345678",
            "0.000000001234567890123",
            "0.00000000000000000000000000000000000000001",
            "1.00000000000000000000001",
            "123456781234567812345678.5",
            "-0.1234567812345678e10",
            "98765432109876543210",
        ] {
            assert_parses_like_std(text);
            // With bytes after it, so the digits are read eight at a time up to the number's end.
            let want: f64 = text.parse().unwrap();
            let inside = parse(format!("[{text},{text}   ]").as_bytes()).unwrap();
            for v in inside.as_array().unwrap().iter() {
                assert_eq!(v.as_f64().map(f64::to_bits), Some(want.to_bits()), "{text}");
            }
        }
    }

    #[test]
    fn string_scan_finds_stops_at_every_offset() {
        for len in 0..40 {
            for stop in ["\"", "\\n", "\n", "\u{1f}"] {
                let body = "a\u{e9}".repeat(len / 2) + &"b".repeat(len % 2);
                let text = format!("[\"{body}{stop}tail\"]");
                let result = parse(text.as_bytes());
                match stop {
                    "\"" => assert!(result.is_err(), "{text:?}"),
                    "\\n" => {
                        let v = result.unwrap();
                        assert_eq!(
                            v.as_array().unwrap()[0].as_str(),
                            Some(format!("{body}\ntail").as_str())
                        );
                    }
                    _ => {
                        let e = result.unwrap_err();
                        assert_eq!(e.offset(), 2 + body.len(), "{text:?}");
                    }
                }
            }
        }
    }
}
