//! Conformance of `agentteams_mcp::json` against JSONTestSuite and the benchmark corpus.
//!
//! Every file of `JSONTestSuite/test_parsing` is parsed: `y_` files must be accepted, `n_` files
//! rejected, and each `i_` (implementation-defined) file gets the decision pinned in [`I_DECISIONS`],
//! so a change of behaviour on any of them shows up as a failure rather than passing silently. Every
//! accepted document (and each corpus file) must also survive parse → write → parse unchanged, with
//! both writers.
//!
//! The data lives in the project's shared folder, `<checkout>/../shared/data/json` (CI clones the
//! repository beside `shared/`; a worktree may sit a level deeper), or wherever `JSON_TEST_DATA`
//! points. A missing folder is a failure, never a silent pass.

use agentteams_mcp::json::{self, Value};
use std::path::{Path, PathBuf};

/// Overrides where the JSON test data is looked for.
const DATA_ENV: &str = "JSON_TEST_DATA";

/// The data folder's path below an ancestor of the manifest directory.
const DATA_BELOW_ANCESTOR: &str = "shared/data/json";

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

/// The benchmark corpus documents, all of which must parse.
const CORPUS_FILES: &[&str] = &["canada.json", "citm_catalog.json", "twitter.json"];

/// Finds the JSON data folder or fails the test naming every place looked at.
fn data_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os(DATA_ENV) {
        let dir = PathBuf::from(dir);
        assert!(
            dir.is_dir(),
            "{DATA_ENV} is set to {}, which is not a directory",
            dir.display()
        );
        return dir;
    }
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let candidates: Vec<PathBuf> = manifest
        .ancestors()
        .skip(1)
        .map(|a| a.join(DATA_BELOW_ANCESTOR))
        .collect();
    match candidates.iter().find(|c| c.is_dir()) {
        Some(found) => found.clone(),
        None => panic!(
            "JSON test data not found: looked for {DATA_BELOW_ANCESTOR} beside the checkout ({}) \
             and above it; set {DATA_ENV} to the folder holding JSONTestSuite/ and corpus/",
            candidates
                .iter()
                .map(|c| c.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// Every file of test_parsing as (file name, contents), sorted by name.
fn suite_files() -> Vec<(String, Vec<u8>)> {
    let dir = data_dir().join("JSONTestSuite/test_parsing");
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

fn corpus_files() -> Vec<(String, Vec<u8>)> {
    let dir = data_dir().join("corpus");
    CORPUS_FILES
        .iter()
        .map(|name| {
            let path = dir.join(name);
            let bytes = std::fs::read(&path)
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
            (name.to_string(), bytes)
        })
        .collect()
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

#[test]
fn corpus_files_round_trip_through_both_writers() {
    for (name, bytes) in corpus_files() {
        if let Err(e) = round_trip(&name, &bytes) {
            panic!("{e}");
        }
    }
}

#[test]
fn equality_ignoring_key_order_tells_values_apart() {
    let a = json::parse(br#"{"a":[1,{"x":1,"y":2}],"b":2}"#).unwrap();
    let reordered = json::parse(br#"{"b":2,"a":[1,{"y":2,"x":1}]}"#).unwrap();
    let different = json::parse(br#"{"b":2,"a":[1,{"y":2,"x":3}]}"#).unwrap();
    assert!(equal_ignoring_key_order(&a, &reordered));
    assert!(!equal_ignoring_key_order(&a, &different));
}
