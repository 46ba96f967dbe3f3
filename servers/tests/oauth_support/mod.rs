//! A small authorization server for the OAuth tests, started by the test that needs it: RFC 8414
//! metadata, a JWKS, RFC 7662 introspection, each switchable down or slow and counting its hits;
//! and the RS256 signing its JWT access tokens need.
//!
//! Signing: the library verifies only, so the test signs here with textbook RSA (m^d mod n,
//! Montgomery multiplication on u64 limbs) over the EMSA-PKCS1-v1_5 encoding, with the private
//! exponents of `test_rsa_keys.json` (two 2048-bit keys generated once with `openssl genrsa`
//! for these tests alone; nothing else uses them). Not constant time, and it need not be.

#![allow(dead_code)]

use agentteams_mcp::base64;
use agentteams_mcp::json::{self, Value};
use agentteams_mcp::sha256;
use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The resource the tests' server is configured as.
pub const RESOURCE: &str = "https://mcp.test.example/mcp";
/// The introspection client credentials the server sends.
pub const CLIENT_ID: &str = "mcp-resource";
pub const CLIENT_SECRET: &str = "introspection-secret-0123";

/// An RSA key pair of the fixture (public `n`, `e`; private `d`), big-endian bytes.
pub struct RsaKey {
    pub n: Vec<u8>,
    pub e: Vec<u8>,
    d: Vec<u8>,
}

fn hex_bytes(hex: &str) -> Vec<u8> {
    let hex = if hex.len() % 2 == 1 {
        format!("0{hex}")
    } else {
        hex.to_owned()
    };
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect()
}

/// The fixture's keys: `"signing"` (published in the JWKS) or `"unknown"` (never published).
pub fn rsa_key(name: &str) -> RsaKey {
    let doc = json::parse(include_str!("test_rsa_keys.json").as_bytes()).unwrap();
    let key = doc.get(name).unwrap();
    let field = |f: &str| hex_bytes(key.get(f).unwrap().as_str().unwrap());
    RsaKey {
        n: field("n"),
        e: field("e"),
        d: field("d"),
    }
}

fn to_limbs(be: &[u8], limbs: usize) -> Vec<u64> {
    let mut out = vec![0u64; limbs];
    for (i, byte) in be.iter().rev().enumerate() {
        out[i / 8] |= u64::from(*byte) << (8 * (i % 8));
    }
    out
}

fn from_limbs(limbs: &[u64], len: usize) -> Vec<u8> {
    let mut out = vec![0u8; len];
    for i in 0..len {
        out[len - 1 - i] = (limbs[i / 8] >> (8 * (i % 8))) as u8;
    }
    out
}

fn geq(a: &[u64], b: &[u64]) -> bool {
    for i in (0..a.len()).rev() {
        if a[i] != b[i] {
            return a[i] > b[i];
        }
    }
    true
}

fn sub_in_place(a: &mut [u64], b: &[u64]) {
    let mut borrow = 0u64;
    for i in 0..a.len() {
        let (d1, b1) = a[i].overflowing_sub(b[i]);
        let (d2, b2) = d1.overflowing_sub(borrow);
        a[i] = d2;
        borrow = u64::from(b1 || b2);
    }
}

/// Montgomery product a·b·R⁻¹ mod n (CIOS).
fn mont_mul(a: &[u64], b: &[u64], n: &[u64], n0inv: u64) -> Vec<u64> {
    let s = n.len();
    let mut t = vec![0u64; s + 2];
    for &bi in b.iter().take(s) {
        let mut carry = 0u128;
        for j in 0..s {
            let v = u128::from(t[j]) + u128::from(a[j]) * u128::from(bi) + carry;
            t[j] = v as u64;
            carry = v >> 64;
        }
        let v = u128::from(t[s]) + carry;
        t[s] = v as u64;
        t[s + 1] = (v >> 64) as u64;
        let m = t[0].wrapping_mul(n0inv);
        let mut carry = (u128::from(t[0]) + u128::from(m) * u128::from(n[0])) >> 64;
        for j in 1..s {
            let v = u128::from(t[j]) + u128::from(m) * u128::from(n[j]) + carry;
            t[j - 1] = v as u64;
            carry = v >> 64;
        }
        let v = u128::from(t[s]) + carry;
        t[s - 1] = v as u64;
        t[s] = t[s + 1] + (v >> 64) as u64;
    }
    let mut out = t[..s].to_vec();
    if t[s] != 0 || geq(&out, n) {
        sub_in_place(&mut out, n);
    }
    out
}

/// base^exp mod n, all big-endian; the result is as long as n.
fn mod_pow(base: &[u8], exp: &[u8], n: &[u8]) -> Vec<u8> {
    let s = n.len().div_ceil(8);
    let nl = to_limbs(n, s);
    let mut inv = 1u64;
    for _ in 0..6 {
        inv = inv.wrapping_mul(2u64.wrapping_sub(nl[0].wrapping_mul(inv)));
    }
    let n0inv = inv.wrapping_neg();
    // R² mod n by doubling 1 (2·64·s) times.
    let mut r2 = vec![0u64; s];
    r2[0] = 1;
    for _ in 0..2 * 64 * s {
        let top = r2[s - 1] >> 63;
        for i in (1..s).rev() {
            r2[i] = (r2[i] << 1) | (r2[i - 1] >> 63);
        }
        r2[0] <<= 1;
        if top == 1 || geq(&r2, &nl) {
            sub_in_place(&mut r2, &nl);
        }
    }
    let mut one = vec![0u64; s];
    one[0] = 1;
    let base_m = mont_mul(&to_limbs(base, s), &r2, &nl, n0inv);
    let mut acc = mont_mul(&one, &r2, &nl, n0inv);
    for byte in exp {
        for bit in (0..8).rev() {
            acc = mont_mul(&acc, &acc, &nl, n0inv);
            if (byte >> bit) & 1 == 1 {
                acc = mont_mul(&acc, &base_m, &nl, n0inv);
            }
        }
    }
    from_limbs(&mont_mul(&acc, &one, &nl, n0inv), n.len())
}

impl RsaKey {
    /// An RS256 signature (RSASSA-PKCS1-v1_5 with SHA-256) of `message`.
    pub fn sign_rs256(&self, message: &[u8]) -> Vec<u8> {
        const DIGEST_INFO: [u8; 19] = [
            0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02,
            0x01, 0x05, 0x00, 0x04, 0x20,
        ];
        let k = self.n.len();
        let mut em = vec![0xffu8; k];
        em[0] = 0;
        em[1] = 1;
        let t_len = DIGEST_INFO.len() + 32;
        em[k - t_len - 1] = 0;
        em[k - t_len..k - 32].copy_from_slice(&DIGEST_INFO);
        em[k - 32..].copy_from_slice(&sha256::digest(message));
        mod_pow(&em, &self.d, &self.n)
    }

    /// The public key as a JWK with `kid`.
    pub fn jwk(&self, kid: &str) -> String {
        format!(
            r#"{{"kty":"RSA","kid":"{kid}","use":"sig","alg":"RS256","n":"{}","e":"{}"}}"#,
            base64::encode_url(&self.n),
            base64::encode_url(&self.e)
        )
    }
}

/// Seconds since the Unix epoch.
pub fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// A compact JWS with `header` and `claims` (JSON texts), signed RS256 by `key`.
pub fn sign_jwt(key: &RsaKey, header: &str, claims: &str) -> String {
    let input = format!(
        "{}.{}",
        base64::encode_url(header.as_bytes()),
        base64::encode_url(claims.as_bytes())
    );
    let signature = key.sign_rs256(input.as_bytes());
    format!("{input}.{}", base64::encode_url(&signature))
}

/// A JWT with the given header, `signature` bytes as they are.
pub fn unsigned_jwt(header: &str, claims: &str, signature: &[u8]) -> String {
    format!(
        "{}.{}.{}",
        base64::encode_url(header.as_bytes()),
        base64::encode_url(claims.as_bytes()),
        base64::encode_url(signature)
    )
}

/// What the authorization server does at the moment.
#[derive(Default)]
pub struct Behaviour {
    pub jwks_down: AtomicBool,
    /// The key set publishes the fixture's other key under kid "k1" (a rotation).
    pub jwks_rotated: AtomicBool,
    pub introspection_down: AtomicBool,
    /// Introspection answers only after this many milliseconds.
    pub introspection_delay_ms: AtomicU64,
    pub metadata_hits: AtomicU64,
    pub jwks_hits: AtomicU64,
    pub introspection_hits: AtomicU64,
    /// Introspection answers by token; any other token is inactive.
    pub introspection: Mutex<HashMap<String, String>>,
    /// Set when a request came with wrong or no client credentials.
    pub bad_client_auth: AtomicBool,
}

/// A running authorization server.
pub struct AuthServer {
    pub issuer: String,
    pub port: u16,
    pub behaviour: Arc<Behaviour>,
}

impl AuthServer {
    /// Serves on a free loopback port until the test process ends; its JWKS publishes the
    /// fixture's signing key under `kid` "k1".
    pub fn start() -> AuthServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let issuer = format!("http://127.0.0.1:{port}");
        let behaviour = Arc::new(Behaviour::default());
        let state = behaviour.clone();
        let jwks = [
            format!(r#"{{"keys":[{}]}}"#, rsa_key("signing").jwk("k1")),
            format!(r#"{{"keys":[{}]}}"#, rsa_key("unknown").jwk("k1")),
        ];
        let iss = issuer.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let state = state.clone();
                let (jwks, iss) = (jwks.clone(), iss.clone());
                std::thread::spawn(move || answer(stream, &state, &jwks, &iss));
            }
        });
        AuthServer {
            issuer,
            port,
            behaviour,
        }
    }

    /// Makes introspection answer `answer` (a JSON object's text) for `token`.
    pub fn introspects(&self, token: &str, answer: &str) {
        self.behaviour
            .introspection
            .lock()
            .unwrap()
            .insert(token.to_owned(), answer.to_owned());
    }

    pub fn hits(&self) -> (u64, u64, u64) {
        let b = &self.behaviour;
        (
            b.metadata_hits.load(Ordering::SeqCst),
            b.jwks_hits.load(Ordering::SeqCst),
            b.introspection_hits.load(Ordering::SeqCst),
        )
    }
}

fn read_request(stream: &mut TcpStream) -> Option<(String, Vec<u8>)> {
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = stream.read(&mut chunk).ok().filter(|&n| n > 0)?;
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let length: usize = head
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse().ok())?
        })
        .unwrap_or(0);
    while buf.len() < head_end + length {
        let n = stream.read(&mut chunk).ok().filter(|&n| n > 0)?;
        buf.extend_from_slice(&chunk[..n]);
    }
    Some((head, buf[head_end..head_end + length].to_vec()))
}

fn form_value(body: &str, name: &str) -> Option<String> {
    body.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=')?;
        (k == name).then(|| {
            let mut out = Vec::new();
            let bytes = v.as_bytes();
            let mut i = 0;
            while i < bytes.len() {
                match bytes[i] {
                    b'+' => out.push(b' '),
                    b'%' if i + 2 < bytes.len() => {
                        out.push(u8::from_str_radix(&v[i + 1..i + 3], 16).unwrap_or(b'?'));
                        i += 2;
                    }
                    b => out.push(b),
                }
                i += 1;
            }
            String::from_utf8_lossy(&out).into_owned()
        })
    })
}

fn answer(mut stream: TcpStream, state: &Behaviour, jwks: &[String; 2], issuer: &str) {
    let Some((head, body)) = read_request(&mut stream) else {
        return;
    };
    let path = head.split(' ').nth(1).unwrap_or("").to_owned();
    let reply = |stream: &mut TcpStream, status: &str, body: &str| {
        let _ = write!(
            stream,
            "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
    };
    match path.as_str() {
        "/.well-known/oauth-authorization-server" => {
            state.metadata_hits.fetch_add(1, Ordering::SeqCst);
            let doc = format!(
                r#"{{"issuer":"{issuer}","jwks_uri":"{issuer}/jwks","introspection_endpoint":"{issuer}/introspect"}}"#
            );
            reply(&mut stream, "200 OK", &doc);
        }
        "/jwks" => {
            state.jwks_hits.fetch_add(1, Ordering::SeqCst);
            if state.jwks_down.load(Ordering::SeqCst) {
                reply(&mut stream, "503 Service Unavailable", "{}");
            } else {
                let rotated = state.jwks_rotated.load(Ordering::SeqCst);
                reply(&mut stream, "200 OK", &jwks[usize::from(rotated)]);
            }
        }
        "/introspect" => {
            state.introspection_hits.fetch_add(1, Ordering::SeqCst);
            let delay = state.introspection_delay_ms.load(Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(delay));
            let expected = format!(
                "authorization: basic {}",
                base64::encode(format!("{CLIENT_ID}:{CLIENT_SECRET}").as_bytes())
            );
            if !head
                .to_ascii_lowercase()
                .contains(&expected.to_ascii_lowercase())
            {
                state.bad_client_auth.store(true, Ordering::SeqCst);
                reply(
                    &mut stream,
                    "401 Unauthorized",
                    r#"{"error":"invalid_client"}"#,
                );
                return;
            }
            if state.introspection_down.load(Ordering::SeqCst) {
                reply(&mut stream, "503 Service Unavailable", "{}");
                return;
            }
            let body = String::from_utf8_lossy(&body).into_owned();
            let token = form_value(&body, "token").unwrap_or_default();
            let known = state.introspection.lock().unwrap().get(&token).cloned();
            reply(
                &mut stream,
                "200 OK",
                known.as_deref().unwrap_or(r#"{"active":false}"#),
            );
        }
        _ => reply(&mut stream, "404 Not Found", "{}"),
    }
}

/// Parses a JSON body (test helper).
pub fn parse(text: &str) -> Value {
    json::parse(text.as_bytes()).unwrap_or_else(|e| panic!("{e}: {text}"))
}
