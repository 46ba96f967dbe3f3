//! Strict DER reading (X.690 §10): one tag-length-value at a time, definite lengths in the fewest
//! bytes, non-negative INTEGERs in the fewest bytes, and the `SEQUENCE { INTEGER, INTEGER }` of an
//! ECDSA signature and an RSAPublicKey. The leaf under [`der`](super::der) (the key structures)
//! and [`p256`](super::p256) (which reads its signatures here), so neither imports the other.

use super::error::Error;

/// The largest DER input read: an 8192-bit RSA SubjectPublicKeyInfo is about 1.1 KB.
pub const MAX_DER_LEN: usize = 4096;

/// The longest length field read, in bytes after the first: 2 bytes cover [`MAX_DER_LEN`].
const MAX_LENGTH_BYTES: usize = 2;

const TAG_INTEGER: u8 = 0x02;
const TAG_BIT_STRING: u8 = 0x03;
pub(super) const TAG_NULL: u8 = 0x05;
pub(super) const TAG_OID: u8 = 0x06;
pub(super) const TAG_OCTET_STRING: u8 = 0x04;
const TAG_SEQUENCE: u8 = 0x30;
/// `[0]` and `[1]`, constructed (explicit tagging): ECPrivateKey's parameters and public key.
pub(super) const TAG_CONTEXT_0: u8 = 0xa0;
pub(super) const TAG_CONTEXT_1: u8 = 0xa1;

/// A cursor over DER bytes that reads one tag-length-value at a time.
pub(super) struct Reader<'a> {
    input: &'a [u8],
    what: &'static str,
}

impl<'a> Reader<'a> {
    pub(super) fn new(input: &'a [u8], what: &'static str) -> Result<Reader<'a>, Error> {
        if input.len() > MAX_DER_LEN {
            return Err(Error::malformed(what, "longer than the DER size limit"));
        }
        Ok(Reader { input, what })
    }

    pub(super) fn err(&self, rule: &'static str) -> Error {
        Error::malformed(self.what, rule)
    }

    /// The contents of the next value, which must carry `tag`.
    pub(super) fn read(&mut self, tag: u8) -> Result<&'a [u8], Error> {
        let (&found, rest) = self.input.split_first().ok_or(self.err("ends early"))?;
        if found != tag {
            return Err(self.err("unexpected tag"));
        }
        let (&first, mut rest) = rest.split_first().ok_or(self.err("ends early"))?;
        let len = if first < 0x80 {
            usize::from(first)
        } else {
            let count = usize::from(first & 0x7f);
            if count == 0 {
                return Err(self.err("indefinite length (BER, not DER)"));
            }
            if count > MAX_LENGTH_BYTES || rest.len() < count {
                return Err(self.err("length field too long"));
            }
            let (digits, after) = rest.split_at(count);
            rest = after;
            if digits[0] == 0 {
                return Err(self.err("length not in the fewest bytes"));
            }
            let len = digits
                .iter()
                .fold(0usize, |acc, &d| (acc << 8) | usize::from(d));
            if len < 0x80 {
                return Err(self.err("long-form length below 128"));
            }
            len
        };
        if rest.len() < len {
            return Err(self.err("length runs past the end"));
        }
        let (contents, after) = rest.split_at(len);
        self.input = after;
        Ok(contents)
    }

    /// A non-negative INTEGER's magnitude, without the sign byte.
    pub(super) fn read_unsigned(&mut self) -> Result<&'a [u8], Error> {
        let contents = self.read(TAG_INTEGER)?;
        match contents {
            [] => Err(self.err("empty INTEGER")),
            [first, ..] if first & 0x80 != 0 => Err(self.err("negative INTEGER")),
            [0, second, ..] if second & 0x80 == 0 => {
                Err(self.err("INTEGER not in the fewest bytes"))
            }
            [0, rest @ ..] => Ok(rest),
            _ => Ok(contents),
        }
    }

    /// A BIT STRING's bytes; one with unused bits has no meaning here.
    pub(super) fn read_bit_string(&mut self) -> Result<&'a [u8], Error> {
        match self.read(TAG_BIT_STRING)? {
            [0, bytes @ ..] => Ok(bytes),
            [] => Err(self.err("empty BIT STRING")),
            _ => Err(self.err("BIT STRING with unused bits")),
        }
    }

    /// The tag of the next value, if any (for the OPTIONAL members of ECPrivateKey).
    pub(super) fn next_tag(&self) -> Option<u8> {
        self.input.first().copied()
    }

    /// A nested reader over the contents of the next value, which must carry `tag`.
    pub(super) fn read_nested(&mut self, tag: u8) -> Result<Reader<'a>, Error> {
        let contents = self.read(tag)?;
        Ok(Reader {
            input: contents,
            what: self.what,
        })
    }

    /// A nested reader over the contents of the next SEQUENCE.
    pub(super) fn read_sequence(&mut self) -> Result<Reader<'a>, Error> {
        self.read_nested(TAG_SEQUENCE)
    }

    pub(super) fn finish(&self) -> Result<(), Error> {
        if self.input.is_empty() {
            Ok(())
        } else {
            Err(self.err("trailing bytes"))
        }
    }
}

/// The two non-negative INTEGERs of a `SEQUENCE { INTEGER, INTEGER }`, as big-endian magnitudes.
fn parse_integer_pair<'a>(
    der: &'a [u8],
    what: &'static str,
) -> Result<(&'a [u8], &'a [u8]), Error> {
    let mut outer = Reader::new(der, what)?;
    let mut pair = outer.read_sequence()?;
    outer.finish()?;
    let first = pair.read_unsigned()?;
    let second = pair.read_unsigned()?;
    pair.finish()?;
    Ok((first, second))
}

/// The big-endian magnitudes of `n` and `e` of a PKCS#1 RSAPublicKey.
pub fn parse_rsa_public_key(der: &[u8]) -> Result<(&[u8], &[u8]), Error> {
    parse_integer_pair(der, "RSAPublicKey")
}

/// The big-endian magnitudes of `r` and `s` of a DER ECDSA signature.
pub fn parse_ecdsa_signature(der: &[u8]) -> Result<(&[u8], &[u8]), Error> {
    parse_integer_pair(der, "ECDSA signature")
}
