//! Strict DER reading of the few structures signature verification and ES256 signing need:
//! SubjectPublicKeyInfo (RFC 5280 §4.1.2.7) for RSA, P-256 and Ed25519 keys, RSAPublicKey
//! (RFC 8017 A.1.1), the ECDSA signature `SEQUENCE { r, s }` (RFC 3279 §2.2.3), and a P-256
//! private key as PKCS #8 PrivateKeyInfo (RFC 5208, RFC 5958 version 1) or SEC 1 ECPrivateKey
//! (RFC 5915).
//!
//! Strict means one encoding per value, as X.690 §10 requires of DER: definite lengths in the
//! fewest bytes (short form below 128, no leading zero in the long form), INTEGERs in the fewest
//! bytes and non-negative here, BIT STRINGs with no unused bits, and no byte after the outermost
//! value. BER forms (indefinite lengths, padded lengths or integers) are refused, as Wycheproof's
//! "BerEncodedSignature" vectors demand. There is no generic tree walk: each structure is read by
//! its own code, so nesting depth is fixed by the structure (at most three levels), and input
//! larger than [`MAX_DER_LEN`] is refused before it is read.

pub use super::asn1::{parse_ecdsa_signature, parse_rsa_public_key, MAX_DER_LEN};
use super::asn1::{Reader, TAG_CONTEXT_0, TAG_CONTEXT_1, TAG_NULL, TAG_OCTET_STRING, TAG_OID};
use super::error::Error;
use super::public_key::PublicKey;
use super::{ed25519, p256, rsa};

/// The length of a P-256 private key's OCTET STRING (RFC 5915 §3: ceiling(log2(n) / 8)).
const P256_SCALAR_LEN: usize = 32;

/// rsaEncryption, 1.2.840.113549.1.1.1 (RFC 3279 §2.3.1).
const OID_RSA_ENCRYPTION: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01];
/// id-ecPublicKey, 1.2.840.10045.2.1 (RFC 5480 §2.1.1).
const OID_EC_PUBLIC_KEY: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01];
/// secp256r1 (prime256v1), 1.2.840.10045.3.1.7 (RFC 5480 §2.1.1.1).
const OID_SECP256R1: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07];
/// id-Ed25519, 1.3.101.112 (RFC 8410 §3).
const OID_ED25519: &[u8] = &[0x2b, 0x65, 0x70];

/// A SubjectPublicKeyInfo holding an RSA (rsaEncryption), P-256 (id-ecPublicKey with the
/// secp256r1 parameter, uncompressed point) or Ed25519 key, checked as the key types require.
pub fn parse_spki(der: &[u8]) -> Result<PublicKey, Error> {
    let mut outer = Reader::new(der, "SubjectPublicKeyInfo")?;
    let mut spki = outer.read_sequence()?;
    outer.finish()?;
    let mut algorithm = spki.read_sequence()?;
    let key_bits = spki.read_bit_string()?;
    spki.finish()?;
    let oid = algorithm.read(TAG_OID)?;
    let key = match oid {
        OID_RSA_ENCRYPTION => {
            // RFC 3279 §2.3.1: the parameters MUST be NULL.
            if !algorithm.read(TAG_NULL)?.is_empty() {
                return Err(algorithm.err("NULL with contents"));
            }
            let (n, e) = parse_rsa_public_key(key_bits)?;
            PublicKey::Rsa(rsa::PublicKey::from_components(n, e)?)
        }
        OID_EC_PUBLIC_KEY => {
            if algorithm.read(TAG_OID)? != OID_SECP256R1 {
                return Err(Error::Unsupported("elliptic curve (only P-256)".into()));
            }
            PublicKey::P256(p256::PublicKey::from_sec1(key_bits)?)
        }
        OID_ED25519 => PublicKey::Ed25519(ed25519::PublicKey::from_bytes(key_bits)?),
        _ => return Err(Error::Unsupported("public key algorithm".into())),
    };
    // Ed25519 takes no parameters (RFC 8410 §3): whatever is left is an error for every type.
    algorithm.finish()?;
    Ok(key)
}

/// The parts of a P-256 private key read from DER, still unchecked as numbers: the 32-byte
/// big-endian scalar and, when the encoding carries it, the SEC 1 public point.
#[derive(Debug, PartialEq, Eq)]
pub struct P256PrivateKeyParts<'a> {
    pub scalar: &'a [u8; P256_SCALAR_LEN],
    pub public_point: Option<&'a [u8]>,
}

/// Reads a PKCS #8 PrivateKeyInfo (version 0) holding an id-ecPublicKey secp256r1 key: the form
/// of `-----BEGIN PRIVATE KEY-----` (`openssl genpkey -algorithm EC`). Attributes and the
/// version 2 public key member are refused as trailing bytes.
pub fn parse_pkcs8_p256(der: &[u8]) -> Result<P256PrivateKeyParts<'_>, Error> {
    let mut outer = Reader::new(der, "PKCS #8 private key")?;
    let mut info = outer.read_sequence()?;
    outer.finish()?;
    if !info.read_unsigned()?.is_empty() {
        return Err(info.err("version is not 0"));
    }
    let mut algorithm = info.read_sequence()?;
    if algorithm.read(TAG_OID)? != OID_EC_PUBLIC_KEY {
        return Err(Error::Unsupported(
            "private key algorithm (only EC P-256 signs here)".into(),
        ));
    }
    if algorithm.read(TAG_OID)? != OID_SECP256R1 {
        return Err(Error::Unsupported("elliptic curve (only P-256)".into()));
    }
    algorithm.finish()?;
    let inner = info.read(TAG_OCTET_STRING)?;
    info.finish()?;
    parse_ec_private_key(inner, "PKCS #8 private key", false)
}

/// Reads a SEC 1 ECPrivateKey (RFC 5915) standing alone: the form of
/// `-----BEGIN EC PRIVATE KEY-----` (`openssl ecparam -genkey`). Its curve parameters must be
/// present (RFC 5915 §3) and name secp256r1.
pub fn parse_sec1_p256(der: &[u8]) -> Result<P256PrivateKeyParts<'_>, Error> {
    parse_ec_private_key(der, "SEC 1 EC private key", true)
}

/// `ECPrivateKey ::= SEQUENCE { version 1, privateKey OCTET STRING, [0] ECParameters OPTIONAL,
/// [1] BIT STRING OPTIONAL }`; inside PKCS #8 the parameters may be left out (the outer
/// algorithm names the curve), alone they are required.
fn parse_ec_private_key<'a>(
    der: &'a [u8],
    what: &'static str,
    parameters_required: bool,
) -> Result<P256PrivateKeyParts<'a>, Error> {
    let mut outer = Reader::new(der, what)?;
    let mut key = outer.read_sequence()?;
    outer.finish()?;
    if key.read_unsigned()? != [1] {
        return Err(key.err("ECPrivateKey version is not 1"));
    }
    let scalar = key
        .read(TAG_OCTET_STRING)?
        .try_into()
        .map_err(|_| key.err("private key is not 32 bytes"))?;
    if key.next_tag() == Some(TAG_CONTEXT_0) {
        let mut parameters = key.read_nested(TAG_CONTEXT_0)?;
        if parameters.read(TAG_OID)? != OID_SECP256R1 {
            return Err(Error::Unsupported("elliptic curve (only P-256)".into()));
        }
        parameters.finish()?;
    } else if parameters_required {
        return Err(key.err("no curve parameters (RFC 5915 requires them)"));
    }
    let mut public_point = None;
    if key.next_tag() == Some(TAG_CONTEXT_1) {
        let mut public = key.read_nested(TAG_CONTEXT_1)?;
        public_point = Some(public.read_bit_string()?);
        public.finish()?;
    }
    key.finish()?;
    Ok(P256PrivateKeyParts {
        scalar,
        public_point,
    })
}

/// The DER of the curve OID alone, as `-----BEGIN EC PARAMETERS-----` holds it before an
/// OpenSSL SEC 1 key; `true` when it names secp256r1.
pub fn is_secp256r1_parameters(der: &[u8]) -> bool {
    Reader::new(der, "EC parameters").is_ok_and(|mut reader| {
        reader.read(TAG_OID).is_ok_and(|oid| oid == OID_SECP256R1) && reader.finish().is_ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::hex::from_hex;

    fn sig(hex: &str) -> Result<(Vec<u8>, Vec<u8>), Error> {
        parse_ecdsa_signature(&from_hex(hex).unwrap()).map(|(r, s)| (r.to_vec(), s.to_vec()))
    }

    #[test]
    fn minimal_signatures_parse_and_sign_bytes_are_stripped() {
        assert_eq!(sig("3006020101020102"), Ok((vec![1], vec![2])));
        assert_eq!(sig("30070202008002017f"), Ok((vec![0x80], vec![0x7f])));
        let long_r = format!("3081{:02x}027f{}020101", 0x7f + 2 + 3, "11".repeat(0x7f));
        assert_eq!(sig(&long_r).unwrap().0.len(), 0x7f);
    }

    #[test]
    fn ber_and_broken_encodings_are_refused_with_the_rule_named() {
        let cases = [
            ("", "ends early"),
            ("30", "ends early"),
            ("3080020101020102", "indefinite length (BER, not DER)"),
            ("308106020101020102", "long-form length below 128"),
            ("30820006020101020102", "length not in the fewest bytes"),
            ("3083000006020101020102", "length field too long"),
            ("3007020101020102", "length runs past the end"),
            ("300702020001020102", "INTEGER not in the fewest bytes"),
            ("3006020181020102", "negative INTEGER"),
            ("30050200020102", "empty INTEGER"),
            ("3006000101020102", "unexpected tag"),
            ("300602010102010200", "trailing bytes"),
            ("3007020101020102ff", "trailing bytes"),
            ("3009020101020102020103", "trailing bytes"),
        ];
        for (hex, rule) in cases {
            assert_eq!(
                sig(hex),
                Err(Error::malformed("ECDSA signature", rule)),
                "{hex}"
            );
        }
        let huge = vec![0x30; MAX_DER_LEN + 1];
        assert_eq!(
            parse_ecdsa_signature(&huge),
            Err(Error::malformed(
                "ECDSA signature",
                "longer than the DER size limit"
            ))
        );
    }

    #[test]
    fn spki_of_each_type_parses_and_unknown_algorithms_are_named() {
        // RFC 8410 §10.1's example Ed25519 key.
        let ed = from_hex("302a300506032b657003210019bf44096984cdfe8541bac167dc3b96c85086aa30b6b6cb0c5c38ad703166e1").unwrap();
        assert!(matches!(parse_spki(&ed), Ok(PublicKey::Ed25519(_))));
        // The same with a parameter after the OID, and with a BIT STRING that has unused bits.
        let ed_params = from_hex("302c300706032b65700500032100 19bf44096984cdfe8541bac167dc3b96c85086aa30b6b6cb0c5c38ad703166e1".replace(' ', "").as_str()).unwrap();
        assert_eq!(
            parse_spki(&ed_params).err(),
            Some(Error::malformed("SubjectPublicKeyInfo", "trailing bytes"))
        );
        let unused = from_hex("302a300506032b657003210119bf44096984cdfe8541bac167dc3b96c85086aa30b6b6cb0c5c38ad703166e1").unwrap();
        assert_eq!(
            parse_spki(&unused).err(),
            Some(Error::malformed(
                "SubjectPublicKeyInfo",
                "BIT STRING with unused bits"
            ))
        );
        // An X25519 key (1.3.101.110) is not a signature key.
        let x25519 = from_hex("302a300506032b656e03210019bf44096984cdfe8541bac167dc3b96c85086aa30b6b6cb0c5c38ad703166e1").unwrap();
        assert_eq!(
            parse_spki(&x25519).err(),
            Some(Error::Unsupported("public key algorithm".into()))
        );
    }

    #[test]
    fn every_truncation_of_a_valid_spki_is_an_error_not_a_panic() {
        let ed = from_hex("302a300506032b657003210019bf44096984cdfe8541bac167dc3b96c85086aa30b6b6cb0c5c38ad703166e1").unwrap();
        for len in 0..ed.len() {
            assert!(parse_spki(&ed[..len]).is_err(), "prefix of {len} bytes");
        }
        for i in 0..ed.len() {
            for flip in [0x01u8, 0x80, 0xff] {
                let mut bad = ed.clone();
                bad[i] ^= flip;
                // Key bytes may still form a valid key; structure bytes must not panic either way.
                let _ = parse_spki(&bad);
            }
        }
    }
}
