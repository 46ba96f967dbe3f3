//! The builder's passage extraction on arbitrary text: for every language it reads (Python's
//! header tokenizer and printer, shell, the line scanners), and with no language (the generic
//! blocks), it never panics or hangs, keeps at most `MAX_PASSAGES` passages of at most
//! `PASSAGE_CHARS` characters, and the stored snippet is a prefix of the first passage.
#![no_main]

use agentteams_mcp_servers::index::passages::{passages, snippet, MAX_PASSAGES, PASSAGE_CHARS};
use libfuzzer_sys::fuzz_target;

const LANGUAGES: [Option<&str>; 11] = [
    None,
    Some("python"),
    Some("shell"),
    Some("rust"),
    Some("go"),
    Some("javascript"),
    Some("typescript"),
    Some("java"),
    Some("c"),
    Some("cpp"),
    Some("ruby"),
];

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for language in LANGUAGES {
        let found = passages(text, language);
        assert!(found.len() <= MAX_PASSAGES, "{language:?}");
        for passage in &found {
            assert!(passage.chars().count() <= PASSAGE_CHARS, "{language:?}");
        }
        let stored = snippet(&found, text);
        if let Some(first) = found.first() {
            assert!(first.starts_with(&stored), "{language:?}");
        }
    }
});
