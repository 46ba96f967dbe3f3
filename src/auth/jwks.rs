//! An issuer's verification keys, fetched from its `jwks_uri` (found in its RFC 8414 metadata if
//! need be) and cached under bounds: a set older than the maximum age is fetched again at its next
//! use, a token naming a `kid` the set lacks triggers a fetch, and no two fetches of one issuer
//! start within the refetch interval, whatever tokens arrive. A failed fetch keeps the keys
//! already held; with none held, every token of that issuer fails closed as unavailable.
//!
//! Fetches run under the cache's lock, so a burst of tokens causes one fetch, not one each; the
//! others wait at most the fetch timeout.

use super::config::{KeySource, DEFAULT_FETCH_TIMEOUT_MS};
use super::fetch::Exchange;
use crate::crypto::jwk::{Jwks, MAX_JWKS_BYTES};
use crate::http1::url::Url;
use crate::json::{self, Value};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The largest RFC 8414 metadata document read.
pub const MAX_METADATA_BYTES: usize = 64 * 1024;

/// Why no key set could be had.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unavailable(pub String);

/// The timing bounds of one cache.
#[derive(Debug, Clone, Copy)]
pub struct Refresh {
    pub refetch_interval: Duration,
    pub max_age: Duration,
    pub timeout: Duration,
}

impl Default for Refresh {
    fn default() -> Refresh {
        Refresh {
            refetch_interval: Duration::from_secs(
                super::config::DEFAULT_JWKS_REFETCH_INTERVAL_SECS,
            ),
            max_age: Duration::from_secs(super::config::DEFAULT_JWKS_MAX_AGE_SECS),
            timeout: Duration::from_millis(DEFAULT_FETCH_TIMEOUT_MS),
        }
    }
}

#[derive(Default)]
struct State {
    keys: Option<Arc<Jwks>>,
    fetched_at: Option<Instant>,
    last_attempt: Option<Instant>,
    /// The `jwks_uri` the metadata named, once read.
    discovered: Option<Url>,
    last_error: Option<String>,
    fetches: u64,
}

/// One issuer's keys and where they come from.
pub struct KeyCache {
    issuer: String,
    source: KeySource,
    refresh: Refresh,
    state: Mutex<State>,
}

impl KeyCache {
    pub fn new(issuer: &str, source: KeySource, refresh: Refresh) -> KeyCache {
        KeyCache {
            issuer: issuer.to_owned(),
            source,
            refresh,
            state: Mutex::new(State::default()),
        }
    }

    /// Whether this issuer's tokens can be verified by signature at all.
    pub fn has_keys(&self) -> bool {
        !matches!(self.source, KeySource::None)
    }

    /// How many fetches were attempted (key sets and metadata together).
    pub fn fetches(&self) -> u64 {
        self.lock().fetches
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The keys to verify a token whose header names `kid`, fetching first when the set is
    /// missing, too old, or lacks `kid`, and the refetch interval allows.
    pub fn keys_for(&self, kid: Option<&str>, now: Instant) -> Result<Arc<Jwks>, Unavailable> {
        let (url_source, metadata) = match &self.source {
            KeySource::Fixed(keys) => return Ok(keys.clone()),
            KeySource::None => {
                return Err(Unavailable(format!(
                    "issuer {} has no key set configured",
                    self.issuer
                )))
            }
            KeySource::Url(url) => (Some(url), None),
            KeySource::Metadata(url) => (None, Some(url)),
        };
        let mut state = self.lock();
        let stale = state
            .fetched_at
            .is_none_or(|at| now.saturating_duration_since(at) >= self.refresh.max_age);
        let lacks_kid = match (&state.keys, kid) {
            (Some(keys), Some(kid)) => !keys.keys().iter().any(|k| k.kid.as_deref() == Some(kid)),
            _ => false,
        };
        let allowed = state
            .last_attempt
            .is_none_or(|at| now.saturating_duration_since(at) >= self.refresh.refetch_interval);
        if (stale || lacks_kid) && allowed {
            state.last_attempt = Some(now);
            let outcome = self.fetch(&mut state, url_source, metadata);
            match outcome {
                Ok(keys) => {
                    state.keys = Some(Arc::new(keys));
                    state.fetched_at = Some(now);
                    state.last_error = None;
                }
                Err(why) => {
                    let kept = if state.keys.is_some() {
                        " (keeping the keys held)"
                    } else {
                        ""
                    };
                    crate::voice::say(
                        true,
                        &format!(
                            "{}auth: key set of issuer {} not fetched: {why}{kept}",
                            crate::voice::PREFIX,
                            self.issuer
                        ),
                    );
                    state.last_error = Some(why);
                }
            }
        }
        match &state.keys {
            Some(keys) => Ok(keys.clone()),
            None => Err(Unavailable(format!(
                "the key set of issuer {} could not be fetched ({}); next attempt after {} s",
                self.issuer,
                state.last_error.as_deref().unwrap_or("no attempt yet"),
                self.refresh.refetch_interval.as_secs()
            ))),
        }
    }

    fn fetch(
        &self,
        state: &mut State,
        url: Option<&Url>,
        metadata: Option<&Url>,
    ) -> Result<Jwks, String> {
        let jwks_url = match (url, metadata, &state.discovered) {
            (Some(url), _, _) => url.clone(),
            (None, _, Some(found)) => found.clone(),
            (None, Some(metadata), None) => {
                state.fetches += 1;
                let found = self.discover(metadata)?;
                state.discovered = Some(found.clone());
                found
            }
            (None, None, None) => return Err("no key set URL".into()),
        };
        state.fetches += 1;
        let answer = get(&jwks_url, self.refresh.timeout, MAX_JWKS_BYTES)?;
        let jwks = Jwks::parse(&answer).map_err(|e| format!("{jwks_url}: {e}"))?;
        if jwks.keys().is_empty() {
            return Err(format!("{jwks_url}: the key set has no usable key"));
        }
        Ok(jwks)
    }

    /// The `jwks_uri` of the RFC 8414 metadata at `url`, whose `issuer` must be this issuer
    /// (RFC 8414 §3.3: metadata naming another issuer is not to be used).
    fn discover(&self, url: &Url) -> Result<Url, String> {
        let body = get(url, self.refresh.timeout, MAX_METADATA_BYTES)?;
        let document =
            json::parse(&body).map_err(|e| format!("{url}: metadata is not JSON: {e}"))?;
        if document.get("issuer").and_then(Value::as_str) != Some(self.issuer.as_str()) {
            return Err(format!(
                "{url}: the metadata's issuer is not {}",
                self.issuer
            ));
        }
        let jwks_uri = document
            .get("jwks_uri")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("{url}: the metadata has no jwks_uri"))?;
        Url::parse(jwks_uri).map_err(|e| {
            format!("{url}: its jwks_uri cannot be fetched ({e}); give jwks_uri or jwks_file in the auth config")
        })
    }
}

/// GETs `url` and returns the body of a 200 answer.
fn get(url: &Url, timeout: Duration, max_body: usize) -> Result<Vec<u8>, String> {
    let answer = Exchange {
        method: "GET",
        url,
        headers: vec![("Accept", "application/json".into())],
        body: b"",
        timeout,
        max_body,
    }
    .run()
    .map_err(|e| e.to_string())?;
    if answer.status != 200 {
        return Err(format!("{url}: status {}", answer.status));
    }
    Ok(answer.body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::TcpListener;
    use std::sync::atomic::{AtomicU64, Ordering};

    const KEYS: &str = r#"{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"k1","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}"#;

    /// Serves `KEYS` at /jwks (and metadata naming it at /meta) while `up`, counting requests.
    fn key_server(
        issuer: &'static str,
    ) -> (u16, Arc<AtomicU64>, Arc<std::sync::atomic::AtomicBool>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let hits = Arc::new(AtomicU64::new(0));
        let up = Arc::new(std::sync::atomic::AtomicBool::new(true));
        let (h, u) = (hits.clone(), up.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut s) = stream else { continue };
                let mut buf = [0u8; 2048];
                let n = s.read(&mut buf).unwrap_or(0);
                h.fetch_add(1, Ordering::SeqCst);
                let request = String::from_utf8_lossy(&buf[..n]).into_owned();
                let body = if !u.load(Ordering::SeqCst) {
                    None
                } else if request.starts_with("GET /meta") {
                    Some(format!(
                        r#"{{"issuer":"{issuer}","jwks_uri":"http://127.0.0.1:{port}/jwks"}}"#
                    ))
                } else {
                    Some(KEYS.to_owned())
                };
                let reply = match body {
                    Some(b) => format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{b}", b.len()),
                    None => "HTTP/1.1 503 Down\r\nContent-Length: 0\r\n\r\n".to_owned(),
                };
                let _ = s.write_all(reply.as_bytes());
            }
        });
        (port, hits, up)
    }

    fn refresh(interval_ms: u64) -> Refresh {
        Refresh {
            refetch_interval: Duration::from_millis(interval_ms),
            max_age: Duration::from_secs(3600),
            timeout: Duration::from_secs(2),
        }
    }

    #[test]
    fn unknown_kids_refetch_at_most_once_per_interval() {
        let (port, hits, _) = key_server("http://as");
        let url = Url::parse(&format!("http://127.0.0.1:{port}/jwks")).unwrap();
        let cache = KeyCache::new("http://as", KeySource::Url(url), refresh(60_000));
        let now = Instant::now();
        assert_eq!(cache.keys_for(Some("k1"), now).unwrap().keys().len(), 1);
        for i in 0..20 {
            let keys = cache.keys_for(Some(&format!("forged-{i}")), now).unwrap();
            assert_eq!(keys.keys().len(), 1);
        }
        assert_eq!((hits.load(Ordering::SeqCst), cache.fetches()), (1, 1));
        cache
            .keys_for(Some("forged"), now + Duration::from_secs(61))
            .unwrap();
        assert_eq!(hits.load(Ordering::SeqCst), 2);
        cache
            .keys_for(Some("k1"), now + Duration::from_secs(62))
            .unwrap();
        assert_eq!(hits.load(Ordering::SeqCst), 2, "a known kid needs no fetch");
    }

    #[test]
    fn metadata_is_read_once_and_a_server_down_fails_closed_then_keeps_old_keys() {
        let (port, hits, up) = key_server("http://as");
        let meta = Url::parse(&format!("http://127.0.0.1:{port}/meta")).unwrap();
        let cache = KeyCache::new(
            "http://as",
            KeySource::Metadata(meta.clone()),
            refresh(1000),
        );
        let now = Instant::now();
        up.store(false, Ordering::SeqCst);
        let err = cache.keys_for(None, now).unwrap_err();
        assert!(err.0.contains("status 503"), "{err:?}");
        assert!(cache.keys_for(None, now).is_err());
        assert_eq!(
            hits.load(Ordering::SeqCst),
            1,
            "no second attempt within the interval"
        );
        up.store(true, Ordering::SeqCst);
        let later = now + Duration::from_secs(2);
        assert_eq!(cache.keys_for(None, later).unwrap().keys().len(), 1);
        assert_eq!(hits.load(Ordering::SeqCst), 3, "metadata, then the key set");
        up.store(false, Ordering::SeqCst);
        let keys = cache
            .keys_for(Some("new"), later + Duration::from_secs(2))
            .unwrap();
        assert_eq!(
            keys.keys().len(),
            1,
            "the keys held survive a failed refetch"
        );
        let wrong = KeyCache::new("http://other", KeySource::Metadata(meta), refresh(1000));
        up.store(true, Ordering::SeqCst);
        let err = wrong.keys_for(None, now).unwrap_err();
        assert!(
            err.0.contains("the metadata's issuer is not http://other"),
            "{err:?}"
        );
    }
}
