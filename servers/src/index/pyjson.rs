//! A streaming writer of the JSON layouts Python's `json.dumps` produces with `ensure_ascii`: the
//! memory index (`indent=2`, keys as inserted), code-index files (`indent=2`, keys sorted by the
//! caller) and the content fingerprint payload (no indent: `", "` and `": "` separators).
//!
//! Builders call the primitives in the order keys must appear, so large postings never become a
//! [`Value`] tree; [`PyJson::value`] writes an already-parsed value (an index file read back).

use agentteams_mcp::json::{write_ascii_string, write_python_float, Value};

/// The writer. `indent: None` is Python's default single-line layout.
pub struct PyJson {
    out: String,
    indent: Option<usize>,
    /// Per open container: true until its first member is written.
    empty: Vec<bool>,
}

impl PyJson {
    pub fn new(indent: Option<usize>, capacity: usize) -> PyJson {
        PyJson {
            out: String::with_capacity(capacity),
            indent,
            empty: Vec::new(),
        }
    }

    pub fn finish(self) -> String {
        self.out
    }

    /// Separator and indentation before an array element or an object key.
    fn member(&mut self) {
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
        // Postings write two integers each, millions in all: digits by hand, not `fmt`.
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
        for &d in &digits[at..] {
            self.out.push(char::from(d));
        }
    }

    pub fn float(&mut self, f: f64) {
        write_python_float(f, &mut self.out);
    }

    pub fn null(&mut self) {
        self.out.push_str("null");
    }

    /// An object of integer members, as `begin_object`, then `key` and `int` for each member,
    /// then `end_object` write it, without their bookkeeping per call (a posting is one such
    /// object, and an index holds millions).
    pub fn int_object(&mut self, members: &[(&str, u64)]) {
        let depth = self.empty.len();
        self.out.push('{');
        for (i, &(key, value)) in members.iter().enumerate() {
            if i > 0 {
                self.out.push(',');
                if self.indent.is_none() {
                    self.out.push(' ');
                }
            }
            self.newline(depth + 1);
            self.string(key);
            self.out.push_str(": ");
            self.int(value);
        }
        if !members.is_empty() {
            self.newline(depth);
        }
        self.out.push('}');
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
    fn int_objects_are_laid_out_as_member_by_member() {
        let members: &[(&str, u64)] = &[("doc_id", 12), ("tf", 3), ("\u{e9}\"", 0)];
        for indent in [None, Some(2)] {
            for depth in 0..3 {
                for count in 0..=members.len() {
                    let mut fast = PyJson::new(indent, 0);
                    let mut slow = PyJson::new(indent, 0);
                    for w in [&mut fast, &mut slow] {
                        for _ in 0..depth {
                            w.begin_array();
                            w.element();
                        }
                    }
                    fast.int_object(&members[..count]);
                    slow.begin_object();
                    for &(key, value) in &members[..count] {
                        slow.key(key);
                        slow.int(value);
                    }
                    slow.end_object();
                    for w in [&mut fast, &mut slow] {
                        w.element();
                        w.null();
                        for _ in 0..depth {
                            w.end_array();
                        }
                    }
                    assert_eq!(fast.finish(), slow.finish(), "{indent:?} {depth} {count}");
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
