//! `--compat`: whose texts the servers answer with. One setting for the whole binary, carried to
//! every server through [`crate::ServeOptions`]; each server decides what it changes.

use agentteams_mcp::server::Wire;
use std::fmt;

/// Which texts a server answers with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Compat {
    /// The product's own texts (the default): messages that say what to do next.
    #[default]
    Product,
    /// `--compat reference`: the reference implementation's exact texts, for hosts that depend on
    /// them. Recall's missing-index messages and scores, gitread's tool declarations and answers,
    /// and the reference's wire ([`Compat::wire`]).
    Reference,
}

impl Compat {
    /// The command-line option.
    pub const OPTION: &'static str = "--compat";

    /// `set` in product mode, `None` under the reference: what a server's resource and prompt
    /// sets go through, so the reference's capabilities stay as they were (tools only).
    pub fn product_only<T: ?Sized>(self, set: &T) -> Option<&T> {
        (self == Compat::Product).then_some(set)
    }

    /// The engine's wire: the reference speaks the minimal one (tools only, loose params, replies
    /// in request order; docs/compatibility.md).
    pub fn wire(self) -> Wire {
        match self {
            Compat::Product => Wire::Full,
            Compat::Reference => Wire::Minimal,
        }
    }

    /// Parses the option's value; the error is the usage message.
    pub fn parse(value: &str) -> Result<Compat, String> {
        match value {
            "reference" => Ok(Compat::Reference),
            other => Err(format!(
                "{} takes `reference` (without it the servers answer with their own texts), not {other:?}",
                Compat::OPTION
            )),
        }
    }
}

impl fmt::Display for Compat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Compat::Product => "product",
            Compat::Reference => "reference",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_reference_is_a_value_and_the_default_is_the_product() {
        assert_eq!(Compat::default(), Compat::Product);
        assert_eq!(Compat::parse("reference"), Ok(Compat::Reference));
        assert_eq!(
            Compat::parse("ref").unwrap_err(),
            "--compat takes `reference` (without it the servers answer with their own texts), not \"ref\""
        );
        assert!(Compat::parse("").is_err());
        assert!(Compat::parse("Reference").is_err());
    }
}
