//! ECDSA signing on P-256 with SHA-256 (ES256) for `private_key_jwt` client authentication: the
//! one place a private key is used, written so that no branch and no memory index depends on it.
//!
//! # What is constant time, and what is not
//!
//! Constant time (no secret-dependent branch, loop bound or memory index):
//! - field arithmetic mod p and mod n (`Modulus`): fixed four-limb Montgomery multiplication
//!   (CIOS) whose final subtraction is chosen by a mask, additions and subtractions corrected by
//!   masks, inversion by Fermat's little theorem with the fixed, public exponent `m - 2`;
//! - point arithmetic: projective coordinates and the complete addition formula of Renes, Costello
//!   and Batina (2016, algorithm 4, `a = -3`), which has no exceptional case (identity, doubling,
//!   opposite points all go through the same 12 multiplications), used for doubling too;
//! - scalar multiplication: a fixed window of 4 bits, 64 windows for every scalar, each window's
//!   table entry read by scanning all 16 entries and keeping one with masks;
//! - the conversion of the secret scalar and the nonce between bytes and limbs
//!   (`u64::from_be_bytes`, no leading-zero scan), and the signature equation
//!   `s = k^-1 (e + r d) mod n`.
//!
//! Not constant time, because the data is public or the leak is negligible:
//! - hashing the message (the message and its hash are public; SHA-256 and HMAC-SHA-256 have no
//!   data-dependent branches or table indices anyway, so the RFC 6979 generator's use of the key
//!   in HMAC is constant time too);
//! - the RFC 6979 retry when a candidate nonce is not in `[1, n-1]` (probability below 2^-32 per
//!   candidate) and the retry when `r` or `s` is zero (probability about 2^-256): each branches on
//!   a single bit that is public anyway for `r` and `s`, and reveals nothing usable for `k`;
//! - reading and checking a key (`d` in `[1, n-1]`, the public key matching): a refused key is
//!   reported, an accepted one is not distinguishable by that check's timing beyond "valid";
//! - converting the result point to affine coordinates inverts Z by Fermat (constant time), but
//!   `r` and `s` are then public outputs.
//!
//! `u64 * u64 -> u128` multiplication is assumed constant time: on x86-64 (`MUL`) and AArch64
//! (`MUL`/`UMULH`) it is on every core in current use; the targets where it is not (some 32-bit
//! ARM and early PowerPC cores) are not targets of this project. Masks go through
//! [`std::hint::black_box`] so the optimizer cannot see they are all-ones or all-zero and turn a
//! selection back into a branch; that is a best effort (Rust gives no constant-time guarantee),
//! and the `p256_sign_timing` example checks it with a dudect-style Welch t-test.
//!
//! Nonces are deterministic (RFC 6979 §3.2 with HMAC-SHA-256), so signing needs no random source
//! and the same key and message always give the same signature; `s` is not normalized to the low
//! half (JOSE, RFC 7518 §3.4, does not require it, and every ECDSA verifier accepts both halves),
//! so the RFC 6979 appendix A.2.5 vectors are reproduced exactly.
//!
//! The key is overwritten when dropped, as a best effort: without unsafe code Rust cannot promise
//! that no copy is left in registers, on the stack or in a moved-from place.

use super::error::Error;
use super::field::{u256_from_hex, U256};
use super::hmac::HmacSha256;
use super::{bignum, p256};
use crate::crypto::sha256;
use std::hint::black_box;
use std::sync::OnceLock;

/// The length of a P-256 private scalar and of each coordinate, in bytes.
pub const SCALAR_LEN: usize = 32;

/// Scalar multiplication reads this many bits of the scalar per table lookup.
const WINDOW_BITS: usize = 4;
/// The table of multiples 0P .. 15P one window selects from.
const WINDOW_TABLE: usize = 1 << WINDOW_BITS;
/// Windows per 256-bit scalar.
const WINDOWS: usize = 256 / WINDOW_BITS;

/// All ones when `bit` is 1, zero when it is 0 (`bit` must be 0 or 1).
#[inline(always)]
fn mask(bit: u64) -> u64 {
    black_box(0u64.wrapping_sub(bit))
}

/// 1 when `a == b`, else 0, without a comparison the compiler could turn into a branch.
#[inline(always)]
fn equal_bit(a: u64, b: u64) -> u64 {
    let x = a ^ b;
    1 ^ ((x | x.wrapping_neg()) >> 63)
}

/// `a` where `mask` is all ones, `b` where it is zero.
#[inline(always)]
fn select(mask: u64, a: &U256, b: &U256) -> U256 {
    let mut out = [0u64; 4];
    for i in 0..4 {
        out[i] = (a[i] & mask) | (b[i] & !mask);
    }
    out
}

/// `a + b` and the carry out (0 or 1).
#[inline(always)]
fn add_limbs(a: &U256, b: &U256) -> (U256, u64) {
    let mut out = [0u64; 4];
    let mut carry = 0u64;
    for i in 0..4 {
        let sum = u128::from(a[i]) + u128::from(b[i]) + u128::from(carry);
        out[i] = sum as u64;
        carry = (sum >> 64) as u64;
    }
    (out, carry)
}

/// `a - b` and the borrow out (0 or 1).
#[inline(always)]
fn sub_limbs(a: &U256, b: &U256) -> (U256, u64) {
    let mut out = [0u64; 4];
    let mut borrow = 0u64;
    for i in 0..4 {
        let diff = u128::from(a[i])
            .wrapping_sub(u128::from(b[i]))
            .wrapping_sub(u128::from(borrow));
        out[i] = diff as u64;
        borrow = ((diff >> 64) as u64) & 1;
    }
    (out, borrow)
}

/// 1 when `a` is zero, else 0.
#[inline(always)]
fn zero_bit(a: &U256) -> u64 {
    equal_bit(a[0] | a[1] | a[2] | a[3], 0)
}

/// 32 big-endian bytes as limbs, with no scan for leading zeros (the bytes may be secret).
fn limbs_from_bytes(bytes: &[u8; SCALAR_LEN]) -> U256 {
    let mut out = [0u64; 4];
    for (i, chunk) in bytes.chunks_exact(8).enumerate() {
        out[3 - i] = u64::from_be_bytes(chunk.try_into().expect("8 bytes"));
    }
    out
}

/// Limbs as 32 big-endian bytes.
fn bytes_from_limbs(limbs: &U256) -> [u8; SCALAR_LEN] {
    let mut out = [0u8; SCALAR_LEN];
    for (i, chunk) in out.chunks_exact_mut(8).enumerate() {
        chunk.copy_from_slice(&limbs[3 - i].to_be_bytes());
    }
    out
}

/// A prime modulus above 2^255 (P-256's p and n), for constant-time Montgomery arithmetic.
/// Every element taken or returned is below `m`, in Montgomery form unless a method says not.
struct Modulus {
    m: U256,
    /// `-m^-1 mod 2^64`.
    m_inv: u64,
    /// `2^512 mod m`, which takes a value into Montgomery form.
    r2: U256,
    /// `m - 2`: the public exponent of inversion by Fermat.
    inversion_exponent: U256,
}

impl Modulus {
    fn new(hex: &str) -> Modulus {
        let m = u256_from_hex(hex);
        let m_inv = bignum::neg_inverse_u64(m[0]);
        let r2 = bignum::r_squared(&m, m_inv)
            .try_into()
            .expect("four limbs for a four-limb modulus");
        let (inversion_exponent, _) = sub_limbs(&m, &[2, 0, 0, 0]);
        Modulus {
            m,
            m_inv,
            r2,
            inversion_exponent,
        }
    }

    /// `a mod m` for any 256-bit `a`: one subtraction suffices because `m > 2^255`.
    fn reduce(&self, a: &U256) -> U256 {
        let (diff, borrow) = sub_limbs(a, &self.m);
        select(mask(borrow), a, &diff)
    }

    /// Montgomery multiplication `a b / 2^256 mod m` (coarsely integrated operand scanning).
    fn mul(&self, a: &U256, b: &U256) -> U256 {
        let m = &self.m;
        // t holds the running value, below 2m, in six limbs.
        let mut t = [0u64; 6];
        for &bi in b {
            let mut carry = 0u64;
            for j in 0..4 {
                let v = u128::from(t[j]) + u128::from(a[j]) * u128::from(bi) + u128::from(carry);
                t[j] = v as u64;
                carry = (v >> 64) as u64;
            }
            let v = u128::from(t[4]) + u128::from(carry);
            t[4] = v as u64;
            t[5] = (v >> 64) as u64;
            // Add q m with q chosen so the low limb becomes zero, then shift down one limb.
            let q = t[0].wrapping_mul(self.m_inv);
            let v = u128::from(t[0]) + u128::from(q) * u128::from(m[0]);
            let mut carry = (v >> 64) as u64;
            for j in 1..4 {
                let v = u128::from(t[j]) + u128::from(q) * u128::from(m[j]) + u128::from(carry);
                t[j - 1] = v as u64;
                carry = (v >> 64) as u64;
            }
            let v = u128::from(t[4]) + u128::from(carry);
            t[3] = v as u64;
            t[4] = t[5] + (v >> 64) as u64;
        }
        let low = [t[0], t[1], t[2], t[3]];
        let (diff, borrow) = sub_limbs(&low, m);
        // Keep t only when it is below m: no carry limb and the subtraction borrowed.
        select(mask(borrow & (t[4] ^ 1)), &low, &diff)
    }

    fn add(&self, a: &U256, b: &U256) -> U256 {
        let (sum, carry) = add_limbs(a, b);
        let (diff, borrow) = sub_limbs(&sum, &self.m);
        select(mask(borrow & (carry ^ 1)), &sum, &diff)
    }

    fn sub(&self, a: &U256, b: &U256) -> U256 {
        let (diff, borrow) = sub_limbs(a, b);
        let correction = select(mask(borrow), &self.m, &[0; 4]);
        add_limbs(&diff, &correction).0
    }

    /// The Montgomery form of `a mod m`, `a` any 256-bit value.
    fn to_mont(&self, a: &U256) -> U256 {
        self.mul(&self.reduce(a), &self.r2)
    }

    /// The plain value of a Montgomery form.
    fn out_of_mont(&self, a: &U256) -> U256 {
        self.mul(a, &[1, 0, 0, 0])
    }

    /// `a^-1` as `a^(m-2)`: the exponent is the public modulus, so its bits may steer the loop.
    fn invert(&self, a: &U256) -> U256 {
        let e = &self.inversion_exponent;
        let mut acc = self.to_mont(&[1, 0, 0, 0]);
        for i in (0..256).rev() {
            acc = self.mul(&acc, &acc);
            if (e[i / 64] >> (i % 64)) & 1 == 1 {
                acc = self.mul(&acc, a);
            }
        }
        acc
    }
}

struct Curve {
    p: Modulus,
    n: Modulus,
    /// The coefficient b, Montgomery form mod p.
    b: U256,
    g: Point,
}

fn curve() -> &'static Curve {
    static CURVE: OnceLock<Curve> = OnceLock::new();
    CURVE.get_or_init(|| {
        // FIPS 186-5 / SP 800-186 §3.2.1.3.
        let p = Modulus::new("ffffffff00000001000000000000000000000000ffffffffffffffffffffffff");
        let n = Modulus::new("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551");
        let b = p.to_mont(&u256_from_hex(
            "5ac635d8aa3a93e7b3ebbd55769886bc651d06b0cc53b0f63bce3c3e27d2604b",
        ));
        let g = Point {
            x: p.to_mont(&u256_from_hex(
                "6b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296",
            )),
            y: p.to_mont(&u256_from_hex(
                "4fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5",
            )),
            z: p.to_mont(&[1, 0, 0, 0]),
        };
        Curve { p, n, b, g }
    })
}

/// A point in homogeneous projective coordinates `(X/Z, Y/Z)`, Montgomery form mod p; the
/// identity is `(0 : 1 : 0)`.
#[derive(Clone, Copy, Debug)]
struct Point {
    x: U256,
    y: U256,
    z: U256,
}

impl Point {
    fn identity() -> Point {
        Point {
            x: [0; 4],
            y: curve().p.to_mont(&[1, 0, 0, 0]),
            z: [0; 4],
        }
    }

    #[cfg(test)]
    /// A point from affine coordinates given as plain values below p (already checked on the
    /// curve by [`p256::PublicKey`]).
    fn from_public_key(key: &p256::PublicKey) -> Point {
        let p = &curve().p;
        let (x, y) = key.coordinates();
        Point {
            x: p.to_mont(&limbs_from_bytes(&x)),
            y: p.to_mont(&limbs_from_bytes(&y)),
            z: p.to_mont(&[1, 0, 0, 0]),
        }
    }

    /// The complete addition of Renes, Costello and Batina (eprint 2015/1060, algorithm 4, for
    /// `a = -3`): correct for every pair of points, the identity and `self == other` included.
    fn add(&self, other: &Point) -> Point {
        let c = curve();
        let f = &c.p;
        let (x1, y1, z1) = (&self.x, &self.y, &self.z);
        let (x2, y2, z2) = (&other.x, &other.y, &other.z);
        let xx = f.mul(x1, x2);
        let yy = f.mul(y1, y2);
        let zz = f.mul(z1, z2);
        let xy_pairs = f.sub(&f.mul(&f.add(x1, y1), &f.add(x2, y2)), &f.add(&xx, &yy));
        let yz_pairs = f.sub(&f.mul(&f.add(y1, z1), &f.add(y2, z2)), &f.add(&yy, &zz));
        let xz_pairs = f.sub(&f.mul(&f.add(x1, z1), &f.add(x2, z2)), &f.add(&xx, &zz));
        let bzz_part = f.sub(&xz_pairs, &f.mul(&c.b, &zz));
        let bzz3_part = f.add(&f.add(&bzz_part, &bzz_part), &bzz_part);
        let yy_m_bzz3 = f.sub(&yy, &bzz3_part);
        let yy_p_bzz3 = f.add(&yy, &bzz3_part);
        let zz3 = f.add(&f.add(&zz, &zz), &zz);
        let bxz_part = f.sub(&f.mul(&c.b, &xz_pairs), &f.add(&zz3, &xx));
        let bxz3_part = f.add(&f.add(&bxz_part, &bxz_part), &bxz_part);
        let xx3_m_zz3 = f.sub(&f.add(&f.add(&xx, &xx), &xx), &zz3);
        Point {
            x: f.sub(&f.mul(&yy_p_bzz3, &xy_pairs), &f.mul(&yz_pairs, &bxz3_part)),
            y: f.add(
                &f.mul(&yy_p_bzz3, &yy_m_bzz3),
                &f.mul(&xx3_m_zz3, &bxz3_part),
            ),
            z: f.add(&f.mul(&yy_m_bzz3, &yz_pairs), &f.mul(&xy_pairs, &xx3_m_zz3)),
        }
    }

    fn select(mask: u64, a: &Point, b: &Point) -> Point {
        Point {
            x: select(mask, &a.x, &b.x),
            y: select(mask, &a.y, &b.y),
            z: select(mask, &a.z, &b.z),
        }
    }

    /// `[k] self` for a secret `k` (any 256-bit value): [`WINDOWS`] windows of
    /// [`WINDOW_BITS`] bits from the top, each four additions of the accumulator to itself and
    /// one addition of a table entry read by a full masked scan.
    fn mul(&self, k: &U256) -> Point {
        let mut table = [Point::identity(); WINDOW_TABLE];
        for i in 1..WINDOW_TABLE {
            table[i] = table[i - 1].add(self);
        }
        let mut acc = Point::identity();
        for window in (0..WINDOWS).rev() {
            for _ in 0..WINDOW_BITS {
                acc = acc.add(&acc);
            }
            let bit = window * WINDOW_BITS;
            let digit = (k[bit / 64] >> (bit % 64)) & (WINDOW_TABLE as u64 - 1);
            let mut entry = Point::identity();
            for (i, candidate) in table.iter().enumerate() {
                entry = Point::select(mask(equal_bit(i as u64, digit)), candidate, &entry);
            }
            acc = acc.add(&entry);
        }
        acc
    }

    /// The affine `(x, y)` as plain values below p; `None` for the identity.
    fn affine(&self) -> Option<(U256, U256)> {
        let f = &curve().p;
        let z_inv = f.invert(&self.z);
        let x = f.out_of_mont(&f.mul(&self.x, &z_inv));
        let y = f.out_of_mont(&f.mul(&self.y, &z_inv));
        // Z = 0 only for the identity, which a valid private key or nonce never gives: the point
        // is about to be published (as the public key or r), so this branch reveals nothing.
        if zero_bit(&self.z) == 1 {
            None
        } else {
            Some((x, y))
        }
    }
}

/// The x coordinate of `[d] Q` (ECDH, SEC 1 §3.3.1), for checking the scalar multiplication
/// against the Wycheproof ECDH vectors: `None` when the product is the identity.
#[cfg(test)]
pub(super) fn shared_x(key: &SigningKey, peer: &p256::PublicKey) -> Option<[u8; SCALAR_LEN]> {
    Point::from_public_key(peer)
        .mul(&key.d)
        .affine()
        .map(|(x, _)| bytes_from_limbs(&x))
}

/// 1 when `1 <= k < n`, else 0, computed without branches.
fn in_scalar_range(k: &U256) -> u64 {
    let (_, below_n) = sub_limbs(k, &curve().n.m);
    below_n & (zero_bit(k) ^ 1)
}

/// HMAC-SHA-256 of the concatenation of `parts` under `key`.
fn hmac(key: &[u8; 32], parts: &[&[u8]]) -> [u8; 32] {
    HmacSha256::new(key).mac_parts(parts)
}

/// The HMAC-DRBG of RFC 6979 §3.2 for P-256 and SHA-256 (qlen = hlen = 256, so `bits2int` is a
/// plain read and one HMAC output is one candidate).
struct NonceGenerator {
    k: [u8; 32],
    v: [u8; 32],
}

impl NonceGenerator {
    /// Steps a to f: seeded with `int2octets(d)` and `bits2octets(h)` (the hash reduced mod n).
    fn new(d: &[u8; SCALAR_LEN], h_reduced: &[u8; SCALAR_LEN]) -> NonceGenerator {
        let mut k = [0u8; 32];
        let mut v = [1u8; 32];
        k = hmac(&k, &[&v, &[0x00], d, h_reduced]);
        v = hmac(&k, &[&v]);
        k = hmac(&k, &[&v, &[0x01], d, h_reduced]);
        v = hmac(&k, &[&v]);
        NonceGenerator { k, v }
    }

    /// Step h: the next candidate in `[1, n-1]`.
    fn next(&mut self) -> U256 {
        loop {
            self.v = hmac(&self.k, &[&self.v]);
            let candidate = limbs_from_bytes(&self.v);
            if in_scalar_range(&candidate) == 1 {
                return candidate;
            }
            self.reseed();
        }
    }

    /// Step h.3: `K = HMAC_K(V || 0x00)`, `V = HMAC_K(V)`, after a refused candidate.
    fn reseed(&mut self) {
        self.k = hmac(&self.k, &[&self.v, &[0x00]]);
        self.v = hmac(&self.k, &[&self.v]);
    }
}

impl Drop for NonceGenerator {
    fn drop(&mut self) {
        self.k = [0; 32];
        self.v = [0; 32];
        black_box((&self.k, &self.v));
    }
}

/// A P-256 private key for ES256 signing: a scalar `d` in `[1, n-1]` and its public key `[d] G`.
pub struct SigningKey {
    d: U256,
    public: p256::PublicKey,
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The scalar is the key: never printed.
        f.debug_struct("SigningKey")
            .field("public", &self.public)
            .finish_non_exhaustive()
    }
}

impl Drop for SigningKey {
    fn drop(&mut self) {
        self.d = [0; 4];
        black_box(&self.d);
    }
}

impl SigningKey {
    /// A key from its 32-byte big-endian scalar (`int2octets(d)`), refused unless
    /// `1 <= d <= n - 1`. The public key is computed.
    pub fn from_scalar(d: &[u8; SCALAR_LEN]) -> Result<SigningKey, Error> {
        let d = limbs_from_bytes(d);
        if in_scalar_range(&d) != 1 {
            return Err(Error::KeyRejected(
                "P-256 private scalar d is not in [1, n-1]",
            ));
        }
        let (x, y) = curve()
            .g
            .mul(&d)
            .affine()
            .expect("d in [1, n-1] gives a point other than the identity");
        let public =
            p256::PublicKey::from_coordinates(&bytes_from_limbs(&x), &bytes_from_limbs(&y))?;
        Ok(SigningKey { d, public })
    }

    /// A key from its scalar and the public key that came with it, refused if they do not match.
    pub fn from_scalar_and_public(
        d: &[u8; SCALAR_LEN],
        public: &p256::PublicKey,
    ) -> Result<SigningKey, Error> {
        let key = SigningKey::from_scalar(d)?;
        if key.public != *public {
            return Err(Error::KeyRejected(
                "P-256 public key does not match the private scalar",
            ));
        }
        Ok(key)
    }

    /// The public key, for publishing as a JWK (see [`public_jwk`](super::private_key::public_jwk)).
    pub fn public_key(&self) -> &p256::PublicKey {
        &self.public
    }

    /// An ECDSA signature of `message` (hashed with SHA-256) in JOSE / IEEE P1363 form, `r || s`,
    /// with the nonce of RFC 6979.
    pub fn sign_p1363(&self, message: &[u8]) -> [u8; p256::SIGNATURE_LEN] {
        self.sign_digest(&sha256::digest(message))
    }

    /// FIPS 186-5 §6.4.1 over a SHA-256 digest, `k` from RFC 6979 §3.2.
    fn sign_digest(&self, digest: &[u8; 32]) -> [u8; p256::SIGNATURE_LEN] {
        let c = curve();
        let n = &c.n;
        let e = n.reduce(&limbs_from_bytes(digest));
        let mut nonces = NonceGenerator::new(&bytes_from_limbs(&self.d), &bytes_from_limbs(&e));
        let d = n.to_mont(&self.d);
        let e = n.to_mont(&e);
        loop {
            let k = nonces.next();
            let (x, _) =
                c.g.mul(&k)
                    .affine()
                    .expect("k in [1, n-1] gives a point other than the identity");
            let r = n.reduce(&x);
            let k_inv = n.invert(&n.to_mont(&k));
            let s = n.out_of_mont(&n.mul(&k_inv, &n.add(&e, &n.mul(&n.to_mont(&r), &d))));
            // r and s are the published signature: testing them for zero leaks nothing.
            if zero_bit(&r) == 0 && zero_bit(&s) == 0 {
                let mut out = [0u8; p256::SIGNATURE_LEN];
                out[..SCALAR_LEN].copy_from_slice(&bytes_from_limbs(&r));
                out[SCALAR_LEN..].copy_from_slice(&bytes_from_limbs(&s));
                return out;
            }
            nonces.reseed();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::field::Field;
    use crate::crypto::hex::from_hex;

    fn arr(hex: &str) -> [u8; 32] {
        from_hex(hex).unwrap().try_into().unwrap()
    }

    /// A deterministic stream of 256-bit values for the arithmetic cross-checks (splitmix64).
    fn values(count: usize) -> Vec<U256> {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        };
        let mut out: Vec<U256> = (0..count)
            .map(|_| [next(), next(), next(), next()])
            .collect();
        // The edges: 0, 1, all ones, and the moduli's neighbourhoods.
        out.extend([[0; 4], [1, 0, 0, 0], [u64::MAX; 4]]);
        for m in [&curve().p.m, &curve().n.m] {
            out.push(sub_limbs(m, &[1, 0, 0, 0]).0);
            out.push(sub_limbs(m, &[2, 0, 0, 0]).0);
            out.push(*m);
        }
        out
    }

    #[test]
    fn field_arithmetic_agrees_with_the_verifiers_variable_time_field() {
        let c = curve();
        for (modulus, field) in [(&c.p, Field::new(c.p.m)), (&c.n, Field::new(c.n.m))] {
            let xs = values(40);
            for a in &xs {
                let am = modulus.to_mont(a);
                assert_eq!(am, field.to_mont(a), "to_mont {a:x?}");
                assert_eq!(modulus.out_of_mont(&am), field.out_of_mont(&am));
                assert_eq!(
                    modulus.out_of_mont(&modulus.invert(&am)),
                    field.out_of_mont(&field.invert(&am)),
                    "invert {a:x?}"
                );
                for b in &xs {
                    let bm = modulus.to_mont(b);
                    assert_eq!(modulus.mul(&am, &bm), field.mul(&am, &bm), "mul");
                    assert_eq!(modulus.add(&am, &bm), field.add(&am, &bm), "add");
                    assert_eq!(modulus.sub(&am, &bm), field.sub(&am, &bm), "sub");
                }
            }
        }
    }

    #[test]
    fn scalar_multiples_of_the_generator_match_known_points_and_wrap_at_n() {
        let g = curve().g;
        let affine = |p: &Point| {
            p.affine()
                .map(|(x, y)| (bytes_from_limbs(&x), bytes_from_limbs(&y)))
        };
        // [2]G and [3]G (SEC 2 test points; also [k]G of the NIST CAVS KAT list).
        let two_g = (
            arr("7cf27b188d034f7e8a52380304b51ac3c08969e277f21b35a60b48fc47669978"),
            arr("07775510db8ed040293d9ac69f7430dbba7dade63ce982299e04b79d227873d1"),
        );
        let three_g = (
            arr("5ecbe4d1a6330a44c8f7ef951d4bf165e6c6b721efada985fb41661bc6e7fd6c"),
            arr("8734640c4998ff7e374b06ce1a64a2ecd82ab036384fb83d9a79b127a27d5032"),
        );
        assert_eq!(affine(&g.mul(&[2, 0, 0, 0])), Some(two_g));
        assert_eq!(affine(&g.add(&g)), Some(two_g));
        assert_eq!(affine(&g.mul(&[3, 0, 0, 0])), Some(three_g));
        assert_eq!(affine(&g.mul(&[1, 0, 0, 0])), affine(&g));
        // [n]G is the identity, [n-1]G is -G, and the identity absorbs.
        let n = curve().n.m;
        assert_eq!(affine(&g.mul(&n)), None);
        assert_eq!(affine(&g.mul(&[0; 4])), None);
        let minus_g = affine(&g.mul(&sub_limbs(&n, &[1, 0, 0, 0]).0)).unwrap();
        let (gx, gy) = affine(&g).unwrap();
        assert_eq!(minus_g.0, gx);
        let neg_y = curve().p.sub(&[0; 4], &limbs_from_bytes(&gy));
        assert_eq!(minus_g.1, bytes_from_limbs(&neg_y));
        assert_eq!(affine(&g.add(&Point::identity())), affine(&g));
        assert_eq!(
            affine(&g.mul(&sub_limbs(&n, &[1, 0, 0, 0]).0).add(&g)),
            None
        );
    }

    /// RFC 6979 appendix A.2.5: the P-256 key and its SHA-256 signatures of "sample" and "test".
    #[test]
    fn rfc_6979_vectors_are_reproduced_exactly() {
        const D: [u8; 32] = [
            0xc9, 0xaf, 0xa9, 0xd8, 0x45, 0xba, 0x75, 0x16, 0x6b, 0x5c, 0x21, 0x57, 0x67, 0xb1,
            0xd6, 0x93, 0x4e, 0x50, 0xc3, 0xdb, 0x36, 0xe8, 0x9b, 0x12, 0x7b, 0x8a, 0x62, 0x2b,
            0x12, 0x0f, 0x67, 0x21,
        ];
        let key = SigningKey::from_scalar(&D).unwrap();
        assert_eq!(
            key.public_key().coordinates(),
            (
                arr("60fed4ba255a9d31c961eb74c6356d68c049b8923b61fa6ce669622e60f29fb6"),
                arr("7903fe1008b8bc99a41ae9e95628bc64f2f1b20c2d7e9f5177a3c294d4462299"),
            )
        );
        let cases = [
            (
                "sample",
                "a6e3c57dd01abe90086538398355dd4c3b17aa873382b0f24d6129493d8aad60",
                "efd48b2aacb6a8fd1140dd9cd45e81d69d2c877b56aaf991c34d0ea84eaf3716",
                "f7cb1c942d657c41d436c7a1b6e29f65f3e900dbb9aff4064dc4ab2f843acda8",
            ),
            (
                "test",
                "d16b6ae827f17175e040871a1c7ec3500192c4c92677336ec2537acaee0008e0",
                "f1abb023518351cd71d881567b1ea663ed3efcf6c5132b354f28d3b0b7d38367",
                "019f4113742a2b14bd25926b49c649155f267e60d3814b4c0cc84250e46f0083",
            ),
        ];
        for (message, k, r, s) in cases {
            let digest = sha256::digest(message.as_bytes());
            let e = curve().n.reduce(&limbs_from_bytes(&digest));
            let mut nonces = NonceGenerator::new(&D, &bytes_from_limbs(&e));
            assert_eq!(bytes_from_limbs(&nonces.next()), arr(k), "k for {message}");
            let signature = key.sign_p1363(message.as_bytes());
            assert_eq!(&signature[..32], &arr(r), "r for {message}");
            assert_eq!(&signature[32..], &arr(s), "s for {message}");
            assert_eq!(
                key.public_key()
                    .verify_p1363(message.as_bytes(), &signature),
                Ok(())
            );
        }
    }

    #[test]
    fn scalars_outside_one_to_n_minus_one_are_refused() {
        let n = bytes_from_limbs(&curve().n.m);
        let mut n_plus_1 = curve().n.m;
        n_plus_1[0] += 1;
        for d in [[0u8; 32], n, bytes_from_limbs(&n_plus_1), [0xff; 32]] {
            assert_eq!(
                SigningKey::from_scalar(&d).err(),
                Some(Error::KeyRejected(
                    "P-256 private scalar d is not in [1, n-1]"
                ))
            );
        }
        let mut n_minus_1 = curve().n.m;
        n_minus_1[0] -= 1;
        let top = SigningKey::from_scalar(&bytes_from_limbs(&n_minus_1)).unwrap();
        let signature = top.sign_p1363(b"edge");
        assert_eq!(top.public_key().verify_p1363(b"edge", &signature), Ok(()));
        let one = SigningKey::from_scalar(&bytes_from_limbs(&[1, 0, 0, 0])).unwrap();
        let other = SigningKey::from_scalar(&bytes_from_limbs(&[2, 0, 0, 0])).unwrap();
        assert_eq!(
            SigningKey::from_scalar_and_public(
                &bytes_from_limbs(&[1, 0, 0, 0]),
                other.public_key()
            )
            .err(),
            Some(Error::KeyRejected(
                "P-256 public key does not match the private scalar"
            ))
        );
        assert!(!format!("{one:?}").contains("d:"));
    }

    #[test]
    fn signatures_of_many_keys_and_messages_verify_and_only_for_their_message() {
        for (i, d) in values(24).iter().enumerate() {
            let Ok(key) = SigningKey::from_scalar(&bytes_from_limbs(d)) else {
                assert_eq!(in_scalar_range(d), 0, "{d:x?} refused");
                continue;
            };
            let message = format!("message {i} {}", "x".repeat(i * 7));
            let signature = key.sign_p1363(message.as_bytes());
            assert_eq!(
                key.public_key()
                    .verify_p1363(message.as_bytes(), &signature),
                Ok(()),
                "key {d:x?}"
            );
            assert_eq!(
                signature,
                key.sign_p1363(message.as_bytes()),
                "deterministic"
            );
            assert_eq!(
                key.public_key()
                    .verify_p1363(b"another message", &signature),
                Err(Error::BadSignature)
            );
        }
    }
}
