//! How the binary speaks to people: every line it says starts [`PREFIX`], counts read `1 run`
//! and `2 runs`, a mistyped word gets the choice it most likely stands for, and a reader that went
//! away ends nothing.

/// What every line the binary says on stderr starts with, so an operator can grep one word; a
/// line about one part names it next (`agentteams-mcp: audit: ...`).
pub const PREFIX: &str = "agentteams-mcp: ";

/// Writes `line` and a newline to stdout, or to stderr when `to_stderr`. A reader that went
/// away (`--help | head -1`, a host that closed stderr) is no reason to fail, where `println!`
/// would panic: the exit code still says how the command went.
pub fn say(to_stderr: bool, line: &str) {
    use std::io::Write;
    let _ = if to_stderr {
        writeln!(std::io::stderr().lock(), "{line}")
    } else {
        writeln!(std::io::stdout().lock(), "{line}")
    };
}

/// A usage error `e` of `agentteams-mcp COMMAND` (`None`: the top level) as the one line it
/// prints, with where the help is.
pub fn usage_line(command: Option<&str>, e: &dyn std::fmt::Display) -> String {
    match command {
        Some(command) => {
            format!("{PREFIX}{command}: {e}; see agentteams-mcp {command} --help")
        }
        None => format!("{PREFIX}{e}; see agentteams-mcp --help"),
    }
}

/// The usage error for `given` where one of `commands` was expected: the one it most likely
/// stands for, else what to give instead (`give`, or the commands).
pub fn unknown_command(given: &str, commands: &[&str], give: Option<&str>) -> String {
    match closest(given, commands) {
        Some(command) => format!("unknown command {given} (did you mean {command}?)"),
        None => format!(
            "unknown command {given}; give {}",
            give.map_or_else(|| one_of(commands), str::to_owned)
        ),
    }
}

/// `a, b or c`.
pub fn one_of(choices: &[&str]) -> String {
    match choices.split_last() {
        None => String::new(),
        Some((last, [])) => (*last).to_owned(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

/// The choice `given` most likely stands for: one it begins (`--serve` for `--serve-mcp`), else
/// the nearest at most two edits away.
pub fn closest<'a>(given: &str, choices: &[&'a str]) -> Option<&'a str> {
    if given.len() >= 4 {
        let mut starting = choices.iter().filter(|c| c.starts_with(given));
        if let (Some(only), None) = (starting.next(), starting.next()) {
            return Some(only);
        }
    }
    choices
        .iter()
        .map(|c| (edit_distance(given, c), *c))
        .filter(|(d, _)| *d <= 2)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Levenshtein distance in characters.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

/// `n` and `noun`, plural unless `n` is 1.
pub fn counted(n: u64, noun: &str) -> String {
    format!("{n} {}", noun_for(n, noun))
}

/// `noun` as it reads after the count `n`: plural (an `s` added) unless `n` is 1.
pub fn noun_for(n: u64, noun: &str) -> String {
    match n {
        1 => noun.to_owned(),
        _ => format!("{noun}s"),
    }
}

/// The first `max` characters of `s`, then `…` when it was longer: another party's text quoted
/// in a message, never whole.
pub fn shortened(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_misses_name_the_choice() {
        let options = ["--serve-mcp", "--allow-tool", "--root"];
        assert_eq!(closest("--serve", &options), Some("--serve-mcp"));
        assert_eq!(closest("--allow-tools", &options), Some("--allow-tool"));
        assert_eq!(closest("--roto", &options), Some("--root"));
        assert_eq!(closest("--frobnicate", &options), None);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        let commands = ["index", "audit", "client"];
        assert_eq!(
            unknown_command("indx", &commands, None),
            "unknown command indx (did you mean index?)"
        );
        assert_eq!(
            unknown_command("zzzzzz", &commands, None),
            "unknown command zzzzzz; give index, audit or client"
        );
        assert_eq!(
            unknown_command("zzzzzz", &commands, Some("index or --serve-mcp NAME")),
            "unknown command zzzzzz; give index or --serve-mcp NAME"
        );
    }

    #[test]
    fn a_count_of_one_is_singular() {
        assert_eq!(counted(1, "run"), "1 run");
        assert_eq!(counted(0, "run"), "0 runs");
        assert_eq!(counted(2, "problem"), "2 problems");
        assert_eq!(noun_for(1, "problem"), "problem");
        assert_eq!(noun_for(7, "problem"), "problems");
    }
}
