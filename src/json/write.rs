//! The two JSON writers: compact (the wire) and pretty (the text form tool values are returned in).
//!
//! Both walk the value with an explicit stack, so deeply nested values cannot overflow the call stack.
//! Floats are written the way Python's `repr` writes them (shortest round-trip digits, `1e-05`,
//! `1.5e+16`, `12.0`), which keeps tool texts byte-identical with the reference implementation.
//! Numbers are laid out without `fmt`: sixteen digits made at once in the byte lanes of a `u128`
//! (multiplications and shifts, no division loop), moved into place in registers and stored sixteen
//! bytes at a time straight into the output.
//!
//! The writers append to any [`Sink`]: a `String`, or a `Vec<u8>` (the wire's bytes, which a server
//! writes its replies into). Appending bytes to a `String` in safe Rust costs a UTF-8 check of them,
//! which for a number's few bytes costs about as much as laying the number out, and for a `Vec<u8>`
//! nothing. So the `to_*` functions write a document as bytes while its strings are ASCII and check
//! it once at the end, a word at a time ([`text_of`]); from the first non-ASCII string on they go on
//! into the `String` those bytes become, appending the value's strings as they are (a check goes
//! byte by byte over non-ASCII text). Into a `String`, an array of numbers (or of short rows of them:
//! the coordinate rings of GeoJSON) is laid out in a byte buffer and appended with one check.

use super::scan::find_string_stop;
use super::shortest::{shortest_decimal, Decimal, SMALLEST_LEADING};
use super::text::Text;
use super::value::{Key, Map, Number, Value, N};

/// Where the writers append text: a `String` (the ASCII they make is checked as UTF-8 on its way in,
/// as safe Rust requires), or a `Vec<u8>` (nothing is checked; everything the writers append is
/// UTF-8: the value's own strings and ASCII they make).
pub trait Sink: sealed::Append {}

impl Sink for String {}
impl Sink for Vec<u8> {}

mod sealed {
    use super::{Text, NUMBER_ROOM};

    /// What the writers need of a [`Sink`](super::Sink); sealed, so that only the writers append.
    pub trait Append {
        /// Whether the sink takes `text` (a string or key of the value, UTF-8); when it does not,
        /// the writers stop before writing any of it.
        fn takes(&mut self, _text: &[u8]) -> bool {
            true
        }
        fn push_str(&mut self, s: &str);
        /// How many bytes the sink holds.
        fn held(&self) -> usize;
        /// Appends `text` (a key or a string value), which needs no escaping.
        fn push_text(&mut self, text: &Text) {
            match text.as_heap_str() {
                Some(text) => self.push_str(text),
                None => self.push_utf8(text.as_bytes()),
            }
        }
        /// Appends `text`, known to be UTF-8 (a run of a short [`Text`]'s bytes): a `String`
        /// checks it, as safe Rust requires; a byte sink copies it.
        fn push_utf8(&mut self, text: &[u8]);
        /// Appends one ASCII byte.
        fn push_ascii(&mut self, b: u8);
        /// Appends the ASCII text `lay` writes at the start of a window of [`NUMBER_ROOM`] bytes,
        /// answering its length (what it writes past that is dropped).
        fn push_laid_out(&mut self, lay: impl FnOnce(&mut [u8; NUMBER_ROOM]) -> usize);
        /// Appends the first `count` byte lanes of `lanes` (the lowest first), all ASCII.
        fn push_ascii_lanes(&mut self, lanes: u128, count: usize);
        /// Appends the ASCII text `write` appends to a byte buffer (the sink itself when it is
        /// one, else `scratch`, emptied first), if `write` answers true; answers what it answers,
        /// and when that is false the sink is as it was.
        fn push_ascii_run(
            &mut self,
            scratch: &mut Vec<u8>,
            write: impl FnOnce(&mut Vec<u8>) -> bool,
        ) -> bool;
    }

    impl Append for String {
        fn push_str(&mut self, s: &str) {
            String::push_str(self, s);
        }

        fn push_utf8(&mut self, text: &[u8]) {
            String::push_str(self, std::str::from_utf8(text).expect("text is UTF-8"));
        }

        fn held(&self) -> usize {
            self.len()
        }

        fn push_ascii(&mut self, b: u8) {
            debug_assert!(b.is_ascii());
            self.push(char::from(b));
        }

        #[inline]
        fn push_laid_out(&mut self, lay: impl FnOnce(&mut [u8; NUMBER_ROOM]) -> usize) {
            let mut text = [0u8; NUMBER_ROOM];
            let len = lay(&mut text);
            String::push_str(
                self,
                std::str::from_utf8(&text[..len]).expect("number text is ASCII"),
            );
        }

        #[inline]
        fn push_ascii_lanes(&mut self, lanes: u128, count: usize) {
            let bytes = lanes.to_le_bytes();
            String::push_str(
                self,
                std::str::from_utf8(&bytes[..count]).expect("ASCII lanes"),
            );
        }

        fn push_ascii_run(
            &mut self,
            scratch: &mut Vec<u8>,
            write: impl FnOnce(&mut Vec<u8>) -> bool,
        ) -> bool {
            scratch.clear();
            if !write(scratch) {
                return false;
            }
            String::push_str(
                self,
                std::str::from_utf8(scratch).expect("only ASCII is written"),
            );
            true
        }
    }

    impl Append for Vec<u8> {
        fn push_str(&mut self, s: &str) {
            self.extend_from_slice(s.as_bytes());
        }

        fn push_utf8(&mut self, text: &[u8]) {
            self.extend_from_slice(text);
        }

        fn held(&self) -> usize {
            self.len()
        }

        /// Short text by a copy of its whole inline buffer, cut back to the text: a copy of a
        /// fixed size is a few moves, where one of the text's length calls `memcpy` (a fifth of
        /// the time of writing citm_catalog.json, with its 25,869 keys, went to `memcpy`).
        #[inline]
        fn push_text(&mut self, text: &Text) {
            match text.inline_buffer() {
                Some((buffer, len)) => {
                    let at = self.len();
                    self.extend_from_slice(buffer);
                    self.truncate(at + len);
                }
                None => self.extend_from_slice(text.as_bytes()),
            }
        }

        fn push_ascii(&mut self, b: u8) {
            debug_assert!(b.is_ascii());
            self.push(b);
        }

        /// Lays the text out in place: the window is the vector's next [`NUMBER_ROOM`] bytes
        /// (zeroed by three fixed-size stores), cut back to the text's length.
        #[inline]
        fn push_laid_out(&mut self, lay: impl FnOnce(&mut [u8; NUMBER_ROOM]) -> usize) {
            let at = self.len();
            self.extend_from_slice(&[0; NUMBER_ROOM]);
            let window = self[at..]
                .first_chunk_mut::<NUMBER_ROOM>()
                .expect("NUMBER_ROOM bytes were just appended");
            let len = lay(window);
            self.truncate(at + len);
        }

        #[inline]
        fn push_ascii_lanes(&mut self, lanes: u128, count: usize) {
            self.extend_from_slice(&lanes.to_le_bytes()[..count]);
        }

        fn push_ascii_run(
            &mut self,
            _scratch: &mut Vec<u8>,
            write: impl FnOnce(&mut Vec<u8>) -> bool,
        ) -> bool {
            let start = self.len();
            if write(self) {
                return true;
            }
            self.truncate(start);
            false
        }
    }
}

use sealed::Append;

/// A sink for [`text_of`] that stops the walk at a string it does not take: with `ASCII_ONLY`, a
/// byte sink that takes ASCII strings while it holds less than `room` bytes (while all of its
/// text is ASCII, the one UTF-8 check of it goes a word at a time); without, a `String` sink that
/// takes one string (one that is not ASCII, or the one a full byte sink stopped at) and stops at
/// the next, after which the text goes on as checked bytes.
struct Segment<'s, S, const ASCII_ONLY: bool> {
    sink: &'s mut S,
    /// With `ASCII_ONLY`: the size past which the sink takes no further string.
    room: usize,
    /// Without `ASCII_ONLY`: whether the one string was taken.
    taken: bool,
}

impl<'s, S> Segment<'s, S, true> {
    fn ascii(sink: &'s mut S, room: usize) -> Self {
        Segment {
            sink,
            room,
            taken: false,
        }
    }
}

impl<'s, S> Segment<'s, S, false> {
    fn one_string(sink: &'s mut S) -> Self {
        Segment {
            sink,
            room: 0,
            taken: false,
        }
    }
}

impl<S: Append, const ASCII_ONLY: bool> Append for Segment<'_, S, ASCII_ONLY> {
    #[inline]
    fn takes(&mut self, text: &[u8]) -> bool {
        if ASCII_ONLY {
            text.is_ascii() && self.sink.held() < self.room
        } else {
            !std::mem::replace(&mut self.taken, true)
        }
    }

    #[inline]
    fn held(&self) -> usize {
        self.sink.held()
    }

    #[inline]
    fn push_text(&mut self, text: &Text) {
        self.sink.push_text(text);
    }

    #[inline]
    fn push_str(&mut self, s: &str) {
        self.sink.push_str(s);
    }

    #[inline]
    fn push_utf8(&mut self, text: &[u8]) {
        self.sink.push_utf8(text);
    }

    #[inline]
    fn push_ascii(&mut self, b: u8) {
        self.sink.push_ascii(b);
    }

    #[inline]
    fn push_laid_out(&mut self, lay: impl FnOnce(&mut [u8; NUMBER_ROOM]) -> usize) {
        self.sink.push_laid_out(lay);
    }

    #[inline]
    fn push_ascii_lanes(&mut self, lanes: u128, count: usize) {
        self.sink.push_ascii_lanes(lanes, count);
    }

    #[inline]
    fn push_ascii_run(
        &mut self,
        scratch: &mut Vec<u8>,
        write: impl FnOnce(&mut Vec<u8>) -> bool,
    ) -> bool {
        self.sink.push_ascii_run(scratch, write)
    }
}

/// The compact wire form: no whitespace, non-ASCII kept as UTF-8.
pub fn to_string(value: &Value) -> String {
    text_of(value, Style::Compact, 128)
}

/// Appends the compact wire form of `value` to `out`.
pub fn write_compact(value: &Value, out: &mut impl Sink) {
    write_value(value, out, Style::Compact);
}

/// The compact form with object members sorted by key (code point order; duplicates keep their
/// order): the canonical form the audit log hashes. The same bytes as Python's
/// `json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False)`.
pub fn to_string_sorted(value: &Value) -> String {
    text_of(value, Style::CompactSorted, 128)
}

/// The reference's tool-text form: Python's `json.dumps(v, indent=1, sort_keys=True)` with its
/// default `ensure_ascii`: one space of indent per level, keys sorted by code point, every character
/// outside U+0020..U+007E escaped.
pub fn to_pretty_ascii_sorted(value: &Value) -> String {
    text_of(value, Style::PrettyAsciiSorted, 256)
}

/// Appends the pretty, sorted, ASCII-only form of `value` to `out`.
pub fn write_pretty_ascii_sorted(value: &Value, out: &mut impl Sink) {
    write_value(value, out, Style::PrettyAsciiSorted);
}

#[derive(Clone, Copy, PartialEq)]
pub(super) enum Style {
    Compact,
    CompactSorted,
    PrettyAsciiSorted,
}

/// A container being written: its remaining elements.
enum Open<'a> {
    Array(std::slice::Iter<'a, Value>),
    Object(Entries<'a>),
}

/// An object's entries in writing order: as stored (compact), or sorted by key (sorted and pretty forms).
enum Entries<'a> {
    InOrder(std::slice::Iter<'a, (Key, Value)>),
    Sorted(std::vec::IntoIter<&'a (Key, Value)>),
}

impl<'a> Iterator for Entries<'a> {
    type Item = &'a (Key, Value);
    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Entries::InOrder(iter) => iter.next(),
            Entries::Sorted(iter) => iter.next(),
        }
    }
}

#[inline]
fn object_entries(map: &Map, style: Style) -> Entries<'_> {
    match style {
        Style::Compact => Entries::InOrder(map.entries().iter()),
        Style::CompactSorted | Style::PrettyAsciiSorted => {
            let mut entries: Vec<&(Key, Value)> = map.entries().iter().collect();
            // Stable sort: with duplicate keys the later one is written last, as a dict keeps it.
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Entries::Sorted(entries.into_iter())
        }
    }
}

fn newline_indent(out: &mut impl Append, depth: usize) {
    out.push_ascii(b'\n');
    for _ in 0..depth {
        out.push_ascii(b' ');
    }
}

pub(super) fn write_value(root: &Value, out: &mut impl Append, style: Style) {
    let finished = Walk::new(root, style).run(out);
    debug_assert!(finished, "only an ASCII byte sink stops");
}

/// After the first string that is not ASCII, how many bytes of ASCII text [`text_of`] gathers
/// before it checks them and appends them to the text (at the next string): few enough to be
/// appended from the cache, and not a second copy of a large document's text (on
/// citm_catalog.json, whose first non-ASCII string is near its start, an unbounded buffer put
/// the whole rest of the text in fresh memory a second time: +60% time in page faults).
pub(super) const ASCII_SEGMENT_BYTES: usize = 8 * 1024;

/// `value` as text: written as bytes while its strings are ASCII (so that the ASCII the writer
/// makes, numbers above all, is checked as UTF-8 once, with the whole text, a word at a time);
/// each string or key that is not ASCII is appended to the `String` those bytes become as it is
/// (so that no non-ASCII text of a value is checked, which goes byte by byte), and the ASCII
/// after it again as bytes, checked and appended when the next such string comes, the text ends,
/// or a string or key comes after [`ASCII_SEGMENT_BYTES`] have gathered (the room is looked at
/// only there, so a long run of numbers can go past it) — so that the checks are few and long,
/// not one per key or number: never more than one check of the text.
fn text_of(value: &Value, style: Style, capacity: usize) -> String {
    let mut walk = Walk::new(value, style);
    let mut bytes = Vec::with_capacity(capacity);
    let mut finished = walk.run(&mut Segment::ascii(&mut bytes, usize::MAX));
    let mut text = String::from_utf8(bytes).expect("ASCII bytes");
    let mut bytes = Vec::new();
    while !finished {
        if walk.run(&mut Segment::one_string(&mut text)) {
            break;
        }
        bytes.clear();
        finished = walk.run(&mut Segment::ascii(&mut bytes, ASCII_SEGMENT_BYTES));
        text.push_str(std::str::from_utf8(&bytes).expect("ASCII bytes"));
    }
    text
}

/// A walk over a value, writing it: its state (the open containers, what comes next) is kept
/// here so that a walk a [`Segment`] sink stopped can go on into another sink.
struct Walk<'a> {
    style: Style,
    /// The open containers, innermost last.
    stack: Vec<Open<'a>>,
    /// The value to write next.
    next: Option<&'a Value>,
    /// An object member to write next, its key first.
    member: Option<&'a (Key, Value)>,
    /// Where a numeric array is laid out before it is appended to a `String`.
    scratch: Vec<u8>,
}

impl<'a> Walk<'a> {
    fn new(root: &'a Value, style: Style) -> Walk<'a> {
        Walk {
            style,
            stack: Vec::new(),
            next: Some(root),
            member: None,
            scratch: Vec::new(),
        }
    }

    /// Writes the rest of the value into `out`; false if `out` stopped taking text before the
    /// end (nothing of the string it turned away is written; the walk goes on from it).
    fn run(&mut self, out: &mut impl Append) -> bool {
        let pretty = self.style == Style::PrettyAsciiSorted;
        // The pretty form escapes every non-ASCII character: all its text is ASCII.
        let takes = |out: &mut _, text: &[u8]| pretty || Append::takes(out, text);
        // The state in locals while it runs (fields would be kept in memory), put back on a stop.
        let (mut next, mut member) = (self.next.take(), self.member.take());
        let (stack, scratch) = (&mut self.stack, &mut self.scratch);
        loop {
            if let Some(entry) = member.take() {
                if !takes(out, entry.0.as_bytes()) {
                    self.member = Some(entry);
                    return false;
                }
                write_key(&entry.0, out, pretty);
                next = Some(&entry.1);
            }
            if let Some(value) = next.take() {
                match value {
                    Value::Null => out.push_str("null"),
                    Value::Bool(true) => out.push_str("true"),
                    Value::Bool(false) => out.push_str("false"),
                    Value::Number(n) => write_number(n, out),
                    Value::String(s) if !takes(out, s.as_bytes()) => {
                        self.next = Some(value);
                        return false;
                    }
                    Value::String(s) => write_text(s, out, pretty),
                    Value::Array(a) if a.is_empty() => out.push_str("[]"),
                    Value::Object(m) if m.is_empty() => out.push_str("{}"),
                    // An array of numbers held as primitives, or of short rows of them
                    // (coordinates), is written in one piece; for any other array the guard
                    // writes nothing and is false.
                    Value::Array(a) if !pretty && write_numeric_array(a, out, scratch) => {}
                    Value::Array(a) => {
                        out.push_ascii(b'[');
                        let mut iter = a.iter();
                        if pretty {
                            newline_indent(out, stack.len() + 1);
                        }
                        next = iter.next();
                        stack.push(Open::Array(iter));
                        continue;
                    }
                    Value::Object(m) => {
                        out.push_ascii(b'{');
                        let mut iter = object_entries(m, self.style);
                        if pretty {
                            newline_indent(out, stack.len() + 1);
                        }
                        member = iter.next();
                        debug_assert!(member.is_some(), "non-empty object");
                        stack.push(Open::Object(iter));
                        continue;
                    }
                }
            }
            // The last value is written: continue or close the innermost container.
            let depth = stack.len();
            match stack.last_mut() {
                None => return true,
                Some(Open::Array(iter)) => match iter.next() {
                    Some(v) => {
                        separate(out, pretty, depth);
                        next = Some(v);
                    }
                    None => {
                        stack.pop();
                        close(out, pretty, depth, b']');
                    }
                },
                Some(Open::Object(iter)) => match iter.next() {
                    Some(entry) => {
                        separate(out, pretty, depth);
                        member = Some(entry);
                    }
                    None => {
                        stack.pop();
                        close(out, pretty, depth, b'}');
                    }
                },
            }
        }
    }
}

/// The comma before the next element of a container `depth` deep.
fn separate(out: &mut impl Append, pretty: bool, depth: usize) {
    out.push_ascii(b',');
    if pretty {
        newline_indent(out, depth);
    }
}

/// The end of a container `depth` deep.
fn close(out: &mut impl Append, pretty: bool, depth: usize, bracket: u8) {
    if pretty {
        newline_indent(out, depth - 1);
    }
    out.push_ascii(bracket);
}

fn write_key(key: &Key, out: &mut impl Append, pretty: bool) {
    write_text(key, out, pretty);
    out.push_str(if pretty { ": " } else { ":" });
}

/// Writes a key or a string value as a JSON string literal, every non-ASCII character escaped
/// when `ascii_only`. Inlined: it runs once per key and string, and its caller knows which branch.
#[inline(always)]
fn write_text(text: &Text, out: &mut impl Append, ascii_only: bool) {
    if let Some(long) = text.as_heap_str() {
        write_string(long, out, ascii_only);
    } else if ascii_only {
        // Escaped character by character: that needs the text as a `str`.
        write_string(text.as_str(), out, true);
    } else {
        // As bytes: short text becomes a `str` only through a UTF-8 check, which a byte sink
        // does not need.
        let bytes = text.as_bytes();
        if find_string_stop(bytes, 0) == bytes.len() {
            out.push_ascii(b'"');
            out.push_text(text);
            out.push_ascii(b'"');
        } else {
            write_utf8_string(bytes, out, |out, run| out.push_utf8(&bytes[run]));
        }
    }
}

pub(super) fn write_string(s: &str, out: &mut impl Append, ascii_only: bool) {
    if ascii_only {
        out.push_ascii(b'"');
        write_escaped_ascii(s, out);
        out.push_ascii(b'"');
    } else {
        write_utf8_string(s.as_bytes(), out, |out, run| out.push_str(&s[run]));
    }
}

/// Writes the UTF-8 text `bytes` as a JSON string literal, non-ASCII kept as it is: each run
/// between bytes that need escaping is appended by `push_run` (given the run's range; the runs
/// start and end next to ASCII bytes, so they are whole characters).
#[inline]
fn write_utf8_string<A: Append>(
    bytes: &[u8],
    out: &mut A,
    push_run: impl Fn(&mut A, std::ops::Range<usize>),
) {
    out.push_ascii(b'"');
    let mut run_start = 0;
    loop {
        let stop = find_string_stop(bytes, run_start);
        push_run(out, run_start..stop);
        let Some(&b) = bytes.get(stop) else {
            break;
        };
        write_short_escape_or_u(char::from(b), out);
        run_start = stop + 1;
    }
    out.push_ascii(b'"');
}

/// Lower-case hexadecimal digits, for `\uXXXX` escapes.
const HEX_DIGITS: &[u8; 16] = b"0123456789abcdef";

fn write_short_escape_or_u(c: char, out: &mut impl Append) {
    match c {
        '"' => out.push_str("\\\""),
        '\\' => out.push_str("\\\\"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        '\u{8}' => out.push_str("\\b"),
        '\u{c}' => out.push_str("\\f"),
        _ => {
            let mut units = [0u16; 2];
            for &unit in c.encode_utf16(&mut units).iter() {
                out.push_str("\\u");
                for shift in [12, 8, 4, 0] {
                    out.push_ascii(HEX_DIGITS[usize::from(unit >> shift & 0xF)]);
                }
            }
        }
    }
}

/// Appends `s` as a JSON string literal with Python's `ensure_ascii` escaping (for writers of
/// other Python `json.dumps` layouts, such as the index builder's).
pub fn write_ascii_string(s: &str, out: &mut impl Sink) {
    write_string(s, out, true);
}

/// Python's `ensure_ascii` escaping: printable ASCII stays, everything else is escaped.
fn write_escaped_ascii(s: &str, out: &mut impl Append) {
    let mut run_start = 0;
    for (i, c) in s.char_indices() {
        if (' '..='~').contains(&c) && c != '"' && c != '\\' {
            continue;
        }
        out.push_str(&s[run_start..i]);
        write_short_escape_or_u(c, out);
        run_start = i + c.len_utf8();
    }
    out.push_str(&s[run_start..]);
}

/// Writes a number without going through `fmt` (which costs a formatter per number).
#[inline(always)]
pub(super) fn write_number(n: &Number, out: &mut impl Append) {
    match n.n {
        N::PosInt(u) => write_integer(false, u, out),
        N::NegInt(i) => write_integer(true, i.unsigned_abs(), out),
        N::Float(f) => out.push_laid_out(|text| python_float_window(f, text)),
        // A number no primitive holds: its source text, which may be long.
        N::Verbatim(ref text) => out.push_str(text),
    }
}

#[inline]
fn write_integer(negative: bool, magnitude: u64, out: &mut impl Append) {
    if magnitude < TEN_TO_THE_16 {
        // Nearly every integer in a document: sixteen digit lanes, the leading zeros shifted out.
        if negative {
            out.push_ascii(b'-');
        }
        let (digits, count) = short_integer_digits(magnitude);
        out.push_ascii_lanes(digits, count);
        return;
    }
    out.push_laid_out(|text| {
        text[0] = b'-';
        integer_text(magnitude, text, usize::from(negative))
    });
}

const TEN_TO_THE_16: u64 = 10_000_000_000_000_000;

/// Most elements of an inner array [`write_numeric_array`] takes as a row of numbers.
pub(super) const SHORT_NUMBER_ARRAY: usize = 16;

fn is_number(value: &Value) -> bool {
    matches!(value, Value::Number(_))
}

/// Whether `value` is a number or a short array of them (a coordinate pair, a row).
fn is_number_or_row(value: &Value) -> bool {
    match value {
        Value::Array(row) => row.len() <= SHORT_NUMBER_ARRAY && row.iter().all(is_number),
        value => is_number(value),
    }
}

/// Writes `a` compactly if it is an array of numbers, or of short arrays of them (a coordinate
/// ring, a vector, rows of a matrix), in a loop of its own instead of the general walk's stack, as
/// one run of ASCII (into a `String`, with one UTF-8 check for the whole array, laid out in
/// `scratch`). Answers false, having written nothing, for any other array: one whose first element
/// does not fit is turned away at once, and one that stops fitting later is dropped (checking
/// while writing saves a pass over every number array, and the work lost on the others is at most
/// once their length).
fn write_numeric_array(a: &[Value], out: &mut impl Append, scratch: &mut Vec<u8>) -> bool {
    if !a.first().is_some_and(is_number_or_row) {
        return false;
    }
    out.push_ascii_run(scratch, |bytes| write_numbers(a, bytes))
}

/// `[`, the elements (numbers or rows of them) separated by commas, `]`; false as soon as an
/// element is neither (what was written is then the caller's to drop).
fn write_numbers(elements: &[Value], out: &mut Vec<u8>) -> bool {
    let mut run = NumberRun::new(std::mem::take(out));
    let written = run_numbers(elements, &mut run);
    *out = run.finish();
    written
}

/// [`write_numbers`] into `run`.
#[inline(always)]
fn run_numbers(elements: &[Value], run: &mut NumberRun) -> bool {
    run.byte(b'[');
    for (i, value) in elements.iter().enumerate() {
        let comma = i > 0;
        match value {
            Value::Number(n) => run.number(comma, n),
            Value::Array(row) if row.len() <= SHORT_NUMBER_ARRAY => {
                if comma {
                    run.byte(b',');
                }
                run.byte(b'[');
                for (j, value) in row.iter().enumerate() {
                    let Value::Number(n) = value else {
                        return false;
                    };
                    run.number(j > 0, n);
                }
                run.byte(b']');
            }
            _ => return false,
        }
    }
    run.byte(b']');
    true
}

/// Most bytes of zeros a [`NumberRun`] extends its buffer by when it runs short of room: one
/// `memset` for a few hundred numbers instead of a capacity check, zeroing and a length update for
/// each. It extends by as much as the run has written, at least [`NUMBER_ROOM`] more than needed,
/// so that a short array zeroes little.
const RUN_CHUNK: usize = 4096;

/// Numbers and punctuation laid out in place at the end of a byte buffer, which is kept filled
/// with zeros past `at`, where the text ends, and cut back to `at` by [`NumberRun::finish`]; until
/// then the buffer's bytes past `at` are not part of the text. The run owns the buffer while it
/// writes, so that its length and address can stay in registers across the byte stores.
struct NumberRun {
    buf: Vec<u8>,
    start: usize,
    at: usize,
}

impl NumberRun {
    fn new(buf: Vec<u8>) -> NumberRun {
        let at = buf.len();
        NumberRun { buf, start: at, at }
    }

    /// Makes sure the buffer holds `room` bytes from `at` on.
    #[inline(always)]
    fn ensure(&mut self, room: usize) {
        if self.buf.len() - self.at < room {
            self.grow(room);
        }
    }

    #[cold]
    fn grow(&mut self, room: usize) {
        let written = self.at - self.start;
        let ahead = room + written.clamp(NUMBER_ROOM, RUN_CHUNK);
        self.buf.resize(self.at + ahead, 0);
    }

    /// Appends one ASCII byte.
    #[inline(always)]
    fn byte(&mut self, b: u8) {
        self.ensure(1);
        self.buf[self.at] = b;
        self.at += 1;
    }

    /// Appends a comma if `comma`, then `n`.
    #[inline(always)]
    fn number(&mut self, comma: bool, n: &Number) {
        self.ensure(1 + NUMBER_ROOM);
        self.buf[self.at] = b',';
        self.at += usize::from(comma);
        let window = self.buf[self.at..]
            .first_chunk_mut::<NUMBER_ROOM>()
            .expect("room was ensured");
        self.at += match n.n {
            N::Float(f) => python_float_window(f, window),
            N::PosInt(u) => integer_text(u, window, 0),
            N::NegInt(i) => {
                window[0] = b'-';
                integer_text(i.unsigned_abs(), window, 1)
            }
            N::Verbatim(ref text) => {
                // A number no primitive holds: its source text, which may be long.
                self.buf.truncate(self.at);
                self.buf.extend_from_slice(text.as_bytes());
                self.at = self.buf.len();
                0
            }
        };
    }

    /// The buffer, cut back to the text.
    fn finish(mut self) -> Vec<u8> {
        self.buf.truncate(self.at);
        self.buf
    }
}

/// Room the number writers need: the text and the fixed-size copies that lay it out, which may
/// write past its end (the length cuts them off): at most 34 bytes from where a float starts.
const NUMBER_ROOM: usize = 40;

/// "00" to "99", for writing exponents two digits at a time.
static DIGIT_PAIRS: [u8; 200] = {
    let mut table = [0u8; 200];
    let mut i = 0;
    while i < 100 {
        table[2 * i] = b'0' + (i / 10) as u8;
        table[2 * i + 1] = b'0' + (i % 10) as u8;
        i += 1;
    }
    table
};

/// Writes `n` in decimal at `text[at..]` (`at` at most 1; the window has [`NUMBER_ROOM`] bytes),
/// answering the end.
#[inline]
fn integer_text(n: u64, text: &mut [u8; NUMBER_ROOM], at: usize) -> usize {
    if n >= TEN_TO_THE_16 {
        // The (at most four) digits above the last sixteen first, then those sixteen.
        let (digits, count) = short_integer_digits(n / TEN_TO_THE_16);
        put_sixteen(text, at, digits);
        put_sixteen(text, at + count, sixteen_digits(n % TEN_TO_THE_16));
        return at + count + 16;
    }
    let (digits, count) = short_integer_digits(n);
    put_sixteen(text, at, digits);
    at + count
}

/// `n` (below 10^16) in decimal: its digits in the byte lanes of a `u128`, the first in the lowest,
/// and how many there are (one for zero). The leading zeros are counted in the lanes (zero lanes
/// from the bottom) and shifted out, without a loop or a logarithm.
#[inline]
fn short_integer_digits(n: u64) -> (u128, usize) {
    let lanes = sixteen_digit_lanes(n);
    // The bit above the last lane's digit stops the count at fifteen, so zero keeps its digit.
    let leading_zeros = (lanes | 1 << 127).trailing_zeros() as usize / 8;
    (
        (lanes + ASCII_ZEROS) >> (8 * leading_zeros),
        16 - leading_zeros,
    )
}

/// Writes a finite float as Python's `repr` does: the shortest digits that round-trip (ties to
/// even), in fixed notation when the decimal exponent is in -4..16 (always with a fraction, `12.0`),
/// otherwise `d.ddde±XX` with at least two exponent digits.
pub fn write_python_float(f: f64, out: &mut impl Sink) {
    out.push_laid_out(|text| python_float_window(f, text));
}

/// Stores sixteen bytes (lanes of `bytes`, the lowest first) at `text[at..]`: one fixed-size store,
/// no call to `memcpy`; what lies past the bytes wanted is overwritten or cut off by the caller.
#[inline]
fn put_sixteen(text: &mut [u8], at: usize, bytes: u128) {
    text[at..at + 16].copy_from_slice(&bytes.to_le_bytes());
}

/// Lays `f` out as [`write_python_float`] does at the start of `text`, answering the length. The
/// digits are made sixteen at a time in the byte lanes of a `u128` and moved into place by shifts,
/// then stored sixteen at a time: no per-digit loop, no call, and no bytes read back from memory
/// just written (a load that straddles fresh stores cannot be forwarded from them and waits for
/// them to land).
#[inline(always)]
fn python_float_window(f: f64, text: &mut [u8; NUMBER_ROOM]) -> usize {
    let mut at = 0;
    if f.is_sign_negative() {
        text[at] = b'-';
        at += 1;
    }
    let magnitude = f.abs();
    if magnitude == 0.0 {
        text[at..at + 3].copy_from_slice(b"0.0");
        return at + 3;
    }
    let Decimal {
        leading,
        last,
        exponent,
    } = shortest_decimal(magnitude);
    let lanes = sixteen_digit_lanes(leading);
    // `leading` has sixteen digits, or fifteen after one zero.
    let zero_first = leading < 10 * SMALLEST_LEADING;
    let digits = lanes + ASCII_ZEROS;
    let last_digit = b'0' + last as u8;
    // The significant digits from the first on: sixteen in `head`, the seventeenth in `tail` ('0'
    // when there are only sixteen places after the zero).
    let (head, tail) = if zero_first {
        (digits >> 8 | u128::from(last_digit) << 120, b'0')
    } else {
        (digits, last_digit)
    };
    // How many, without the trailing zeros Python never shows after the first digit (zero lanes
    // from the top of `lanes`).
    let count = if last != 0 {
        17
    } else {
        16 - lanes.leading_zeros() as usize / 8
    } - usize::from(zero_first);
    // The exponent of the first digit, as in d.ddd × 10^point.
    let point = exponent + 16 - i32::from(zero_first);
    if (0..16).contains(&point) {
        // ddd.ddd: the integer digits (the first sixteen stored, the rest overwritten), the point,
        // then the digits after it. For an integer those are its zeros, so that ".0" ends it.
        let int_len = point as usize + 1;
        put_sixteen(text, at, head);
        text[at + int_len] = b'.';
        put_sixteen(text, at + int_len + 1, head >> (8 * int_len - 8) >> 8);
        // The seventeenth digit is one place on, after the point, wherever the point is.
        text[at + 17] = tail;
        return at + (count + 1).max(int_len + 2);
    }
    if (-4..0).contains(&point) {
        // 0.000ddd: at most three zeros after the point, then up to 17 digits.
        let start = at + 1 + point.unsigned_abs() as usize;
        text[at..at + 8].copy_from_slice(b"0.000000");
        put_sixteen(text, start, head);
        text[start + 16] = tail;
        return start + count;
    }
    // d.ddde±XX: the first digit, the point and the others (cut off after the first when it is the
    // only one), then the exponent.
    text[at] = head as u8;
    text[at + 1] = b'.';
    put_sixteen(text, at + 2, head >> 8);
    text[at + 17] = tail;
    at += count + usize::from(count > 1);
    text[at] = b'e';
    text[at + 1] = if point < 0 { b'-' } else { b'+' };
    // A third digit goes first when there is one; otherwise the last two overwrite it.
    let power = point.unsigned_abs() as usize;
    let hundreds = usize::from(power >= 100);
    text[at + 2] = b'0' + (power / 100) as u8;
    let pair = power % 100 * 2;
    text[at + 2 + hundreds..at + 4 + hundreds].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    at + 4 + hundreds
}

/// Sixteen `b'0'`s, to turn digit lanes into ASCII.
const ASCII_ZEROS: u128 = u128::from_le_bytes([b'0'; 16]);

/// `n` (below 10^16) as sixteen digits, zero-padded, in the byte lanes of a `u128` (the first
/// digit in the lowest byte): two halves of eight digits, each split into two quarters of four.
#[inline]
fn sixteen_digit_lanes(n: u64) -> u128 {
    debug_assert!(n < TEN_TO_THE_16);
    let first = n / 100_000_000;
    let second = n - first * 100_000_000;
    u128::from(digits_of_four_digit_lanes(quarters(first)))
        | u128::from(digits_of_four_digit_lanes(quarters(second))) << 64
}

/// `n` (below 10^8) as its last four digits in the lower 32-bit lane of a u64 and its first four in
/// the upper: `n + d × (2^32 - 10^4)` with `d = n / 10^4`, which is `(n × 109951163) >> 40` in
/// that range (109951163 is 2^40 / 10^4 rounded up; the unit test checks the largest number with
/// each quotient, where the excess would show first).
#[inline]
fn quarters(n: u64) -> u64 {
    debug_assert!(n < 100_000_000);
    n + ((n * 109_951_163) >> 40) * ((1 << 32) - 10_000)
}

/// [`sixteen_digit_lanes`] as ASCII.
fn sixteen_digits(n: u64) -> u128 {
    sixteen_digit_lanes(n) + ASCII_ZEROS
}

/// `n` (below 10^8) as eight digits in the byte lanes of one u64 (the most significant digit in
/// the lowest byte).
#[cfg(test)]
fn eight_digit_lanes(n: u32) -> u64 {
    digits_of_four_digit_lanes(quarters(u64::from(n)))
}

/// Two numbers below 10^4 in the 32-bit lanes of a u64 (the first in the upper lane) as eight
/// digits in its byte lanes, the first digit in the lowest byte. Each lane is split into two
/// 2-digit lanes, each of those into two digits: the quotient `d` of a lane `v` comes from a
/// multiply and shift that divides exactly in the lane's range (the unit test checks every value
/// of each lane), and `v + d × (2^w - divisor)` leaves the remainder in the lower half of the lane
/// and the quotient in the upper (w its width), one multiplication for both; no lane carries into
/// its neighbour. The digits come out last first, and one byte swap puts them in order.
#[inline]
fn digits_of_four_digit_lanes(fours: u64) -> u64 {
    const LOW_7_BITS_OF_32: u64 = 0x0000_007F_0000_007F;
    const LOW_4_BITS_OF_16: u64 = 0x000F_000F_000F_000F;
    // v / 100 for v < 10^4 is (v × 10486) >> 20.
    let hundreds = ((fours * 10_486) >> 20) & LOW_7_BITS_OF_32;
    let pairs = fours + hundreds * (0x1_0000 - 100);
    // w / 10 for w < 100 is (w × 103) >> 10.
    let tens = ((pairs * 103) >> 10) & LOW_4_BITS_OF_16;
    (pairs + tens * (0x100 - 10)).swap_bytes()
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// `f` written into a `String` and into bytes: the same text.
    pub(crate) fn py(f: f64) -> String {
        let mut s = String::new();
        write_python_float(f, &mut s);
        let mut bytes = b"x".to_vec();
        write_python_float(f, &mut bytes);
        assert_eq!(&bytes[1..], s.as_bytes(), "{f:e}");
        s
    }

    /// The compact form written into a `String` and, after some text, into bytes: the same text.
    pub(crate) fn compact(v: &Value) -> String {
        let text = to_string(v);
        let mut bytes = b"before".to_vec();
        write_compact(v, &mut bytes);
        assert_eq!(&bytes[6..], text.as_bytes());
        text
    }

    #[test]
    fn floats_print_as_python_repr() {
        let cases: &[(f64, &str)] = &[
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (12.0, "12.0"),
            (1.5, "1.5"),
            (0.1, "0.1"),
            (1.234567, "1.234567"),
            (1e-5, "1e-05"),
            (0.0001, "0.0001"),
            (1.5e16, "1.5e+16"),
            (1e16, "1e+16"),
            (9999999999999998.0, "9999999999999998.0"),
            (123456789.125, "123456789.125"),
            (1e300, "1e+300"),
            (-2.5e-7, "-2.5e-07"),
            (5e-324, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
        ];
        for &(f, want) in cases {
            assert_eq!(py(f), want, "{f:e}");
        }
    }

    /// [`eight_digit_lanes`] as ASCII.
    fn eight_digits(n: u32) -> [u8; 8] {
        (eight_digit_lanes(n) + u64::from_le_bytes([b'0'; 8])).to_le_bytes()
    }

    #[test]
    fn eight_digits_is_exact_for_every_lane_value() {
        // Every 4-digit lane value in both lanes (which covers every 2-digit and 1-digit lane).
        // (The quotient by 10^4 is over-estimated by less than one part in 2^40, so the largest
        // number with each quotient, v × 10^4 + 9999, is where it would fail first.)
        for v in 0..10_000u32 {
            for n in [v, v * 10_000, v * 10_000 + (9_999 - v), v * 10_000 + 9_999] {
                assert_eq!(eight_digits(n), *format!("{n:08}").as_bytes(), "{n}");
            }
        }
        for n in [0, 1, 99_999_999, 10_000_000, 12_345_678] {
            assert_eq!(eight_digits(n), *format!("{n:08}").as_bytes());
        }
        let mut rng = crate::json::test_rng::TestRng(0x6A09_E667_F3BC_C908);
        let tens = (0..16).map(|e| 10u64.pow(e));
        for n in tens
            .clone()
            .chain(tens.map(|p| p - 1))
            .chain([0, 1 << 53, 120_000_000, 5_000_000_000_000_000])
            .chain((0..10_000).map(|_| (rng.next() % TEN_TO_THE_16) >> (rng.next() % 54)))
        {
            assert_eq!(
                sixteen_digits(n).to_le_bytes(),
                *format!("{n:016}").as_bytes()
            );
            let (digits, count) = short_integer_digits(n);
            assert_eq!(
                &digits.to_le_bytes()[..count],
                n.to_string().as_bytes(),
                "{n}"
            );
        }
    }

    #[test]
    fn floats_print_as_python_repr_across_magnitudes() {
        // Python's repr: repr(float) for these values, checked by hand against CPython 3.11.
        let cases: &[(f64, &str)] = &[
            (1e15, "1000000000000000.0"),
            (1.2345e15, "1234500000000000.0"),
            (123.456, "123.456"),
            (1e-4, "0.0001"),
            (1.5e-4, "0.00015"),
            (9.5e-5, "9.5e-05"),
            (f64::from_bits(0x431A_A3D7_EAC1_1F3D), "1874624286574543.2"),
            (1e22, "1e+22"),
            (123e18, "1.23e+20"),
            (1e100, "1e+100"),
            (-1.25e-300, "-1.25e-300"),
            (2.5e22, "2.5e+22"),
            // 2^-24 is 5.9604644775390625e-08, halfway between two 16-digit strings; the lower
            // reads back as the float below (the gap below a power of two is half as wide).
            (2f64.powi(-24), "5.960464477539063e-08"),
        ];
        for &(f, want) in cases {
            assert_eq!(py(f), want, "{f:e}");
        }
    }

    /// Python's `repr` layout of a float, written the plain way (strings, no lanes) from the same
    /// shortest digits: the reference the fast layout is checked against.
    fn plain_python_repr(f: f64) -> String {
        let sign = if f.is_sign_negative() { "-" } else { "" };
        if f == 0.0 {
            return format!("{sign}0.0");
        }
        let decimal = shortest_decimal(f.abs());
        let (significand, exponent) = (decimal.leading * 10 + decimal.last, decimal.exponent);
        let text = significand.to_string();
        let digits = text.trim_end_matches('0');
        let point = exponent + text.len() as i32 - 1;
        let body = if (-4..16).contains(&point) {
            if point < 0 {
                format!(
                    "0.{}{digits}",
                    "0".repeat(point.unsigned_abs() as usize - 1)
                )
            } else if digits.len() <= point as usize + 1 {
                format!(
                    "{digits}{}.0",
                    "0".repeat(point as usize + 1 - digits.len())
                )
            } else {
                let (int, fraction) = digits.split_at(point as usize + 1);
                format!("{int}.{fraction}")
            }
        } else {
            let (first, rest) = digits.split_at(1);
            let rest = if rest.is_empty() {
                String::new()
            } else {
                format!(".{rest}")
            };
            let exp_sign = if point < 0 { '-' } else { '+' };
            format!("{first}{rest}e{exp_sign}{:02}", point.unsigned_abs())
        };
        format!("{sign}{body}")
    }

    #[test]
    fn the_fast_float_layout_matches_the_plain_one_byte_for_byte() {
        let mut rng = crate::json::test_rng::TestRng(0x0DDB_1A5E_5BAD_5EED);
        let mut checked = 0;
        while checked < 200_000 {
            let bits = rng.next();
            // Random bits, and values with few digits at every decimal exponent (integers,
            // trailing zeros, the fixed/scientific boundaries).
            let f = match checked % 3 {
                0 => f64::from_bits(bits),
                1 => (bits % 1_000_000) as f64 * 10f64.powi((bits >> 32) as i32 % 40 - 20),
                _ => (bits >> 11) as f64 / (1u64 << (bits % 64)) as f64,
            };
            if !f.is_finite() {
                continue;
            }
            assert_eq!(py(f), plain_python_repr(f), "{f:e}");
            // The same inside a short array, where it is laid out in the gathered buffer.
            let pair = Value::from(vec![Value::from(f), Value::from(-f)]);
            assert_eq!(
                compact(&pair),
                format!("[{},{}]", plain_python_repr(f), plain_python_repr(-f))
            );
            checked += 1;
        }
        for f in crate::json::shortest::awkward_floats(&mut rng, 0) {
            assert_eq!(py(f), plain_python_repr(f), "{f:e}");
            assert_eq!(py(-f), plain_python_repr(-f), "{f:e}");
            let pair = Value::from(vec![Value::from(f), Value::from(-f)]);
            assert_eq!(
                compact(&pair),
                format!("[{},{}]", plain_python_repr(f), plain_python_repr(-f))
            );
        }
    }

    #[test]
    fn writers_do_not_recurse() {
        let mut v = Value::Null;
        for _ in 0..200_000 {
            v = Value::from(vec![v]);
        }
        assert_eq!(to_string(&v).len(), 200_000 * 2 + 4);
        // Pretty output grows with the square of the depth (indentation), so go less deep.
        let mut v = Value::Null;
        for _ in 0..5_000 {
            v = Value::from(vec![v]);
        }
        assert!(to_pretty_ascii_sorted(&v).len() > 5_000 * 5_000);
    }
}
