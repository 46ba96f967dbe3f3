//! A streaming writer of the JSON layouts Python's `json.dumps` produces with `ensure_ascii`: the
//! memory index (`indent=2`, keys as inserted), code-index files (`indent=2`, keys sorted by the
//! caller) and the content fingerprint payload (no indent: `", "` and `": "` separators).
//!
//! Builders call the primitives in the order keys must appear, so large postings never become a
//! [`Value`] tree; [`PyJson::value`] writes an already-parsed value (an index file read back).

use agentteams_mcp::json::{write_ascii_string, write_python_float, Value};

/// Output a streaming writer gathers before handing it to its sink: large enough that a write
/// call costs little per byte, small enough that a 200 MB index never sits whole in memory.
const STREAM_CHUNK_BYTES: usize = 1 << 20;

/// Appends `n` in decimal: digits by hand, not `fmt` (postings write millions of numbers).
fn push_u64(out: &mut String, n: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut rest = n;
    loop {
        at -= 1;
        digits[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    // ASCII digits as chars: no UTF-8 check of each number's bytes (a quarter faster).
    out.extend(digits[at..].iter().map(|&d| char::from(d)));
}

fn push_u32(out: &mut String, n: u32) {
    push_u64(out, u64::from(n));
}

/// The writer. `indent: None` is Python's default single-line layout. It writes into a string
/// ([`PyJson::new`], [`PyJson::finish`]) or streams into a sink ([`PyJson::streaming`],
/// [`PyJson::finish_streaming`]).
pub struct PyJson<'w> {
    out: String,
    indent: Option<usize>,
    /// Per open container: true until its first member is written.
    empty: Vec<bool>,
    /// Where a streaming writer sends its output, chunk by chunk, and the first error it met
    /// (after which nothing more is sent).
    sink: Option<&'w mut dyn std::io::Write>,
    failed: Option<std::io::Error>,
    /// Bytes handed to the sink so far.
    sent: u64,
    /// The layout [`PyJson::int_pair_elements`] last worked out.
    pairs: Option<PairLayout>,
}

/// A writer's layout and open containers ([`PyJson::place`]): what a part written on another
/// thread ([`PyJson::resume`]) needs to carry on from there.
#[derive(Clone)]
pub struct Place {
    indent: Option<usize>,
    /// Per open container: true until its first member is written.
    empty: Vec<bool>,
}

impl Place {
    /// The same place once the innermost container has a member.
    pub fn after_members(mut self) -> Place {
        if let Some(first) = self.empty.last_mut() {
            *first = false;
        }
        self
    }
}

/// Output written at a [`Place`] by another writer, to be added with [`PyJson::append`], and
/// its open containers where it ended.
pub struct Part {
    out: String,
    empty: Vec<bool>,
}

/// The constant pieces of one `{a: n, b: m}` element of an array at `depth`.
struct PairLayout {
    depth: usize,
    names: (String, String),
    /// Before the first element; before each later one (separator, `lead`, `open`); between
    /// the numbers; after the second.
    lead: String,
    open: String,
    next: String,
    middle: String,
    close: String,
}

impl PairLayout {
    /// Works the pieces out with a scratch writer of the same layout.
    fn new(indent: Option<usize>, depth: usize, names: (&str, &str)) -> PairLayout {
        let piece = |write: &dyn Fn(&mut PyJson)| {
            let mut scratch = PyJson::new(indent, 64);
            write(&mut scratch);
            scratch.out
        };
        let separator = |w: &mut PyJson| {
            w.out.push(',');
            if w.indent.is_none() {
                w.out.push(' ');
            }
        };
        let lead = piece(&|w| w.newline(depth));
        let open = piece(&|w| {
            w.out.push('{');
            w.newline(depth + 1);
            w.string(names.0);
            w.out.push_str(": ");
        });
        let middle = piece(&|w| {
            separator(w);
            w.newline(depth + 1);
            w.string(names.1);
            w.out.push_str(": ");
        });
        let close = piece(&|w| {
            w.newline(depth);
            w.out.push('}');
        });
        let next = format!("{}{lead}{open}", piece(&|w| separator(w)));
        PairLayout {
            depth,
            names: (names.0.to_owned(), names.1.to_owned()),
            lead,
            open,
            next,
            middle,
            close,
        }
    }
}

impl<'w> PyJson<'w> {
    pub fn new(indent: Option<usize>, capacity: usize) -> PyJson<'w> {
        PyJson {
            out: String::with_capacity(capacity),
            indent,
            empty: Vec::new(),
            sink: None,
            failed: None,
            sent: 0,
            pairs: None,
        }
    }

    /// A writer that sends its output to `sink` as it goes.
    pub fn streaming(indent: Option<usize>, sink: &'w mut dyn std::io::Write) -> PyJson<'w> {
        PyJson {
            out: String::with_capacity(STREAM_CHUNK_BYTES + 64 * 1024),
            sink: Some(sink),
            ..PyJson::new(indent, 0)
        }
    }

    pub fn finish(self) -> String {
        self.out
    }

    /// Sends what remains to the sink; the first error any write met.
    pub fn finish_streaming(mut self) -> std::io::Result<()> {
        self.send();
        match self.failed {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Where this writer is (its layout and open containers), for a part written elsewhere.
    pub fn place(&self) -> Place {
        Place {
            indent: self.indent,
            empty: self.empty.clone(),
        }
    }

    /// A writer (with no sink, room for `capacity` bytes) that writes what a writer at `place`
    /// would write next; its output is then added to that writer with [`PyJson::append`].
    pub fn resume(place: Place, capacity: usize) -> PyJson<'static> {
        PyJson {
            empty: place.empty,
            ..PyJson::new(place.indent, capacity)
        }
    }

    /// The output of a writer made by [`PyJson::resume`], and where it ended.
    pub fn into_part(self) -> Part {
        Part {
            out: self.out,
            empty: self.empty,
        }
    }

    /// Adds `part` (written by a writer resumed at this one's place) as the next output, and
    /// carries on where it ended.
    pub fn append(&mut self, part: Part) {
        if self.sink.is_some() {
            self.send();
            let mine = std::mem::replace(&mut self.out, part.out);
            self.send();
            self.out = mine;
        } else {
            self.out.push_str(&part.out);
        }
        self.empty = part.empty;
    }

    /// Hands the output gathered so far to the sink, if there is one.
    fn send(&mut self) {
        if let Some(sink) = self.sink.as_mut() {
            if self.failed.is_none() {
                if let Err(e) = sink.write_all(self.out.as_bytes()) {
                    self.failed = Some(e);
                }
            }
            self.sent += self.out.len() as u64;
            self.out.clear();
        }
    }

    /// Separator and indentation before an array element or an object key.
    fn member(&mut self) {
        if self.sink.is_some() && self.out.len() >= STREAM_CHUNK_BYTES {
            self.send();
        }
        if let Some(first) = self.empty.last_mut() {
            if *first {
                *first = false;
            } else {
                self.out.push(',');
                if self.indent.is_none() {
                    self.out.push(' ');
                }
            }
            self.newline(self.empty.len());
        }
    }

    fn newline(&mut self, depth: usize) {
        if let Some(width) = self.indent {
            self.out.push('\n');
            // Index files nest a few levels: one copy from a run of spaces, not one push each.
            const SPACES: &str = "                                ";
            let mut left = width * depth;
            while left > 0 {
                let n = left.min(SPACES.len());
                self.out.push_str(&SPACES[..n]);
                left -= n;
            }
        }
    }

    fn open(&mut self, bracket: char) {
        self.out.push(bracket);
        self.empty.push(true);
    }

    fn close(&mut self, bracket: char) {
        if self.empty.pop() == Some(false) {
            self.newline(self.empty.len());
        }
        self.out.push(bracket);
    }

    pub fn begin_object(&mut self) {
        self.open('{');
    }
    pub fn end_object(&mut self) {
        self.close('}');
    }
    pub fn begin_array(&mut self) {
        self.open('[');
    }
    pub fn end_array(&mut self) {
        self.close(']');
    }

    /// Where the next byte written will be in the output.
    pub fn position(&self) -> u64 {
        self.sent + self.out.len() as u64
    }

    /// [`PyJson::key`], returning where the key's opening quote is in the output.
    pub fn key_at(&mut self, key: &str) -> u64 {
        self.member();
        let at = self.position();
        self.string(key);
        self.out.push_str(": ");
        at
    }

    /// [`PyJson::element`], returning where the element will start in the output.
    pub fn element_at(&mut self) -> u64 {
        self.member();
        self.position()
    }

    /// Starts an object member; the value follows.
    pub fn key(&mut self, key: &str) {
        self.member();
        self.string(key);
        self.out.push_str(": ");
    }

    /// Starts an array element; the value follows.
    pub fn element(&mut self) {
        self.member();
    }

    pub fn string(&mut self, s: &str) {
        // Most strings of an index (terms, keys, paths, code) need no escape: one pass over the
        // bytes tells, and they are copied as they are.
        if s.bytes()
            .all(|b| (b' '..=b'~').contains(&b) && b != b'"' && b != b'\\')
        {
            self.out.push('"');
            self.out.push_str(s);
            self.out.push('"');
        } else {
            write_ascii_string(s, &mut self.out);
        }
    }

    pub fn opt_string(&mut self, s: Option<&str>) {
        match s {
            Some(s) => self.string(s),
            None => self.null(),
        }
    }

    pub fn bool(&mut self, b: bool) {
        self.out.push_str(if b { "true" } else { "false" });
    }

    pub fn int(&mut self, n: u64) {
        push_u64(&mut self.out, n);
    }

    pub fn float(&mut self, f: f64) {
        write_python_float(f, &mut self.out);
    }

    pub fn null(&mut self) {
        self.out.push_str("null");
    }

    /// The elements of the array being written, one object `{names.0: a, names.1: b}` per
    /// pair, as `element`, `begin_object`, `key`, `int` and `end_object` would write them: the
    /// layout of one element is worked out once, then each is its constant pieces and two
    /// numbers (a posting is one such object, and an index holds millions).
    pub fn int_pair_elements(&mut self, names: (&str, &str), pairs: &[(u32, u32)]) {
        let Some(&first) = self.empty.last() else {
            return;
        };
        if pairs.is_empty() {
            return;
        }
        let depth = self.empty.len();
        let fresh = self
            .pairs
            .as_ref()
            .is_some_and(|p| p.depth == depth && p.names.0 == names.0 && p.names.1 == names.1);
        if !fresh {
            self.pairs = Some(PairLayout::new(self.indent, depth, names));
        }
        let pieces = self.pairs.take().expect("just made");
        let PairLayout {
            lead,
            open,
            middle,
            close,
            next,
            ..
        } = &pieces;
        if first {
            self.out.push_str(lead);
            self.out.push_str(open);
        } else {
            self.out.push_str(next);
        }
        if let Some(flag) = self.empty.last_mut() {
            *flag = false;
        }
        for (i, &(a, b)) in pairs.iter().enumerate() {
            if i > 0 {
                if self.sink.is_some() && self.out.len() >= STREAM_CHUNK_BYTES {
                    self.send();
                }
                self.out.push_str(next);
            }
            push_u32(&mut self.out, a);
            self.out.push_str(middle);
            push_u32(&mut self.out, b);
            self.out.push_str(close);
        }
        self.pairs = Some(pieces);
    }

    /// Adds, as the next members of the open container, `len` bytes of members laid out
    /// elsewhere in this writer's layout at this depth (separated as it separates them), which
    /// `copy` writes into the writer it is given: the sink itself when streaming, so they never
    /// pass through this writer's buffer. Returns where they start in the output; an error of
    /// `copy` (or, without a sink, bytes that are not UTF-8) is also the writer's first error.
    pub fn members_copied(
        &mut self,
        len: u64,
        copy: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
    ) -> std::io::Result<u64> {
        self.member();
        self.send();
        let at = self.position();
        let copied = match self.sink.as_mut() {
            Some(_) if self.failed.is_some() => Ok(()),
            Some(sink) => copy(sink),
            None => {
                let mut bytes = Vec::new();
                copy(&mut bytes).and_then(|()| {
                    let text = String::from_utf8(bytes).map_err(|_| {
                        std::io::Error::new(std::io::ErrorKind::InvalidData, "not UTF-8")
                    })?;
                    self.out.push_str(&text);
                    Ok(())
                })
            }
        };
        if self.sink.is_some() {
            self.sent += len;
        }
        copied.inspect_err(|e| {
            if self.failed.is_none() {
                self.failed = Some(std::io::Error::new(e.kind(), e.to_string()));
            }
        })?;
        Ok(at)
    }

    /// Writes `json`, already laid out by another writer of the same layout, as it is.
    pub fn raw(&mut self, json: &str) {
        self.out.push_str(json);
    }

    /// Writes a parsed value, object keys sorted when `sort_keys`. Recursive: only for values whose
    /// depth is bounded (schema-validated index files, at most six levels).
    pub fn value(&mut self, value: &Value, sort_keys: bool) {
        match value {
            Value::Array(items) => {
                self.begin_array();
                for item in items.iter() {
                    self.element();
                    self.value(item, sort_keys);
                }
                self.end_array();
            }
            Value::Object(map) => {
                let mut entries: Vec<_> = map.iter().collect();
                if sort_keys {
                    entries.sort_by(|a, b| a.0.cmp(b.0));
                }
                self.begin_object();
                for (key, item) in entries {
                    self.key(key);
                    self.value(item, sort_keys);
                }
                self.end_object();
            }
            Value::String(s) => self.string(s),
            scalar => agentteams_mcp::json::write_compact(scalar, &mut self.out),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentteams_mcp::json::parse;

    #[test]
    fn streaming_writes_exactly_what_the_string_writer_gives_across_chunks() {
        let write = |w: &mut PyJson| {
            w.begin_object();
            w.key("items");
            w.begin_array();
            for i in 0..60_000u64 {
                w.element();
                w.begin_array();
                w.int_pair_elements(("doc_id", "tf"), &[(i as u32, (i % 7 + 1) as u32)]);
                w.end_array();
                w.element();
                w.string("caf\u{e9} \"quoted\"");
            }
            w.end_array();
            w.end_object();
        };
        let mut whole = PyJson::new(Some(2), 0);
        write(&mut whole);
        let whole = whole.finish();
        assert!(whole.len() > 3 * STREAM_CHUNK_BYTES);
        let mut sink = Vec::new();
        let mut streamed = PyJson::streaming(Some(2), &mut sink);
        write(&mut streamed);
        streamed.finish_streaming().unwrap();
        assert!(sink == whole.as_bytes());
        // A sink that fails: the first error comes back, and writing stops there.
        struct Full(usize);
        impl std::io::Write for Full {
            fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
                self.0 += 1;
                Err(std::io::Error::other(format!(
                    "disk full ({} bytes)",
                    buf.len()
                )))
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let mut full = Full(0);
        let mut failing = PyJson::streaming(Some(2), &mut full);
        write(&mut failing);
        let err = failing.finish_streaming().unwrap_err();
        assert!(err.to_string().starts_with("disk full"), "{err}");
        assert_eq!(full.0, 1);
    }

    #[test]
    fn members_copied_from_another_output_read_as_if_written_here() {
        // The members `"a": [1]` and `"b": 2`, and a third written here after them.
        let write = |w: &mut PyJson, copied: Option<&str>| {
            w.begin_object();
            w.key("first");
            w.int(0);
            let at = match copied {
                Some(members) => {
                    let len = members.len() as u64;
                    w.members_copied(len, |into| into.write_all(members.as_bytes()))
                        .unwrap()
                }
                None => {
                    let at = w.key_at("a");
                    w.begin_array();
                    w.element();
                    w.int(1);
                    w.end_array();
                    w.key("b");
                    w.int(2);
                    at
                }
            };
            w.key("last");
            w.int(3);
            w.end_object();
            at
        };
        let mut whole = PyJson::new(Some(2), 0);
        let at = write(&mut whole, None);
        let whole = whole.finish();
        let members = "\"a\": [\n    1\n  ],\n  \"b\": 2";
        assert_eq!(&whole[at as usize..at as usize + members.len()], members);
        // Into a string, and streamed (where they go to the sink, not through the buffer).
        let mut string = PyJson::new(Some(2), 0);
        assert_eq!(write(&mut string, Some(members)), at);
        assert_eq!(string.finish(), whole);
        let mut sink = Vec::new();
        let mut streamed = PyJson::streaming(Some(2), &mut sink);
        assert_eq!(write(&mut streamed, Some(members)), at);
        streamed.finish_streaming().unwrap();
        assert!(sink == whole.as_bytes());
        // A copy that fails is the writer's error.
        let mut sink = Vec::new();
        let mut failing = PyJson::streaming(Some(2), &mut sink);
        failing.begin_object();
        let err = (failing.members_copied(4, |_| Err(std::io::Error::other("gone")))).unwrap_err();
        assert_eq!(err.to_string(), "gone");
        failing.end_object();
        assert_eq!(failing.finish_streaming().unwrap_err().to_string(), "gone");
    }

    #[test]
    fn indent_two_matches_python() {
        // python3 -c 'import json;print(json.dumps({"b":[1,{"x":[]}],"a":{},"c":"\u00e9","d":1.0},indent=2))'
        let mut w = PyJson::new(Some(2), 0);
        w.value(
            &parse(r#"{"b":[1,{"x":[]}],"a":{},"c":"é","d":1.0}"#.as_bytes()).unwrap(),
            false,
        );
        assert_eq!(
            w.finish(),
            "{\n  \"b\": [\n    1,\n    {\n      \"x\": []\n    }\n  ],\n  \"a\": {},\n  \"c\": \"\\u00e9\",\n  \"d\": 1.0\n}"
        );
    }

    #[test]
    fn integers_and_deep_indents_match_python() {
        // python3 -c 'import json;print(json.dumps([[[[[[[[[[[[[[[[[[0, 7, 10, 18446744073709551615]]]]]]]]]]]]]]]]]], indent=3))'
        let mut w = PyJson::new(Some(3), 0);
        for _ in 0..18 {
            w.begin_array();
            w.element();
        }
        w.int(0);
        for n in [7, 10, u64::MAX] {
            w.element();
            w.int(n);
        }
        for _ in 0..18 {
            w.end_array();
        }
        let mut expected = String::new();
        for depth in 0..18 {
            expected.push_str(&format!("[\n{}", " ".repeat(3 * (depth + 1))));
        }
        let inner = " ".repeat(3 * 18);
        expected.push_str(&format!(
            "0,\n{inner}7,\n{inner}10,\n{inner}18446744073709551615"
        ));
        for depth in (0..18).rev() {
            expected.push_str(&format!("\n{}]", " ".repeat(3 * depth)));
        }
        assert_eq!(w.finish(), expected);
    }

    #[test]
    fn strings_are_escaped_as_python_escapes_them() {
        // python3 -c 'import json;print(json.dumps(["plain ~!#", "q\"b\\s/", "\x00\x1f\x7f", "é\U0001f600", ""]))'
        let mut w = PyJson::new(None, 0);
        w.begin_array();
        for s in [
            "plain ~!#",
            "q\"b\\s/",
            "\u{0}\u{1f}\u{7f}",
            "é\u{1f600}",
            "",
        ] {
            w.element();
            w.string(s);
        }
        w.end_array();
        assert_eq!(
            w.finish(),
            r#"["plain ~!#", "q\"b\\s/", "\u0000\u001f\u007f", "\u00e9\ud83d\ude00", ""]"#
        );
    }

    #[test]
    fn int_pair_elements_are_laid_out_as_member_by_member() {
        let pairs: &[(u32, u32)] = &[(12, 3), (0, 4_294_967_295), (7, 1)];
        for indent in [None, Some(2)] {
            for depth in 0..3 {
                for count in 0..=pairs.len() {
                    for before in [false, true] {
                        let mut fast = PyJson::new(indent, 0);
                        let mut slow = PyJson::new(indent, 0);
                        for w in [&mut fast, &mut slow] {
                            for _ in 0..depth {
                                w.begin_array();
                                w.element();
                            }
                            w.begin_array();
                            if before {
                                w.element();
                                w.null();
                            }
                        }
                        fast.int_pair_elements(("doc_id", "\u{e9}\""), &pairs[..count]);
                        for &(a, b) in &pairs[..count] {
                            slow.element();
                            slow.begin_object();
                            slow.key("doc_id");
                            slow.int(u64::from(a));
                            slow.key("\u{e9}\"");
                            slow.int(u64::from(b));
                            slow.end_object();
                        }
                        for w in [&mut fast, &mut slow] {
                            w.end_array();
                            w.element();
                            w.null();
                            for _ in 0..depth {
                                w.end_array();
                            }
                        }
                        let (fast, slow) = (fast.finish(), slow.finish());
                        assert_eq!(fast, slow, "{indent:?} {depth} {count} {before}");
                    }
                }
            }
        }
    }

    #[test]
    fn single_line_sorted_matches_python() {
        // python3 -c 'import json;print(json.dumps({"b":[1,None],"a":{"z":1,"N":2}},sort_keys=True))'
        let mut w = PyJson::new(None, 0);
        w.value(
            &parse(br#"{"b":[1,null],"a":{"z":1,"N":2}}"#).unwrap(),
            true,
        );
        assert_eq!(w.finish(), r#"{"a": {"N": 2, "z": 1}, "b": [1, null]}"#);
    }
}
