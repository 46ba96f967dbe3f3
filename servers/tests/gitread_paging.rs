//! Paging past the output cap: every paged tool takes `offset`, a cut answer's last line names the
//! `offset` that continues it (and `structuredContent.next_offset` repeats it), and the pages put
//! together are git's whole output with no gap or overlap. Under `--compat reference` the answer
//! is the reference's, cut once with no way on.

mod gitread_support;

use agentteams_mcp::json::Value;
use gitread_support::*;

/// The last line of a cut answer, as the server words it.
fn continuation(next: u64) -> String {
    format!("(cut at the output cap: call again with offset={next} for the rest)")
}

/// Every page of one call, following the continuation the answers name; each page's text, and
/// the whole output put back together.
fn all_pages(server: &mut Server, name: &str, arguments: &str) -> (Vec<String>, String) {
    let mut texts = Vec::new();
    let mut whole = String::new();
    let mut offset = 0u64;
    loop {
        let with_offset = format!(r#"{{"offset":{offset},{}"#, &arguments[1..]);
        let reply = server.call(name, &with_offset);
        let text = reply.output();
        assert!(text.len() <= 61440, "a page is at most the cap");
        let next = reply
            .structured
            .as_ref()
            .and_then(|s| s.get("next_offset"))
            .and_then(Value::as_u64);
        texts.push(text.clone());
        match next {
            None => {
                whole.push_str(&text);
                return (texts, whole);
            }
            Some(next) => {
                assert!(next > offset, "pages move forward");
                let body = text
                    .strip_suffix(&continuation(next))
                    .unwrap_or_else(|| panic!("the last line names offset={next}: {text:?}"));
                whole.push_str(body);
                offset = next;
            }
        }
    }
}

/// A repository whose second commit adds `big.txt` (`lines` numbered lines) and `long.txt` (one
/// line of 100,000 characters, many of them two-byte ones).
fn big_fixture(tag: &str, lines: usize) -> Fixture {
    let f = Fixture::new(tag);
    let big: String = (1..=lines)
        .map(|i| format!("line {i:05} of the big file, padded to be a little longer\n"))
        .collect();
    write(&f.root.join("big.txt"), &big);
    write(&f.root.join("long.txt"), &("ab€".repeat(33_334) + "\n"));
    git(&f.root, &["add", "big.txt", "long.txt"]);
    git(&f.root, &["commit", "-q", "-m", "big"]);
    f
}

#[test]
fn pages_put_together_are_the_whole_output() {
    let f = big_fixture("paging-whole", 6000);
    let mut server = f.server();
    let (pages, whole) = all_pages(
        &mut server,
        "git_diff",
        r#"{"base":"HEAD~1","head":"HEAD","path":"big.txt"}"#,
    );
    assert!(pages.len() >= 6, "{} pages", pages.len());
    let direct = git(
        &f.root,
        &["diff", "--no-color", "HEAD~1", "HEAD", "--", "big.txt"],
    );
    // (The helper trims git's last newline.)
    assert!(
        whole.trim_end() == direct,
        "the pages differ from git's output"
    );
    // Every page but the last ends after a whole line of git's output.
    for page in &pages[..pages.len() - 1] {
        let body = &page[..page.rfind('(').unwrap_or(0)];
        assert!(body.ends_with('\n'));
    }

    let (pages, whole) = all_pages(
        &mut server,
        "git_blame",
        r#"{"rev":"HEAD","path":"big.txt"}"#,
    );
    assert!(pages.len() >= 7);
    assert_eq!(whole.lines().count(), 6000);
    assert!(whole
        .lines()
        .last()
        .unwrap_or_default()
        .contains("line 06000 of"));
}

#[test]
fn a_line_longer_than_a_page_is_cut_inside_and_continued() {
    let f = big_fixture("paging-long", 10);
    let mut server = f.server();
    let (pages, whole) = all_pages(
        &mut server,
        "git_diff",
        r#"{"base":"HEAD~1","head":"HEAD","path":"long.txt"}"#,
    );
    // The headers, then the 166,671-byte line in three pieces.
    assert_eq!(pages.len(), 4);
    let direct = git(
        &f.root,
        &["diff", "--no-color", "HEAD~1", "HEAD", "--", "long.txt"],
    );
    // A line cut inside gets a newline of its own before the continuation line: two cuts.
    // (The helper trims git's last newline.)
    assert_eq!(
        whole.trim_end().matches('\n').count(),
        direct.matches('\n').count() + 2
    );
    assert!(whole.replace('\n', "") == direct.replace('\n', ""));
}

#[test]
fn offsets_past_the_end_and_out_of_range_say_so() {
    let f = big_fixture("paging-edges", 10);
    let mut server = f.server();
    let status = server.call("git_status", r#"{"offset":5000}"#).output();
    assert_eq!(
        status,
        "(nothing from offset=5000 on: the output has 11 bytes)"
    );
    let diff = server
        .call(
            "git_diff",
            r#"{"base":"HEAD~1","head":"HEAD","path":"a.txt","offset":0}"#,
        )
        .output();
    assert!(diff.starts_with("(no differences between HEAD~1 and HEAD"));
    let message = "offset must be an integer from 0 to 1099511627776";
    for bad in ["-1", "\"10\"", "1.5", "1099511627777", "true"] {
        server
            .call("git_log", &format!(r#"{{"offset":{bad}}}"#))
            .assert_error_contains(message);
    }
    // null is absent.
    assert!(server
        .call("git_log", r#"{"offset":null}"#)
        .output()
        .contains("big"));
}

#[test]
fn the_reference_answer_is_cut_once_and_ignores_offset() {
    let f = big_fixture("paging-reference", 6000);
    let mut server = f.reference_server();
    let arguments = r#"{"base":"HEAD~1","head":"HEAD","path":"big.txt"}"#;
    let first = server.call("git_diff", arguments);
    let output = first.output();
    assert!(output.ends_with("\n\u{2026}[truncated]"), "{output:?}");
    assert!(!output.contains("offset="));
    let with_offset = server.call(
        "git_diff",
        r#"{"base":"HEAD~1","head":"HEAD","path":"big.txt","offset":70000}"#,
    );
    assert_eq!(with_offset.text, first.text);
}

#[test]
fn git_file_pages_a_whole_file_by_offset_and_a_line_range_by_start() {
    let f = big_fixture("paging-file", 6000);
    let mut server = f.server();
    // A whole file: by byte, like every tool; the pages put together are the file.
    let (pages, _) = all_pages(&mut server, "git_file", r#"{"path":"big.txt"}"#);
    assert!(pages.len() >= 6);
    let header = |page: &str| {
        page.split_inclusive('\n')
            .next()
            .unwrap_or_default()
            .to_owned()
    };
    assert_eq!(
        header(&pages[0]),
        "big.txt at HEAD: 342000 bytes, 6000 lines\n"
    );
    assert!(header(&pages[1]).starts_with("big.txt at HEAD: 342000 bytes, 6000 lines (from byte "));
    // Each page: its header line, the file's bytes from its offset, the continuation line.
    let bodies: String = pages
        .iter()
        .map(|p| {
            p.split_inclusive('\n')
                .skip(1)
                .filter(|l| !l.starts_with("(cut at the output cap"))
                .collect::<String>()
        })
        .collect();
    let body = std::fs::read_to_string(f.root.join("big.txt")).expect("big.txt");
    assert!(bodies == body, "pages differ from the file");
    // One line longer than a page: continued inside the line, nothing skipped.
    let (pages, _) = all_pages(&mut server, "git_file", r#"{"path":"long.txt"}"#);
    assert_eq!(pages.len(), 3);
    // A line range: by line, its last line names start.
    let first = server.call("git_file", r#"{"path":"big.txt","start":1,"end":6000}"#);
    let next = first
        .structured
        .as_ref()
        .and_then(|s| s.get("next_start"))
        .and_then(Value::as_u64)
        .expect("a cut range names its next start");
    let text = first.output();
    assert!(text.ends_with(&format!(
        "line {:05} of the big file, padded to be a little longer\n\
         (cut at the output cap: call again with start={next} for the rest)",
        next - 1
    )));
    let rest = server
        .call(
            "git_file",
            &format!(r#"{{"path":"big.txt","start":{next},"end":6000}}"#),
        )
        .output();
    assert!(rest.contains(&format!("\nline {next:05} of the big file")));
    // A range whose first line is longer than a page: as much as fits, then the next line.
    let long = server.call("git_file", r#"{"path":"long.txt","start":1}"#);
    let text = long.output();
    assert!(text.ends_with("\n(cut at the output cap: call again with start=2 for the rest)"));
    assert!(text.len() <= 61440);
    // offset with a range is refused; past the end says so.
    server
        .call("git_file", r#"{"path":"big.txt","start":2,"offset":10}"#)
        .assert_error_contains("offset continues a whole-file read");
    assert_eq!(
        server
            .call("git_file", r#"{"path":"big.txt","offset":342000}"#)
            .output(),
        "big.txt at HEAD: 342000 bytes, 6000 lines (from byte 342000: past the end; the file has \
         342000 bytes)"
    );
}
