//! Conformance of `agentteams_mcp::json` against JSONTestSuite, and round trips of generated
//! documents shaped like the benchmark corpus.
//!
//! Every file of `JSONTestSuite/test_parsing` is parsed: `y_` files must be accepted, `n_` files
//! rejected, and each `i_` (implementation-defined) file gets the decision pinned in [`I_DECISIONS`],
//! so a change of behaviour on any of them shows up as a failure rather than passing silently. Every
//! accepted document must also survive parse → write → parse unchanged, with both writers.
//!
//! The suite lives in the repository, at `tests/data/JSONTestSuite` (MIT, its LICENSE beside it;
//! provenance in `tests/data/README.md`), so the test needs nothing outside the checkout.
//! `JSON_TEST_SUITE` may point at another copy (a newer JSONTestSuite, say). A missing folder is a
//! failure, never a silent pass.
//!
//! The benchmark corpus (canada.json, citm_catalog.json, twitter.json) is not in the repository (see
//! `bench/data/README.md`); the generated documents below cover what it brought to this test: many
//! finite doubles of every magnitude, deep object nesting of records, and non-ASCII text.

use agentteams_mcp::json::{self, Value};
use std::path::{Path, PathBuf};

/// Overrides where JSONTestSuite is read from: a folder holding `test_parsing/`.
const SUITE_ENV: &str = "JSON_TEST_SUITE";

/// The suite's folder inside the repository, relative to the manifest directory.
const SUITE_IN_REPO: &str = "tests/data/JSONTestSuite";

/// How the parser answers each implementation-defined file. `true`: accepted.
///
/// Why these answers: numbers beyond f64 or 64-bit integer range are accepted and kept as their source
/// text (written back unchanged); numbers that underflow become 0.0; unpaired surrogate escapes,
/// invalid UTF-8, byte-order marks and UTF-16 input are rejected (strings must be valid Unicode text);
/// nesting deeper than the default limit of 128 levels is rejected.
const I_DECISIONS: &[(&str, bool)] = &[
    ("i_number_double_huge_neg_exp.json", true),
    ("i_number_huge_exp.json", true),
    ("i_number_neg_int_huge_exp.json", true),
    ("i_number_pos_double_huge_exp.json", true),
    ("i_number_real_neg_overflow.json", true),
    ("i_number_real_pos_overflow.json", true),
    ("i_number_real_underflow.json", true),
    ("i_number_too_big_neg_int.json", true),
    ("i_number_too_big_pos_int.json", true),
    ("i_number_very_big_negative_int.json", true),
    ("i_object_key_lone_2nd_surrogate.json", false),
    ("i_string_1st_surrogate_but_2nd_missing.json", false),
    ("i_string_1st_valid_surrogate_2nd_invalid.json", false),
    ("i_string_UTF-16LE_with_BOM.json", false),
    ("i_string_UTF-8_invalid_sequence.json", false),
    ("i_string_UTF8_surrogate_U+D800.json", false),
    ("i_string_incomplete_surrogate_and_escape_valid.json", false),
    ("i_string_incomplete_surrogate_pair.json", false),
    ("i_string_incomplete_surrogates_escape_valid.json", false),
    ("i_string_invalid_lonely_surrogate.json", false),
    ("i_string_invalid_surrogate.json", false),
    ("i_string_invalid_utf-8.json", false),
    ("i_string_inverted_surrogates_U+1D11E.json", false),
    ("i_string_iso_latin_1.json", false),
    ("i_string_lone_second_surrogate.json", false),
    ("i_string_lone_utf8_continuation_byte.json", false),
    ("i_string_not_in_unicode_range.json", false),
    ("i_string_overlong_sequence_2_bytes.json", false),
    ("i_string_overlong_sequence_6_bytes.json", false),
    ("i_string_overlong_sequence_6_bytes_null.json", false),
    ("i_string_truncated-utf-8.json", false),
    ("i_string_utf16BE_no_BOM.json", false),
    ("i_string_utf16LE_no_BOM.json", false),
    ("i_structure_500_nested_arrays.json", false),
    ("i_structure_UTF-8_BOM_empty_object.json", false),
];

/// The JSONTestSuite folder (holding `test_parsing/`), or a failure naming the place looked at.
fn suite_dir() -> PathBuf {
    let (dir, from) = match std::env::var_os(SUITE_ENV) {
        Some(dir) => (PathBuf::from(dir), format!("{SUITE_ENV} is set to")),
        None => (
            Path::new(env!("CARGO_MANIFEST_DIR")).join(SUITE_IN_REPO),
            "the repository's copy is".to_string(),
        ),
    };
    assert!(
        dir.join("test_parsing").is_dir(),
        "JSONTestSuite not found: {from} {}, which has no test_parsing/ folder",
        dir.display()
    );
    dir
}

/// Every file of test_parsing as (file name, contents), sorted by name.
fn suite_files() -> Vec<(String, Vec<u8>)> {
    let dir = suite_dir().join("test_parsing");
    let entries =
        std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()));
    let mut files: Vec<(String, Vec<u8>)> = entries
        .map(|entry| {
            let entry = entry.expect("directory entry");
            let name = entry.file_name().into_string().expect("UTF-8 file name");
            let bytes = std::fs::read(entry.path())
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", entry.path().display()));
            (name, bytes)
        })
        .collect();
    files.sort();
    assert!(
        files.len() > 300,
        "{} holds only {} files; JSONTestSuite's test_parsing has 318",
        dir.display(),
        files.len()
    );
    files
}

/// Whether `parse` accepted the input, catching a panic as a failure of its own.
fn decision(name: &str, bytes: &[u8]) -> Result<bool, String> {
    let input = bytes.to_vec();
    std::panic::catch_unwind(move || json::parse(&input).is_ok())
        .map_err(|_| format!("{name}: the parser panicked"))
}

#[test]
fn y_files_are_accepted_and_n_files_rejected() {
    let mut failures = Vec::new();
    let (mut y, mut n) = (0, 0);
    for (name, bytes) in suite_files() {
        if name.starts_with("y_") {
            y += 1;
            if let Err(e) = json::parse(&bytes) {
                failures.push(format!("{name}: rejected ({e})"));
            }
        } else if name.starts_with("n_") {
            n += 1;
            match decision(&name, &bytes) {
                Ok(false) => {}
                Ok(true) => failures.push(format!("{name}: accepted")),
                Err(panic) => failures.push(panic),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(y >= 95 && n >= 188, "too few y_ ({y}) or n_ ({n}) files");
}

#[test]
fn every_i_file_has_its_pinned_decision() {
    let mut seen = Vec::new();
    let mut failures = Vec::new();
    for (name, bytes) in suite_files() {
        if !name.starts_with("i_") {
            continue;
        }
        let Some(&(_, want)) = I_DECISIONS.iter().find(|(n, _)| *n == name) else {
            failures.push(format!("{name}: no pinned decision in I_DECISIONS"));
            continue;
        };
        seen.push(name.clone());
        match decision(&name, &bytes) {
            Ok(got) if got == want => {}
            Ok(got) => failures.push(format!(
                "{name}: {} but pinned as {}",
                if got { "accepted" } else { "rejected" },
                if want { "accepted" } else { "rejected" }
            )),
            Err(panic) => failures.push(panic),
        }
    }
    for (name, _) in I_DECISIONS {
        if !seen.iter().any(|s| s == name) {
            failures.push(format!("{name}: pinned but not in the suite"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Parses `bytes`, writes it compact and pretty, parses both outputs and checks them against the
/// first value. Returns a description of the first difference.
fn round_trip(name: &str, bytes: &[u8]) -> Result<(), String> {
    let first = json::parse(bytes).map_err(|e| format!("{name}: does not parse: {e}"))?;
    let compact = json::to_string(&first);
    let second = json::parse(compact.as_bytes())
        .map_err(|e| format!("{name}: compact output does not parse: {e}"))?;
    if second != first {
        return Err(format!(
            "{name}: compact output parses to a different value"
        ));
    }
    let again = json::to_string(&second);
    if again != compact {
        return Err(format!(
            "{name}: compact output differs after a second parse:\n{compact}\n{again}"
        ));
    }
    let pretty = json::to_pretty_ascii_sorted(&first);
    if !pretty.is_ascii() {
        return Err(format!("{name}: pretty output is not ASCII"));
    }
    let reparsed = json::parse(pretty.as_bytes())
        .map_err(|e| format!("{name}: pretty output does not parse: {e}"))?;
    if !equal_ignoring_key_order(&reparsed, &first) {
        return Err(format!("{name}: pretty output parses to a different value"));
    }
    if json::to_pretty_ascii_sorted(&reparsed) != pretty {
        return Err(format!("{name}: pretty output is not stable"));
    }
    Ok(())
}

/// Deep equality where objects compare as sorted entry lists (the pretty writer sorts keys, stably,
/// so duplicate keys keep their relative order). Walks with an explicit stack.
fn equal_ignoring_key_order(a: &Value, b: &Value) -> bool {
    let mut pending = vec![(a, b)];
    while let Some((a, b)) = pending.pop() {
        match (a, b) {
            (Value::Array(x), Value::Array(y)) => {
                if x.len() != y.len() {
                    return false;
                }
                pending.extend(x.iter().zip(y.iter()));
            }
            (Value::Object(x), Value::Object(y)) => {
                if x.len() != y.len() {
                    return false;
                }
                let mut xs: Vec<_> = x.iter().collect();
                let mut ys: Vec<_> = y.iter().collect();
                xs.sort_by(|p, q| p.0.cmp(q.0));
                ys.sort_by(|p, q| p.0.cmp(q.0));
                for ((kx, vx), (ky, vy)) in xs.into_iter().zip(ys) {
                    if kx != ky {
                        return false;
                    }
                    pending.push((vx, vy));
                }
            }
            (x, y) => {
                if x != y {
                    return false;
                }
            }
        }
    }
    true
}

#[test]
fn accepted_suite_files_round_trip_through_both_writers() {
    let mut checked = 0;
    let mut failures = Vec::new();
    for (name, bytes) in suite_files() {
        if json::parse(&bytes).is_err() {
            continue;
        }
        checked += 1;
        if let Err(e) = round_trip(&name, &bytes) {
            failures.push(e);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(checked >= 95, "only {checked} files were accepted");
}

/// A small deterministic generator (xorshift64*), so the generated documents are the same every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// A finite double: any bit pattern half the time, else a coordinate with 15 decimals.
    fn double(&mut self) -> f64 {
        if self.below(2) == 0 {
            loop {
                let f = f64::from_bits(self.next());
                if f.is_finite() {
                    return f;
                }
            }
        }
        let whole = self.below(360) as f64 - 180.0;
        whole + self.below(1_000_000_000_000_000) as f64 / 1e15
    }
}

/// A GeoJSON-like document of many doubles (what canada.json brings), written in both of Rust's
/// notations, with the doubles in order.
fn numbers_document(rng: &mut Rng) -> (String, Vec<f64>) {
    let mut doubles = Vec::new();
    let mut rings = Vec::new();
    for _ in 0..40 {
        let mut points = Vec::new();
        for _ in 0..250 {
            let (x, y) = (rng.double(), rng.double());
            doubles.extend([x, y]);
            points.push(if rng.below(2) == 0 {
                format!("[{x:e},{y:e}]")
            } else {
                format!("[{x:?},{y:?}]")
            });
        }
        rings.push(format!("[{}]", points.join(",")));
    }
    let text = format!(
        r#"{{"type":"FeatureCollection","features":[{{"type":"Feature","properties":{{"name":"generated"}},"geometry":{{"type":"Polygon","coordinates":[{}]}}}}]}}"#,
        rings.join(",")
    );
    (text, doubles)
}

/// Nested records with integers, nulls, booleans, empty containers and repeated keys (what
/// citm_catalog.json brings).
fn records_document(rng: &mut Rng) -> String {
    let mut events = Vec::new();
    for id in 0..500u64 {
        let prices: Vec<String> = (0..rng.below(4))
            .map(|_| {
                format!(
                    r#"{{"amount":{},"seatCategoryId":{}}}"#,
                    rng.below(100_000),
                    rng.next()
                )
            })
            .collect();
        events.push(format!(
            r#""{id}":{{"id":{id},"logo":{},"subTopicIds":[{},{}],"prices":[{}],"free":{},"areas":{{}},"seats":[],"offset":-{}}}"#,
            if rng.below(3) == 0 { "null".to_string() } else { format!("\"/images/{id}.png\"") },
            rng.below(1 << 40),
            i64::MIN,
            prices.join(","),
            rng.below(2) == 0,
            rng.below(1 << 62)
        ));
    }
    format!(r#"{{"events":{{{}}},"events":{{}}}}"#, events.join(","))
}

/// Strings of CJK, emoji (raw and as surrogate-pair escapes), control-character escapes and
/// quotes (what twitter.json brings).
fn text_document(rng: &mut Rng) -> String {
    const PIECES: &[&str] = &[
        "一",
        "二三",
        "日本語のテキスト",
        "한국어",
        "😀",
        "\\ud83d\\ude00",
        "\\u00e9",
        "é",
        "\\n",
        "\\t",
        "\\\"",
        "\\\\",
        "\\/",
        "\\u0000",
        "\\u001f",
        "ascii",
        " ",
        "#タグ",
        "@user",
        "\\u2028",
    ];
    let mut statuses = Vec::new();
    for id in 0..400 {
        let text: String = (0..rng.below(30))
            .map(|_| PIECES[rng.below(PIECES.len() as u64) as usize])
            .collect();
        statuses.push(format!(
            r#"{{"id":{},"id_str":"{id}","text":"{text}","user":{{"name":"{}","lang":"ja"}}}}"#,
            rng.next(),
            PIECES[id % PIECES.len()]
        ));
    }
    format!(r#"{{"statuses":[{}]}}"#, statuses.join(","))
}

/// Every number of `value`, in document order.
fn numbers_in(value: &Value) -> Vec<f64> {
    let mut found = Vec::new();
    let mut pending = vec![value];
    while let Some(v) = pending.pop() {
        match v {
            Value::Number(n) => found.push(n.as_f64()),
            Value::Array(items) => pending.extend(items.iter().rev()),
            Value::Object(map) => {
                pending.extend(map.values().collect::<Vec<_>>().into_iter().rev())
            }
            _ => {}
        }
    }
    found
}

#[test]
fn generated_documents_round_trip_through_both_writers() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (numbers, doubles) = numbers_document(&mut rng);
    let documents = [
        ("numbers", numbers),
        ("records", records_document(&mut rng)),
        ("text", text_document(&mut rng)),
    ];
    for (name, text) in &documents {
        if let Err(e) = round_trip(name, text.as_bytes()) {
            panic!("{e}");
        }
    }
    let parsed = json::parse(documents[0].1.as_bytes()).expect("numbers document parses");
    let read = numbers_in(&parsed);
    assert_eq!(read.len(), doubles.len(), "numbers read back");
    for (i, (got, want)) in read.iter().zip(&doubles).enumerate() {
        assert_eq!(
            got.to_bits(),
            want.to_bits(),
            "double {i}: read {got:e}, wrote {want:e}"
        );
    }
    let written = json::parse(json::to_string(&parsed).as_bytes()).expect("written numbers parse");
    let rewritten = numbers_in(&written);
    assert!(
        rewritten
            .iter()
            .zip(&doubles)
            .all(|(a, b)| a.to_bits() == b.to_bits()),
        "a double changed through the compact writer"
    );
}

#[test]
fn equality_ignoring_key_order_tells_values_apart() {
    let a = json::parse(br#"{"a":[1,{"x":1,"y":2}],"b":2}"#).unwrap();
    let reordered = json::parse(br#"{"b":2,"a":[1,{"y":2,"x":1}]}"#).unwrap();
    let different = json::parse(br#"{"b":2,"a":[1,{"y":2,"x":3}]}"#).unwrap();
    assert!(equal_ignoring_key_order(&a, &reordered));
    assert!(!equal_ignoring_key_order(&a, &different));
}
