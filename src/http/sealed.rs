//! Sealed sessions: a session id that is itself the session, authenticated with HMAC-SHA-256, so
//! every replica holding the key serves every session without a shared store.
//!
//! A token is 194 lower-case hex digits encoding 97 bytes:
//!
//! | bytes | field |
//! |---|---|
//! | 1 | format version ([`TOKEN_VERSION`]) |
//! | 4 | key id: the first 4 bytes of SHA-256(`KEY_ID_CONTEXT` ‖ key), picks the key to check with |
//! | 16 | nonce from the OS random source: names the session (audit, revocation, per-replica cache) |
//! | 8 | created, Unix seconds, big-endian |
//! | 8 | expires, Unix seconds, big-endian (created + [`SEALED_SESSION_LIFETIME`]) |
//! | 1 | client capabilities declared at `initialize` ([`capability`] bits) |
//! | 10 | the negotiated revision, as its date text |
//! | 1 | owner kind: [`owner::NONE`] (a server without OAuth) or [`owner::PRINCIPAL`] |
//! | 16 | the owner's principal digest ([`crate::auth::Grant::principal`]); zeros for none |
//! | 32 | HMAC-SHA-256 under the key of all the bytes before it |
//!
//! The owner makes the session its opener's on every replica, after eviction from a replica's
//! table and after a restart: a token opens only for the principal it was sealed for (none for
//! none), so presenting another's id finds no session. Version 1 (80 bytes, no owner) is retired:
//! such an id is answered "initialize again" ([`Refusal::Outdated`]).
//!
//! The token is not encrypted: it carries nothing secret (a revision, times, capability bits, and
//! the principal digest the client's own token already stands for).

use super::guard::constant_time_eq;
use super::limits::{
    MAX_REVOKED_SESSIONS, MAX_SESSION_ID_BYTES, MAX_SESSION_KEY_FILE_BYTES, SEALED_SESSION_LIFETIME,
};
use crate::auth::{PRINCIPAL_DIGEST_BYTES, PRINCIPAL_PREFIX};
use crate::hmac::HmacSha256;
use crate::server::Revision;
use crate::sha256::{self, DIGEST_LEN};
use std::collections::HashMap;
use std::fmt;
use std::io::{self, Read};
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The token layout's version; a token of any other version is refused.
pub const TOKEN_VERSION: u8 = 2;

/// Earlier layouts (version, bytes) some server sealed: refused as [`Refusal::Outdated`], so the
/// client learns to initialize again rather than retrying the id.
const RETIRED_LAYOUTS: [(u8, usize); 1] = [(1, 80)];

/// Fewest key bytes accepted (256 bits: `openssl rand -hex 32`).
pub const MIN_KEY_BYTES: usize = 32;

/// Most key bytes accepted (one SHA-256 block).
pub const MAX_KEY_BYTES: usize = 64;

/// Bytes of the random nonce naming a session.
pub const NONCE_BYTES: usize = 16;

/// Domain separation for the key id, so it is never a MAC the key made for a token.
const KEY_ID_CONTEXT: &[u8] = b"agentteams-mcp session key id\0";

const KEY_ID_BYTES: usize = 4;
const REVISION_BYTES: usize = 10;
const OWNER_BYTES: usize = 1 + PRINCIPAL_DIGEST_BYTES;
const BODY_BYTES: usize = 1 + KEY_ID_BYTES + NONCE_BYTES + 8 + 8 + 1 + REVISION_BYTES + OWNER_BYTES;
const TOKEN_BYTES: usize = BODY_BYTES + DIGEST_LEN;

/// Hex digits of a token ([`MAX_SESSION_ID_BYTES`] bounds them).
pub const TOKEN_HEX_DIGITS: usize = 2 * TOKEN_BYTES;
const _: () = assert!(TOKEN_HEX_DIGITS <= MAX_SESSION_ID_BYTES);

/// The owner field's kind byte: who may present the token.
pub mod owner {
    /// Sealed by a server without OAuth: only a request without a principal opens it.
    pub const NONE: u8 = 0;
    /// Sealed for the principal whose digest follows.
    pub const PRINCIPAL: u8 = 1;
}

/// The owner field for `principal`: its kind and digest. `None` when `principal` is not
/// [`PRINCIPAL_PREFIX`] and [`PRINCIPAL_DIGEST_BYTES`] bytes of lower-case hex, which no grant
/// makes (such a principal can own no token).
fn owner_field(principal: Option<&str>) -> Option<[u8; OWNER_BYTES]> {
    let mut field = [0u8; OWNER_BYTES];
    let Some(principal) = principal else {
        return Some(field);
    };
    let hex = principal.strip_prefix(PRINCIPAL_PREFIX)?.as_bytes();
    if hex.len() != 2 * PRINCIPAL_DIGEST_BYTES || hex.iter().any(u8::is_ascii_uppercase) {
        return None;
    }
    field[0] = owner::PRINCIPAL;
    field[1..].copy_from_slice(&decode_hex(hex)?);
    Some(field)
}

/// The client capabilities a token records, one bit each (the engine offers no server-to-client
/// requests today; they are carried so a replica knows what the client declared).
pub mod capability {
    pub const ROOTS: u8 = 1;
    pub const SAMPLING: u8 = 2;
    pub const ELICITATION: u8 = 4;
    pub const EXPERIMENTAL: u8 = 8;
    /// Capability names in `initialize`'s `params.capabilities`, with their bits.
    pub const NAMES: [(&str, u8); 4] = [
        ("roots", ROOTS),
        ("sampling", SAMPLING),
        ("elicitation", ELICITATION),
        ("experimental", EXPERIMENTAL),
    ];
}

/// Why a key file was not usable. Display is one line naming the file and the fix.
#[derive(Debug)]
pub enum KeyError {
    /// Missing, unreadable or not a regular file.
    Read(String, io::Error),
    /// Group or others may read or write it (its mode).
    Exposed(String, u32),
    /// Larger than [`MAX_SESSION_KEY_FILE_BYTES`].
    TooLarge(String),
    /// Not hex digits only.
    NotHex(String),
    /// Fewer than [`MIN_KEY_BYTES`] or more than [`MAX_KEY_BYTES`] bytes (the count given).
    Length(String, usize),
}

impl fmt::Display for KeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const MAKE: &str = "make one with `openssl rand -hex 32 > FILE && chmod 600 FILE`";
        match self {
            KeyError::Read(path, e) => write!(f, "{path}: cannot read the session key: {e}"),
            KeyError::Exposed(path, mode) => write!(
                f,
                "{path}: session key file is readable or writable by group or others (mode {:o}); run chmod 600 on it",
                mode & 0o777
            ),
            KeyError::TooLarge(path) => write!(
                f,
                "{path}: session key file larger than {MAX_SESSION_KEY_FILE_BYTES} bytes; {MAKE}"
            ),
            KeyError::NotHex(path) => {
                write!(f, "{path}: session key must be hex digits only; {MAKE}")
            }
            KeyError::Length(path, n) => write!(
                f,
                "{path}: session key has {}, needs {MIN_KEY_BYTES} to {MAX_KEY_BYTES}; {MAKE}",
                crate::voice::counted(*n as u64, "byte")
            ),
        }
    }
}

impl std::error::Error for KeyError {}

/// One session key, prepared for HMAC, with its id.
#[derive(Clone, Debug)]
pub struct SessionKey {
    id: [u8; KEY_ID_BYTES],
    hmac: HmacSha256,
}

impl SessionKey {
    /// A key from raw bytes ([`MIN_KEY_BYTES`] to [`MAX_KEY_BYTES`]).
    pub fn from_bytes(key: &[u8]) -> Result<SessionKey, usize> {
        if !(MIN_KEY_BYTES..=MAX_KEY_BYTES).contains(&key.len()) {
            return Err(key.len());
        }
        let mut hasher = sha256::Sha256::new();
        hasher.update(KEY_ID_CONTEXT);
        hasher.update(key);
        let digest = hasher.finish();
        let mut id = [0u8; KEY_ID_BYTES];
        id.copy_from_slice(&digest[..KEY_ID_BYTES]);
        Ok(SessionKey {
            id,
            hmac: HmacSha256::new(key),
        })
    }

    /// Reads a key file: hex digits (surrounding whitespace ignored), a regular file of at most
    /// [`MAX_SESSION_KEY_FILE_BYTES`] that neither group nor others may read or write.
    pub fn from_file(path: &Path) -> Result<SessionKey, KeyError> {
        use std::os::unix::fs::PermissionsExt;
        let name = path.display().to_string();
        let read = |e| KeyError::Read(name.clone(), e);
        let mut file = crate::regular_file::open(path).map_err(read)?;
        let mode = file.metadata().map_err(read)?.permissions().mode();
        if mode & 0o077 != 0 {
            return Err(KeyError::Exposed(name, mode));
        }
        let mut bytes = Vec::new();
        (&mut file)
            .take(MAX_SESSION_KEY_FILE_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(read)?;
        if bytes.len() as u64 > MAX_SESSION_KEY_FILE_BYTES {
            return Err(KeyError::TooLarge(name));
        }
        let text = bytes.trim_ascii();
        let key = decode_hex(text).ok_or_else(|| KeyError::NotHex(name.clone()))?;
        SessionKey::from_bytes(&key).map_err(|n| KeyError::Length(name, n))
    }

    /// The key id as hex (logged at startup so operators can tell which key replicas hold).
    pub fn id_hex(&self) -> String {
        sha256::to_hex(&self.id)
    }
}

/// Why a presented token was refused (all answer 404 "session not found", except
/// [`Refusal::TooLong`], a 400).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Longer than [`MAX_SESSION_ID_BYTES`].
    TooLong,
    /// Not the token layout (length, hex, version, revision or owner field).
    Malformed,
    /// A retired layout ([`RETIRED_LAYOUTS`]): the client must initialize again.
    Outdated,
    /// Sealed with a key this replica does not hold.
    UnknownKey,
    /// The MAC does not match: forged or altered.
    Forged,
    /// Sealed for another principal (or for none, or presented without one): answered as an
    /// unknown session, so it tells nothing about the session.
    NotOwner,
    /// Past its expiry.
    Expired,
    /// Ended by a DELETE received by this replica.
    Revoked,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Refusal::TooLong => "Mcp-Session-Id too long",
            Refusal::Malformed => "malformed session token",
            Refusal::Outdated => {
                "session id of an earlier server version, no longer accepted: initialize again"
            }
            Refusal::UnknownKey => "session token sealed with an unknown key",
            Refusal::Forged => "session token does not authenticate",
            Refusal::NotOwner => "session token sealed for another principal",
            Refusal::Expired => "session expired",
            Refusal::Revoked => "session ended",
        })
    }
}

/// What a valid token says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sealed {
    pub nonce: [u8; NONCE_BYTES],
    /// Unix seconds.
    pub created: u64,
    /// Unix seconds; the token is refused from this second on.
    pub expires: u64,
    pub capabilities: u8,
    pub revision: Revision,
    /// The owner field: kind ([`owner`]) and principal digest.
    pub owner: [u8; OWNER_BYTES],
}

impl Sealed {
    /// The nonce as hex: the session's name in audit records and this replica's cache.
    pub fn name(&self) -> String {
        sha256::to_hex(&self.nonce)
    }
}

/// Seals and opens session tokens under the current key (and accepts a previous one), and
/// remembers the sessions this replica ended.
pub struct Sealer {
    current: SessionKey,
    previous: Option<SessionKey>,
    lifetime: Duration,
    /// Ended sessions by nonce, with their expiry (after which the token fails anyway).
    revoked: Mutex<HashMap<[u8; NONCE_BYTES], u64>>,
    max_revoked: usize,
    random: crate::random::Source,
}

/// Now, in Unix seconds (a clock before 1970 reads as 0, which only makes tokens look young).
pub fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl Sealer {
    /// Opens the OS random source for nonces.
    pub fn new(current: SessionKey, previous: Option<SessionKey>) -> io::Result<Sealer> {
        Ok(Sealer {
            current,
            previous,
            lifetime: SEALED_SESSION_LIFETIME,
            revoked: Mutex::new(HashMap::new()),
            max_revoked: MAX_REVOKED_SESSIONS,
            random: crate::random::Source::open()?,
        })
    }

    /// A key for another use of the current session key, named by `context` (HMAC of `context`
    /// under it): every replica holding the session key derives the same one, and neither use
    /// can stand for the other.
    pub fn derive_key(&self, context: &[u8]) -> [u8; DIGEST_LEN] {
        self.current.hmac.mac(context)
    }

    /// The same sealer with another lifetime and revocation cap (tests).
    pub fn with_limits(mut self, lifetime: Duration, max_revoked: usize) -> Sealer {
        self.lifetime = lifetime;
        self.max_revoked = max_revoked.max(1);
        self
    }

    /// A fresh random nonce for a session about to be created.
    pub fn new_nonce(&self) -> io::Result<[u8; NONCE_BYTES]> {
        let mut nonce = [0u8; NONCE_BYTES];
        self.random.fill(&mut nonce)?;
        Ok(nonce)
    }

    /// The token for a session created `now` under the current key, owned by `principal` (none:
    /// a server without OAuth). Fails only for a principal no grant makes (see [`owner_field`]).
    pub fn seal(
        &self,
        nonce: [u8; NONCE_BYTES],
        revision: Revision,
        capabilities: u8,
        principal: Option<&str>,
        now: u64,
    ) -> io::Result<String> {
        let owner = owner_field(principal).ok_or_else(|| {
            let digits = 2 * PRINCIPAL_DIGEST_BYTES;
            let why = format!("the principal is not {PRINCIPAL_PREFIX} and {digits} hex digits");
            io::Error::new(io::ErrorKind::InvalidInput, why)
        })?;
        let mut body = Vec::with_capacity(TOKEN_BYTES);
        body.push(TOKEN_VERSION);
        body.extend_from_slice(&self.current.id);
        body.extend_from_slice(&nonce);
        body.extend_from_slice(&now.to_be_bytes());
        body.extend_from_slice(&now.saturating_add(self.lifetime.as_secs()).to_be_bytes());
        body.push(capabilities);
        body.extend_from_slice(revision.as_str().as_bytes());
        body.extend_from_slice(&owner);
        debug_assert_eq!(body.len(), BODY_BYTES);
        let mac = self.current.hmac.mac(&body);
        body.extend_from_slice(&mac);
        Ok(sha256::to_hex(&body))
    }

    /// Checks `token`, presented by `principal`, at time `now`: layout, key, MAC (compared in
    /// constant time), owner, expiry, then this replica's revocations.
    pub fn open(&self, token: &[u8], principal: Option<&str>, now: u64) -> Result<Sealed, Refusal> {
        if token.len() > MAX_SESSION_ID_BYTES {
            return Err(Refusal::TooLong);
        }
        if token.iter().any(|b| b.is_ascii_uppercase()) {
            return Err(Refusal::Malformed);
        }
        let bytes = decode_hex(token).ok_or(Refusal::Malformed)?;
        let version = bytes.first().copied();
        if bytes.len() != TOKEN_BYTES || version != Some(TOKEN_VERSION) {
            let retired = RETIRED_LAYOUTS.contains(&(version.unwrap_or(0), bytes.len()));
            return Err(if retired {
                Refusal::Outdated
            } else {
                Refusal::Malformed
            });
        }
        let (body, mac) = bytes.split_at(BODY_BYTES);
        let key_id = &body[1..1 + KEY_ID_BYTES];
        let key = [Some(&self.current), self.previous.as_ref()]
            .into_iter()
            .flatten()
            .find(|k| k.id == key_id)
            .ok_or(Refusal::UnknownKey)?;
        if !constant_time_eq(mac, &key.hmac.mac(body)) {
            return Err(Refusal::Forged);
        }
        let field = |at: usize| {
            let mut n = [0u8; 8];
            n.copy_from_slice(&body[at..at + 8]);
            u64::from_be_bytes(n)
        };
        let at = 1 + KEY_ID_BYTES;
        let mut nonce = [0u8; NONCE_BYTES];
        nonce.copy_from_slice(&body[at..at + NONCE_BYTES]);
        let at = at + NONCE_BYTES;
        let (created, expires) = (field(at), field(at + 8));
        let capabilities = body[at + 16];
        let at = at + 17;
        let revision = std::str::from_utf8(&body[at..at + REVISION_BYTES])
            .ok()
            .and_then(Revision::parse)
            .filter(|r| r.is_legacy())
            .ok_or(Refusal::Malformed)?;
        let mut owner = [0u8; OWNER_BYTES];
        owner.copy_from_slice(&body[at + REVISION_BYTES..]);
        let kind_known = match owner[0] {
            owner::NONE => owner[1..].iter().all(|&b| b == 0),
            kind => kind == owner::PRINCIPAL,
        };
        if !kind_known {
            return Err(Refusal::Malformed);
        }
        if owner_field(principal) != Some(owner) {
            return Err(Refusal::NotOwner);
        }
        if now >= expires {
            return Err(Refusal::Expired);
        }
        if self.revoked().contains_key(&nonce) {
            return Err(Refusal::Revoked);
        }
        Ok(Sealed {
            nonce,
            created,
            expires,
            capabilities,
            revision,
            owner,
        })
    }

    fn revoked(&self) -> std::sync::MutexGuard<'_, HashMap<[u8; NONCE_BYTES], u64>> {
        self.revoked.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Ends `session` on this replica until it expires. Expired entries are dropped first; when
    /// the list is still full, the entry expiring soonest is forgotten.
    pub fn revoke(&self, session: &Sealed, now: u64) {
        let mut revoked = self.revoked();
        revoked.retain(|_, expires| *expires > now);
        if revoked.len() >= self.max_revoked {
            if let Some(soonest) = revoked.iter().min_by_key(|(_, e)| **e).map(|(n, _)| *n) {
                revoked.remove(&soonest);
            }
        }
        revoked.insert(session.nonce, session.expires);
    }

    /// How long the tokens this sealer makes are accepted.
    pub fn lifetime(&self) -> Duration {
        self.lifetime
    }

    pub fn current_key_id(&self) -> String {
        self.current.id_hex()
    }
}

/// When `session`, checked at Unix time `now`, expires, on this process's monotonic clock (for
/// the cache of checked tokens; `None` if the clock cannot say).
pub fn deadline(session: &Sealed, now: u64) -> Option<std::time::Instant> {
    std::time::Instant::now().checked_add(Duration::from_secs(session.expires.saturating_sub(now)))
}

/// Hex digits (either case) to bytes; `None` for an odd length or any other byte.
fn decode_hex(text: &[u8]) -> Option<Vec<u8>> {
    if text.len() % 2 != 0 {
        return None;
    }
    let digit = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
    text.chunks(2)
        .map(|pair| Some(digit(pair[0])? << 4 | digit(pair[1])?))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(byte: u8) -> SessionKey {
        SessionKey::from_bytes(&[byte; 32]).unwrap()
    }

    fn sealer(current: u8, previous: Option<u8>) -> Sealer {
        Sealer::new(key(current), previous.map(key)).unwrap()
    }

    const NOW: u64 = 1_800_000_000;
    const ALICE: Option<&str> = Some("sha256:0123456789abcdef0123456789abcdef");
    const BOB: Option<&str> = Some("sha256:fedcba9876543210fedcba9876543210");

    fn seal_for(s: &Sealer, principal: Option<&str>) -> String {
        let nonce = s.new_nonce().unwrap();
        s.seal(nonce, Revision::V2025_06_18, 0, principal, NOW)
            .unwrap()
    }

    fn token(s: &Sealer) -> (String, [u8; NONCE_BYTES]) {
        let nonce = s.new_nonce().unwrap();
        (
            s.seal(
                nonce,
                Revision::V2025_06_18,
                capability::ROOTS | capability::ELICITATION,
                ALICE,
                NOW,
            )
            .unwrap(),
            nonce,
        )
    }

    #[test]
    fn a_sealed_token_opens_with_what_it_carries() {
        let s = sealer(1, None);
        let (t, nonce) = token(&s);
        assert_eq!(t.len(), TOKEN_HEX_DIGITS);
        assert_eq!(TOKEN_HEX_DIGITS, 194);
        assert!(t
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
        let sealed = s.open(t.as_bytes(), ALICE, NOW + 5).unwrap();
        assert_eq!(sealed.nonce, nonce);
        assert_eq!(sealed.created, NOW);
        assert_eq!(sealed.expires, NOW + SEALED_SESSION_LIFETIME.as_secs());
        assert_eq!(sealed.revision, Revision::V2025_06_18);
        assert_eq!(
            sealed.capabilities,
            capability::ROOTS | capability::ELICITATION
        );
        assert_eq!(sealed.owner[0], owner::PRINCIPAL);
        assert_eq!(sha256::to_hex(&sealed.owner[1..]), &ALICE.unwrap()[7..]);
        // Another replica with the same key accepts it.
        assert_eq!(sealer(1, None).open(t.as_bytes(), ALICE, NOW), Ok(sealed));
    }

    #[test]
    fn forged_truncated_and_altered_tokens_are_refused() {
        let s = sealer(1, None);
        let (t, _) = token(&s);
        // Every single-digit change is caught (the layout, the MAC or the fields it covers).
        for i in 0..t.len() {
            let mut bytes = t.clone().into_bytes();
            bytes[i] = if bytes[i] == b'0' { b'1' } else { b'0' };
            assert!(s.open(&bytes, ALICE, NOW).is_err(), "digit {i}");
        }
        assert_eq!(
            s.open(&t.as_bytes()[..158], ALICE, NOW),
            Err(Refusal::Malformed)
        );
        assert_eq!(s.open(b"", ALICE, NOW), Err(Refusal::Malformed));
        assert_eq!(
            s.open(t.to_uppercase().as_bytes(), ALICE, NOW),
            Err(Refusal::Malformed)
        );
        assert_eq!(s.open(&[b'a'; 257], ALICE, NOW), Err(Refusal::TooLong));
        // A stretched expiry does not authenticate.
        let mut raw = decode_hex(t.as_bytes()).unwrap();
        raw[1 + KEY_ID_BYTES + NONCE_BYTES + 8] ^= 0x01;
        assert_eq!(
            s.open(sha256::to_hex(&raw).as_bytes(), ALICE, NOW),
            Err(Refusal::Forged)
        );
    }

    #[test]
    fn a_token_opens_only_for_the_principal_it_was_sealed_for() {
        let s = sealer(1, None);
        let alices = seal_for(&s, ALICE);
        assert!(s.open(alices.as_bytes(), ALICE, NOW).is_ok());
        for stranger in [BOB, None, Some("sha256:0123"), Some("alice")] {
            assert_eq!(
                s.open(alices.as_bytes(), stranger, NOW),
                Err(Refusal::NotOwner),
                "{stranger:?}"
            );
        }
        // A server without OAuth seals for no principal: no principal opens it, none does.
        let nobodys = seal_for(&s, None);
        let sealed = s.open(nobodys.as_bytes(), None, NOW).unwrap();
        assert_eq!(sealed.owner, [0; OWNER_BYTES]);
        assert_eq!(
            s.open(nobodys.as_bytes(), ALICE, NOW),
            Err(Refusal::NotOwner)
        );
        // A principal no grant makes owns nothing.
        let nonce = s.new_nonce().unwrap();
        for odd in [
            "sha256:0123",
            "sha256:0123456789ABCDEF0123456789ABCDEF",
            "alice",
        ] {
            assert!(s
                .seal(nonce, Revision::V2025_06_18, 0, Some(odd), NOW)
                .is_err());
        }
    }

    #[test]
    fn a_changed_owner_does_not_authenticate_and_an_unknown_kind_is_malformed() {
        let s = sealer(1, None);
        let raw = decode_hex(seal_for(&s, ALICE).as_bytes()).unwrap();
        let owner_at = BODY_BYTES - OWNER_BYTES;
        for at in owner_at..BODY_BYTES {
            for flip in [0x01, 0x80] {
                let mut changed = raw.clone();
                changed[at] ^= flip;
                assert_eq!(
                    s.open(sha256::to_hex(&changed).as_bytes(), ALICE, NOW),
                    Err(Refusal::Forged),
                    "byte {at}"
                );
            }
        }
        // Bob's digest put in Alice's token and presented by Bob: the MAC still refuses it.
        let mut bobs = raw.clone();
        bobs[owner_at + 1..BODY_BYTES]
            .copy_from_slice(&decode_hex(&BOB.unwrap().as_bytes()[7..]).unwrap());
        assert_eq!(
            s.open(sha256::to_hex(&bobs).as_bytes(), BOB, NOW),
            Err(Refusal::Forged)
        );
        // Authenticated but of an owner kind this layout lacks, or "none" with a digest.
        let mac = |mut body: Vec<u8>| {
            let tag = HmacSha256::new(&[1; 32]).mac(&body[..BODY_BYTES]);
            body[BODY_BYTES..].copy_from_slice(&tag);
            sha256::to_hex(&body)
        };
        let mut unknown = raw.clone();
        unknown[owner_at] = 2;
        assert_eq!(
            s.open(mac(unknown).as_bytes(), ALICE, NOW),
            Err(Refusal::Malformed)
        );
        let mut none_with_digest = raw;
        none_with_digest[owner_at] = owner::NONE;
        assert_eq!(
            s.open(mac(none_with_digest).as_bytes(), None, NOW),
            Err(Refusal::Malformed)
        );
    }

    #[test]
    fn version_1_ids_are_outdated_and_other_layouts_malformed() {
        let s = sealer(1, None);
        let current = decode_hex(seal_for(&s, ALICE).as_bytes()).unwrap();
        let mut version_1 = current[..80].to_vec();
        version_1[0] = 1;
        let open = |bytes: &[u8]| s.open(sha256::to_hex(bytes).as_bytes(), ALICE, NOW);
        assert_eq!(open(&version_1), Err(Refusal::Outdated));
        assert!(Refusal::Outdated.to_string().contains("initialize again"));
        let mut other = version_1.clone();
        other[0] = TOKEN_VERSION;
        assert_eq!(
            open(&other),
            Err(Refusal::Malformed),
            "version 2 of 80 bytes"
        );
        let mut other = current.clone();
        other[0] = 1;
        assert_eq!(
            open(&other),
            Err(Refusal::Malformed),
            "version 1 of 97 bytes"
        );
        other[0] = TOKEN_VERSION + 1;
        assert_eq!(open(&other), Err(Refusal::Malformed), "a later version");
    }

    #[test]
    fn a_token_re_signed_with_another_key_is_refused() {
        let s = sealer(1, None);
        let (t, _) = token(&s);
        let mut raw = decode_hex(t.as_bytes()).unwrap();
        // Same key id (copied), MAC made under a different key.
        let other = HmacSha256::new(&[2; 32]).mac(&raw[..BODY_BYTES]);
        raw[BODY_BYTES..].copy_from_slice(&other);
        assert_eq!(
            s.open(sha256::to_hex(&raw).as_bytes(), ALICE, NOW),
            Err(Refusal::Forged)
        );
        // Sealed under a key this replica lacks: refused by key id before any MAC.
        let (foreign, _) = token(&sealer(2, None));
        assert_eq!(
            s.open(foreign.as_bytes(), ALICE, NOW),
            Err(Refusal::UnknownKey)
        );
    }

    #[test]
    fn the_previous_key_is_accepted_after_a_rotation_and_not_after_the_next() {
        let old = sealer(1, None);
        let (t, _) = token(&old);
        let rotated = sealer(2, Some(1));
        assert!(rotated.open(t.as_bytes(), ALICE, NOW).is_ok());
        let (fresh, _) = token(&rotated);
        assert!(old.open(fresh.as_bytes(), ALICE, NOW).is_err());
        assert_eq!(
            sealer(3, Some(2)).open(t.as_bytes(), ALICE, NOW),
            Err(Refusal::UnknownKey)
        );
    }

    #[test]
    fn tokens_expire_after_the_lifetime() {
        let s = sealer(1, None);
        let (t, _) = token(&s);
        let end = NOW + SEALED_SESSION_LIFETIME.as_secs();
        assert!(s.open(t.as_bytes(), ALICE, end - 1).is_ok());
        assert_eq!(s.open(t.as_bytes(), ALICE, end), Err(Refusal::Expired));
    }

    #[test]
    fn revocation_is_per_replica_bounded_and_forgets_expired_entries() {
        let s = sealer(1, None).with_limits(Duration::from_secs(100), 2);
        let other_replica = sealer(1, None);
        let tokens: Vec<_> = (0..3).map(|_| token(&s).0).collect();
        let sealed: Vec<_> = tokens
            .iter()
            .map(|t| s.open(t.as_bytes(), ALICE, NOW).unwrap())
            .collect();
        s.revoke(&sealed[0], NOW);
        assert_eq!(
            s.open(tokens[0].as_bytes(), ALICE, NOW),
            Err(Refusal::Revoked)
        );
        assert!(other_replica.open(tokens[0].as_bytes(), ALICE, NOW).is_ok());
        s.revoke(&sealed[1], NOW);
        s.revoke(&sealed[2], NOW);
        assert_eq!(s.revoked().len(), 2);
        // All three expire together; the list keeps two of them.
        let still = tokens
            .iter()
            .filter(|t| s.open(t.as_bytes(), ALICE, NOW) == Err(Refusal::Revoked))
            .count();
        assert_eq!(still, 2);
        s.revoke(&sealed[0], NOW + 100);
        assert_eq!(s.revoked().len(), 1, "expired entries are dropped");
    }

    #[test]
    fn key_files_are_checked() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("sealed-keys-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let write = |name: &str, text: &str, mode: u32| {
            let path = dir.join(name);
            std::fs::write(&path, text).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
            path
        };
        let good = write("good", &format!("{}\n", "ab".repeat(32)), 0o600);
        let a = SessionKey::from_file(&good).unwrap();
        assert_eq!(a.id_hex(), key(0xab).id_hex());
        let error = |path: &Path| SessionKey::from_file(path).unwrap_err().to_string();
        assert!(error(&write("open", &"ab".repeat(32), 0o644)).contains("chmod 600"));
        assert!(error(&write("short", &"ab".repeat(16), 0o600)).contains("has 16 bytes"));
        assert!(error(&write("bad", &"zz".repeat(32), 0o600)).contains("hex digits only"));
        assert!(error(&write("big", &"ab".repeat(200), 0o600)).contains("larger than"));
        assert!(error(&dir.join("missing")).contains("cannot read"));
        assert!(error(&dir).contains("not a regular file"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
