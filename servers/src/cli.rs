//! A small command-line argument reader: flags, `--name value` / `--name=value` options, and an
//! error for anything left unrecognised. Written here because the workspace takes no crates.

use crate::compat::Compat;
use std::fmt;

/// A usage error: what was wrong with the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// The arguments not yet consumed, in order. Everything after a bare `--` is positional.
#[derive(Debug, Clone)]
pub struct Args {
    items: Vec<String>,
    /// Arguments after `--`, never read as options.
    trailing: Vec<String>,
}

impl Args {
    pub fn new(args: impl IntoIterator<Item = String>) -> Args {
        let mut items: Vec<String> = args.into_iter().collect();
        let trailing = match items.iter().position(|a| a == "--") {
            Some(i) => {
                let rest = items.split_off(i);
                rest.into_iter().skip(1).collect()
            }
            None => Vec::new(),
        };
        Args { items, trailing }
    }

    /// Removes every occurrence of the flag `name`; true if there was one.
    pub fn flag(&mut self, name: &str) -> bool {
        let before = self.items.len();
        self.items.retain(|a| a != name);
        self.items.len() != before
    }

    /// Removes every `name VALUE` / `name=VALUE` and returns the values in order.
    pub fn values(&mut self, name: &str) -> Result<Vec<String>, UsageError> {
        let prefix = format!("{name}=");
        let mut found = Vec::new();
        let mut i = 0;
        while i < self.items.len() {
            if self.items[i] == name {
                if i + 1 >= self.items.len() {
                    return Err(UsageError(format!("{name} needs a value")));
                }
                let value = self.items.remove(i + 1);
                self.items.remove(i);
                found.push(value);
            } else if let Some(value) = self.items[i].strip_prefix(&prefix) {
                found.push(value.to_owned());
                self.items.remove(i);
            } else {
                i += 1;
            }
        }
        Ok(found)
    }

    /// The value of an option given at most once.
    pub fn value(&mut self, name: &str) -> Result<Option<String>, UsageError> {
        let mut values = self.values(name)?;
        if values.len() > 1 {
            return Err(UsageError(format!("{name} given more than once")));
        }
        Ok(values.pop())
    }

    /// The value of the first of several spellings of one option (e.g. `--root` and `--project`).
    pub fn value_any(&mut self, names: &[&str]) -> Result<Option<String>, UsageError> {
        let mut found: Option<(String, &str)> = None;
        for name in names {
            if let Some(v) = self.value(name)? {
                if let Some((_, other)) = &found {
                    return Err(UsageError(format!(
                        "{other} and {name} are the same option; give one"
                    )));
                }
                found = Some((v, name));
            }
        }
        Ok(found.map(|(v, _)| v))
    }

    /// Removes and returns the first argument that is not an option.
    pub fn positional(&mut self) -> Option<String> {
        let i = self.items.iter().position(|a| !a.starts_with("--"))?;
        Some(self.items.remove(i))
    }

    /// The arguments after `--`.
    pub fn trailing(&mut self) -> Vec<String> {
        std::mem::take(&mut self.trailing)
    }

    /// The first argument not yet consumed, if any.
    pub fn first_left(&self) -> Option<&str> {
        self.items.first().map(String::as_str)
    }

    /// Fails if anything was not consumed.
    pub fn finish(self) -> Result<(), UsageError> {
        match self.items.first() {
            None => Ok(()),
            Some(a) if a.starts_with('-') => Err(UsageError(format!("unknown option {a}"))),
            Some(a) => Err(UsageError(format!("unexpected argument {a}"))),
        }
    }
}

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

/// A usage error of `agentteams-mcp COMMAND` (`None`: the top level) as the one line it prints,
/// with where the help is.
pub fn usage_line(command: Option<&str>, e: &UsageError) -> String {
    match command {
        Some(command) => {
            format!("{PREFIX}{command}: {e}; see agentteams-mcp {command} --help")
        }
        None => format!("{PREFIX}{e}; see agentteams-mcp --help"),
    }
}

/// The usage error for `given` where one of `commands` was expected: the one it most likely
/// stands for, else what to give instead (`give`, or the commands).
pub fn unknown_command(given: &str, commands: &[&str], give: Option<&str>) -> UsageError {
    match closest(given, commands) {
        Some(command) => UsageError(format!("unknown command {given} (did you mean {command}?)")),
        None => UsageError(format!(
            "unknown command {given}; give {}",
            give.map_or_else(|| one_of(commands), str::to_owned)
        )),
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

/// The serve option `--compat MODE` (at most once): [`Compat::Product`] when absent; any mode but
/// `reference` is a usage error.
pub fn compat(args: &mut Args) -> Result<Compat, UsageError> {
    match args.value(Compat::OPTION)? {
        None => Ok(Compat::default()),
        Some(mode) => Compat::parse(&mode).map_err(UsageError),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Args {
        Args::new(s.split_whitespace().map(str::to_owned))
    }

    #[test]
    fn options_flags_and_leftovers() {
        let mut a = args("--serve-mcp gitread --root=/r --http --deny-tool a --deny-tool=b");
        assert_eq!(a.value("--serve-mcp").unwrap().as_deref(), Some("gitread"));
        assert_eq!(
            a.value_any(&["--root", "--project"]).unwrap().as_deref(),
            Some("/r")
        );
        assert!(a.flag("--http"));
        assert!(!a.flag("--stateless"));
        assert_eq!(a.values("--deny-tool").unwrap(), ["a", "b"]);
        assert!(a.finish().is_ok());
    }

    #[test]
    fn usage_errors_say_what_is_wrong() {
        assert_eq!(
            args("--root").value("--root").unwrap_err().0,
            "--root needs a value"
        );
        assert_eq!(
            args("--root a --root b").value("--root").unwrap_err().0,
            "--root given more than once"
        );
        assert_eq!(
            args("--root a --project b")
                .value_any(&["--root", "--project"])
                .unwrap_err()
                .0,
            "--root and --project are the same option; give one"
        );
        assert_eq!(
            args("--bogus").finish().unwrap_err().0,
            "unknown option --bogus"
        );
        assert_eq!(
            args("extra").finish().unwrap_err().0,
            "unexpected argument extra"
        );
    }

    #[test]
    fn compat_defaults_to_the_product_and_takes_only_reference() {
        assert_eq!(compat(&mut args("--root x")), Ok(Compat::Product));
        let mut a = args("--compat reference --root x");
        assert_eq!(compat(&mut a), Ok(Compat::Reference));
        assert_eq!(a.value("--root").unwrap().as_deref(), Some("x"));
        assert!(a.finish().is_ok());
        assert_eq!(
            compat(&mut args("--compat=reference")),
            Ok(Compat::Reference)
        );
        assert_eq!(
            compat(&mut args("--compat python")).unwrap_err().0,
            "--compat takes `reference` (without it the servers answer with their own texts), not \"python\""
        );
        assert_eq!(
            compat(&mut args("--compat")).unwrap_err().0,
            "--compat needs a value"
        );
        assert_eq!(
            compat(&mut args("--compat reference --compat reference"))
                .unwrap_err()
                .0,
            "--compat given more than once"
        );
    }

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
            unknown_command("indx", &commands, None).0,
            "unknown command indx (did you mean index?)"
        );
        assert_eq!(
            unknown_command("zzzzzz", &commands, None).0,
            "unknown command zzzzzz; give index, audit or client"
        );
        assert_eq!(
            unknown_command("zzzzzz", &commands, Some("index or --serve-mcp NAME")).0,
            "unknown command zzzzzz; give index or --serve-mcp NAME"
        );
    }

    #[test]
    fn everything_after_double_dash_is_trailing() {
        let mut a = args("client tools -- server --root x");
        assert_eq!(a.positional().as_deref(), Some("client"));
        assert_eq!(a.trailing(), ["server", "--root", "x"]);
        assert_eq!(a.positional().as_deref(), Some("tools"));
        assert!(a.finish().is_ok());
    }
}
