//! Why a key, signature or token was refused: the one error type of the crypto module.

use std::fmt;

/// Why a key, signature or token was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// An encoding does not follow its format: `what` was being read, `rule` is what it broke.
    Malformed {
        what: &'static str,
        rule: &'static str,
    },
    /// A well-formed key this module will not verify with (too small, too large, off the curve).
    KeyRejected(&'static str),
    /// An algorithm, key type or curve this module does not implement.
    Unsupported(String),
    /// A well-formed signature that does not verify with the key over the message.
    BadSignature,
    /// A token refused by the verification policy (an algorithm not accepted, `alg: none`, no key
    /// for its `kid`); the text says which rule.
    Refused(String),
}

impl Error {
    pub(crate) const fn malformed(what: &'static str, rule: &'static str) -> Error {
        Error::Malformed { what, rule }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Malformed { what, rule } => write!(f, "malformed {what}: {rule}"),
            Error::KeyRejected(why) => write!(f, "key rejected: {why}"),
            Error::Unsupported(what) => write!(f, "unsupported {what}"),
            Error::BadSignature => f.write_str("signature does not verify"),
            Error::Refused(why) => write!(f, "token refused: {why}"),
        }
    }
}

impl std::error::Error for Error {}
