//! A small programming thesaurus for the default ranking of code indexes: a plain word of a
//! question also finds the words codebases commonly use for the same thing (`delete` finds
//! `remove`, `settings` finds `config`), because questions are often asked in other words than
//! the code's.
//!
//! The groups were written from general knowledge of how codebases name things, before any
//! question's miss was read (see docs/recall.md, "Relevance"), and are kept small: a group is
//! words that name one operation or one kind of thing across languages and libraries, not words
//! that merely go together. A synonym found this way weighs less than the word as written
//! ([`super::relevance`] weights it by `SYNONYM_WEIGHT`).

use super::words::stem;
use std::sync::OnceLock;

/// The groups: each word of a group is a synonym of the others. Base forms; a question's word is
/// matched by its light stem ([`stem`]), so `deleted` and `deleting` find the `delete` group.
pub const GROUPS: &[&[&str]] = &[
    // Verbs: what code does.
    &["remove", "delete", "erase", "discard", "drop", "unset"],
    &["get", "fetch", "retrieve", "obtain", "lookup"],
    &["start", "begin", "launch", "spawn"],
    &[
        "stop",
        "terminate",
        "shutdown",
        "halt",
        "kill",
        "quit",
        "exit",
    ],
    &["cancel", "abort", "interrupt"],
    &["parse", "decode", "deserialize", "unmarshal", "unpack"],
    &[
        "serialize",
        "encode",
        "dump",
        "marshal",
        "pack",
        "stringify",
    ],
    &["create", "make", "new", "construct", "instantiate"],
    &["update", "modify", "change", "edit", "alter", "mutate"],
    &["find", "search", "locate", "lookup"],
    &["check", "validate", "verify", "ensure"],
    &["send", "transmit", "emit", "dispatch", "publish"],
    &["receive", "recv", "accept"],
    &["connect", "dial", "attach"],
    &["close", "disconnect", "release", "dispose"],
    &["copy", "clone", "duplicate", "dup"],
    &["compare", "equal", "cmp", "diff"],
    &["sort", "order", "rank"],
    &["merge", "combine", "join", "concat", "concatenate", "union"],
    &["split", "divide", "separate", "partition", "chunk"],
    &["convert", "transform", "cast", "coerce"],
    &["show", "display", "print", "render", "echo"],
    &["write", "save", "store", "persist"],
    &["read", "load"],
    &["wait", "sleep", "pause", "await", "delay"],
    &["retry", "reattempt", "repeat"],
    &["run", "execute", "exec", "invoke"],
    &["raise", "throw", "panic"],
    &["catch", "except", "rescue", "recover"],
    &["replace", "substitute", "swap"],
    &["add", "insert", "append", "push"],
    &["iterate", "traverse", "walk", "visit", "loop"],
    &["enable", "activate"],
    &["disable", "deactivate"],
    &["ignore", "skip", "omit", "exclude", "bypass"],
    &["hide", "hidden", "conceal", "invisible"],
    &["reset", "restore", "revert", "rollback", "undo"],
    &["setup", "initialize", "bootstrap", "prepare"],
    &["cleanup", "teardown", "finalize"],
    &["escape", "quote", "sanitize"],
    &["cache", "memoize", "memo"],
    &[
        "complete",
        "completion",
        "autocomplete",
        "suggest",
        "suggestion",
    ],
    &["prompt", "ask", "confirm"],
    &["redirect", "forward", "reroute"],
    // Nouns: what code handles.
    &["error", "exception", "failure", "fault", "err"],
    &["warning", "alert"],
    &[
        "settings",
        "config",
        "configuration",
        "options",
        "preferences",
        "conf",
        "cfg",
    ],
    &["option", "flag", "switch"],
    &["argument", "arg", "parameter", "param"],
    &["command", "cmd", "subcommand"],
    &["function", "func", "method", "callable", "procedure"],
    &["callback", "hook", "handler", "listener"],
    &["event", "signal", "notification", "trigger"],
    &["message", "msg"],
    &["identifier", "id", "uid"],
    &["type", "kind", "category"],
    &["list", "array", "slice", "sequence", "vector"],
    &["map", "dict", "dictionary", "hashmap"],
    &["string", "text"],
    &["directory", "folder", "dir"],
    &["url", "uri", "link", "address", "endpoint"],
    &["request", "req"],
    &["response", "resp", "reply"],
    &["password", "passwd", "secret", "credential"],
    &["authenticate", "auth", "login", "signin"],
    &["permission", "privilege", "access", "authorize"],
    &["certificate", "cert", "tls", "ssl"],
    &["hash", "digest", "checksum", "fingerprint"],
    &["timeout", "deadline", "expire", "ttl"],
    &["size", "length", "len", "count", "capacity"],
    &["limit", "max", "maximum", "bound", "threshold", "quota"],
    &["default", "fallback"],
    &["log", "logger"],
    &["help", "usage", "manual"],
    &["version", "release", "revision"],
    &["context", "ctx"],
    &["pattern", "regex", "regexp", "wildcard", "glob"],
    &["body", "payload", "content"],
    &["middleware", "interceptor", "wrapper", "decorator"],
    &["alias", "shorthand"],
];

/// Every word of [`GROUPS`] by its stem, sorted: `(stem, group)`. Made once per process from the
/// constant groups above (a few hundred entries), so nothing a repository holds can grow it.
fn by_stem() -> &'static [(&'static str, u16)] {
    static TABLE: OnceLock<Vec<(&'static str, u16)>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut table: Vec<(&'static str, u16)> = GROUPS
            .iter()
            .enumerate()
            .flat_map(|(group, words)| words.iter().map(move |w| (stem(w), group as u16)))
            .collect();
        table.sort_unstable();
        table.dedup();
        table
    })
}

/// The synonyms of `word`: every other word of each group holding a word with its stem, each
/// once, in group order. None for a word in no group.
pub fn synonyms(word: &str) -> impl Iterator<Item = &'static str> + '_ {
    let table = by_stem();
    let key = stem(word);
    let start = table.partition_point(|(s, _)| *s < key);
    let groups = table[start..]
        .iter()
        .take_while(move |(s, _)| *s == key)
        .map(|&(_, group)| GROUPS[usize::from(group)]);
    let mut seen: Vec<&'static str> = Vec::new();
    groups
        .flat_map(|words| words.iter().copied())
        .filter(move |w| {
            if stem(w) == key || seen.contains(w) {
                return false;
            }
            seen.push(w);
            true
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_word_finds_the_rest_of_its_group_by_stem() {
        let of = |w: &str| synonyms(w).collect::<Vec<_>>();
        assert_eq!(
            of("delete"),
            ["remove", "erase", "discard", "drop", "unset"]
        );
        // Its other forms find the same group, and never themselves.
        assert_eq!(of("deleted"), of("delete"));
        assert_eq!(of("deleting"), of("delete"));
        assert!(of("settings").contains(&"config"));
        assert!(!of("settings").contains(&"settings"));
        // A word in two groups finds both, each synonym once.
        let lookup = of("lookup");
        assert!(lookup.contains(&"fetch") && lookup.contains(&"search"));
        assert_eq!(
            lookup.len(),
            lookup
                .iter()
                .collect::<std::collections::HashSet<_>>()
                .len()
        );
        assert!(of("zebra").is_empty());
        assert!(of("").is_empty());
    }

    #[test]
    fn the_thesaurus_stays_small_and_its_groups_are_sets() {
        assert!(GROUPS.len() <= 80, "{} groups", GROUPS.len());
        for group in GROUPS {
            assert!(group.len() >= 2, "{group:?}");
            for (i, word) in group.iter().enumerate() {
                assert!(
                    word.bytes().all(|b| b.is_ascii_lowercase()),
                    "{word}: words are matched as the code tokenizer writes them"
                );
                // Two words of one group with one stem would only find each other by the stemmer.
                assert!(
                    group[..i].iter().all(|w| stem(w) != stem(word)),
                    "{group:?}"
                );
            }
        }
    }
}
