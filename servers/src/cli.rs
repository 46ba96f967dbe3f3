//! A small command-line argument reader: flags, `--name value` / `--name=value` options, and an
//! error for anything left unrecognised. Written here because the workspace takes no crates.

use crate::compat::Compat;
use agentteams_mcp::voice;
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
        self.finish_among(&[])
    }

    /// Fails if anything was not consumed; an unknown option gets the one of `options` it may
    /// stand for.
    pub fn finish_among(self, options: &[&str]) -> Result<(), UsageError> {
        match self.items.first() {
            None => Ok(()),
            Some(a) if a.starts_with('-') => {
                let name = a.split_once('=').map_or(a.as_str(), |(name, _)| name);
                let hint = voice::closest(name, options)
                    .map(|o| format!(" (did you mean {o}?)"))
                    .unwrap_or_default();
                Err(UsageError(format!("unknown option {a}{hint}")))
            }
            Some(a) => Err(UsageError(format!("unexpected argument {a}"))),
        }
    }
}

/// The usage error for `given` where one of `commands` was expected
/// ([`voice::unknown_command`]).
pub fn unknown_command(given: &str, commands: &[&str], give: Option<&str>) -> UsageError {
    UsageError(voice::unknown_command(given, commands, give))
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
    fn everything_after_double_dash_is_trailing() {
        let mut a = args("client tools -- server --root x");
        assert_eq!(a.positional().as_deref(), Some("client"));
        assert_eq!(a.trailing(), ["server", "--root", "x"]);
        assert_eq!(a.positional().as_deref(), Some("tools"));
        assert!(a.finish().is_ok());
    }
}
