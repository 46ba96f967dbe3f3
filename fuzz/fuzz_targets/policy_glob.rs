//! The policy's glob matcher against a reference (dynamic programming over pattern × name), and
//! arbitrary bytes as a policy file (an answer or an error, never a panic).
#![no_main]

use agentteams_mcp::policy::{Pattern, Policy};
use agentteams_mcp::server::Annotations;
use libfuzzer_sys::fuzz_target;

/// Whether `name` matches `pattern` (`*` any run, `?` one character), by the textbook table.
fn reference(pattern: &[char], name: &[char]) -> bool {
    // matches[j]: the pattern so far matches name[..j].
    let mut matches = vec![false; name.len() + 1];
    matches[0] = true;
    for &p in pattern {
        let mut next = vec![false; name.len() + 1];
        for j in 0..=name.len() {
            next[j] = match p {
                '*' => matches[j] || (j > 0 && next[j - 1]),
                _ => j > 0 && matches[j - 1] && (p == '?' || p == name[j - 1]),
            };
        }
        matches = next;
    }
    matches[name.len()]
}

fuzz_target!(|data: &[u8]| {
    let Some((&split, rest)) = data.split_first() else {
        return;
    };
    let split = usize::from(split).min(rest.len());
    // A small alphabet makes matches and near-misses common.
    let pattern: String = rest[..split]
        .iter()
        .map(|b| ['a', 'b', '*', '?'][usize::from(b % 4)])
        .collect();
    let name: String = rest[split..]
        .iter()
        .map(|b| ['a', 'b'][usize::from(b % 2)])
        .collect();
    if let Ok(parsed) = Pattern::parse(&pattern) {
        let p: Vec<char> = pattern.chars().collect();
        let n: Vec<char> = name.chars().collect();
        assert_eq!(
            parsed.matches(&name),
            reference(&p, &n),
            "{pattern:?} {name:?}"
        );
    }
    let mut policy = Policy::new();
    if policy.add_json(data).is_ok() {
        for tool in ["git_log", "", "fs_write"] {
            let decision = policy.decide(tool, &Annotations::READ_ONLY);
            let _ = decision.refusal_message(tool);
        }
    }
});
