//! What a valid token grants, and the principal the audit log and session binding name it by:
//! the leaf the validators (JWT, introspection, the cache) share.

use crate::crypto::jwt::MAX_SCOPES;
use crate::crypto::sha256;

/// How a [`Grant::principal`] begins; [`PRINCIPAL_DIGEST_BYTES`] bytes as lower-case hex follow.
pub const PRINCIPAL_PREFIX: &str = "sha256:";
/// Bytes of the digest a principal names (the first half of a SHA-256): 128 bits, so two
/// subjects never share a principal by chance.
pub const PRINCIPAL_DIGEST_BYTES: usize = 16;

/// What a valid token grants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    /// The authorization server that issued it.
    pub issuer: String,
    /// `sub` (introspection without `sub`: `client_id`); never empty, so that no two callers
    /// share a principal for naming no one.
    pub subject: String,
    pub scopes: Vec<String>,
    /// `exp`, when known.
    pub expires_at: Option<u64>,
}

impl Grant {
    /// Whom the token speaks for, as the audit log and session binding name them:
    /// [`PRINCIPAL_PREFIX`] and the first [`PRINCIPAL_DIGEST_BYTES`] of SHA-256(issuer, newline,
    /// subject) as hex. The subject itself (often an e-mail address) is not written; an operator
    /// who knows it can compute the digest.
    pub fn principal(&self) -> String {
        let digest = sha256::digest(format!("{}\n{}", self.issuer, self.subject).as_bytes());
        format!(
            "{PRINCIPAL_PREFIX}{}",
            sha256::to_hex(&digest[..PRINCIPAL_DIGEST_BYTES])
        )
    }
}

/// `scope` split on spaces, each once, at most [`MAX_SCOPES`].
pub(crate) fn split_scopes(text: &str) -> Result<Vec<String>, String> {
    let mut scopes: Vec<String> = Vec::new();
    for scope in text.split(' ').filter(|s| !s.is_empty()) {
        if scopes.len() == MAX_SCOPES {
            return Err(format!("more than {MAX_SCOPES} scopes"));
        }
        if !scopes.iter().any(|s| s == scope) {
            scopes.push(scope.to_owned());
        }
    }
    Ok(scopes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn principals_are_digests_of_issuer_and_subject() {
        let grant = |iss: &str, sub: &str| Grant {
            issuer: iss.into(),
            subject: sub.into(),
            scopes: vec![],
            expires_at: None,
        };
        let a = grant("http://as", "alice").principal();
        assert!(a.starts_with("sha256:") && a.len() == 7 + 32);
        assert!(!a.contains("alice"));
        assert_ne!(a, grant("http://other", "alice").principal());
        assert_ne!(a, grant("http://as", "bob").principal());
    }

    #[test]
    fn scopes_split_once_each_within_the_bound() {
        assert_eq!(split_scopes(" a b  a ").unwrap(), ["a", "b"]);
        let many: Vec<String> = (0..=MAX_SCOPES).map(|i| format!("s{i}")).collect();
        assert!(split_scopes(&many.join(" ")).is_err());
    }
}
