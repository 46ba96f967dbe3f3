//! Scoped approvals: `--approve-scoped TOOL:SHA256` approves the one call of TOOL whose canonical
//! form ([`super::canonical`]) has that digest, and no other.

use crate::policy::Pattern;
use crate::sha256;
use std::fmt;

/// Most scoped approvals one server takes.
pub const MAX_SCOPED_APPROVALS: usize = 1024;

/// One approved call: the tool's exact name and the digest of the call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScopedApproval {
    pub tool: String,
    /// 64 lowercase hex digits.
    pub digest: String,
}

impl ScopedApproval {
    /// Parses `TOOL:SHA256`: an exact tool name (no wildcards: a scoped approval names one call
    /// of one tool) and 64 hex digits, either case (kept in lowercase).
    pub fn parse(text: &str) -> Result<ScopedApproval, ScopedError> {
        let fail = |why: String| ScopedError(format!("--approve-scoped {text:?}: {why}"));
        let Some((tool, digest)) = text.rsplit_once(':') else {
            return Err(fail("expected TOOL:SHA256".into()));
        };
        let pattern = Pattern::parse(tool).map_err(|e| fail(format!("tool name: {e}")))?;
        if !pattern.is_exact() {
            return Err(fail(
                "the tool must be named exactly, without * or ? (a scoped approval covers one call)"
                    .into(),
            ));
        }
        let digest = digest.to_ascii_lowercase();
        if !sha256::is_hex_digest(&digest) {
            return Err(fail(
                "the digest must be 64 hex digits (SHA-256 of the call's canonical form; see docs/approvals.md)"
                    .into(),
            ));
        }
        Ok(ScopedApproval {
            tool: tool.to_owned(),
            digest,
        })
    }
}

impl fmt::Display for ScopedApproval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.tool, self.digest)
    }
}

/// A scoped approval that cannot be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScopedError(pub String);

one_line_error!(ScopedError);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_and_digest_are_checked() {
        let d = "AB".repeat(32);
        let a = ScopedApproval::parse(&format!("write_note:{d}")).unwrap();
        assert_eq!(a.tool, "write_note");
        assert_eq!(a.digest, "ab".repeat(32));
        assert_eq!(a.to_string(), format!("write_note:{}", "ab".repeat(32)));
        let err = |t: &str| ScopedApproval::parse(t).unwrap_err().to_string();
        assert!(err("write_note").ends_with("expected TOOL:SHA256"));
        assert!(err(&format!("write_*:{d}")).contains("named exactly"));
        assert!(err("write_note:abc").contains("64 hex digits"));
        assert!(err(&format!(":{d}")).contains("tool name: pattern must not be empty"));
        assert!(err(&format!("a\u{1b}b:{d}")).contains("tool name: pattern"));
    }
}
