//! A SHA-2 function chosen at run time, as a JOSE algorithm names it.

use super::digest::Digest;
use super::{sha256, sha512};

/// The hash functions the JOSE signature algorithms name (RS256/PS256/ES256 use SHA-256, and so
/// on), chosen at run time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HashAlg {
    Sha256,
    Sha384,
    Sha512,
}

impl HashAlg {
    /// The digest length in bytes.
    pub fn output_len(self) -> usize {
        match self {
            HashAlg::Sha256 => 32,
            HashAlg::Sha384 => 48,
            HashAlg::Sha512 => 64,
        }
    }

    /// The digest of the concatenation of `parts`.
    pub fn digest_parts(self, parts: &[&[u8]]) -> Vec<u8> {
        fn run<D: Digest>(parts: &[&[u8]]) -> Vec<u8> {
            let mut h = D::new();
            for part in parts {
                h.update(part);
            }
            h.finish().as_ref().to_vec()
        }
        match self {
            HashAlg::Sha256 => run::<sha256::Sha256>(parts),
            HashAlg::Sha384 => run::<sha512::Sha384>(parts),
            HashAlg::Sha512 => run::<sha512::Sha512>(parts),
        }
    }

    pub fn digest(self, data: &[u8]) -> Vec<u8> {
        self.digest_parts(&[data])
    }
}
