//! A verifying key of any supported type: what the DER and JWK readers return and JWS verifies
//! with.

use super::{ed25519, p256, rsa};

/// A public key of one of the supported types, as read from DER ([`der::parse_spki`](super::der::parse_spki)) or a JWK
/// ([`Jwk`](super::jwk::Jwk)).
#[derive(Clone, Debug)]
pub enum PublicKey {
    Rsa(rsa::PublicKey),
    P256(p256::PublicKey),
    Ed25519(ed25519::PublicKey),
}
