//! Validated tokens remembered for a bounded time in a bounded table, keyed by the token's SHA-256
//! (the token itself is never stored): a JWT's grant after its signature and claims passed, an
//! introspection answer (active or not). An entry never outlives its lifetime nor the token's
//! `exp`; when the table is full, expired entries go first, then the one closest to expiry.

use super::grant::Grant;
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// What a token was found to be: its grant, or why it is refused.
pub type Outcome = Result<Grant, String>;

struct Entry {
    outcome: Outcome,
    until: Instant,
}

/// The table and its bounds.
pub struct TokenCache {
    entries: Mutex<HashMap<[u8; 32], Entry>>,
    ttl: Duration,
    max_entries: usize,
}

/// The key a token is remembered under.
pub fn key_of(token: &str) -> [u8; 32] {
    crate::sha256::digest(token.as_bytes())
}

impl TokenCache {
    /// A cache keeping outcomes `ttl` (zero: nothing is kept), at most `max_entries` of them.
    pub fn new(ttl: Duration, max_entries: usize) -> TokenCache {
        TokenCache {
            entries: Mutex::new(HashMap::new()),
            ttl,
            max_entries: max_entries.max(1),
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<[u8; 32], Entry>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// How many outcomes are held now (expired ones included until they are swept).
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The outcome remembered under `key`, if it is still fresh at `now`.
    pub fn get(&self, key: &[u8; 32], now: Instant) -> Option<Outcome> {
        self.lock()
            .get(key)
            .filter(|e| e.until > now)
            .map(|e| e.outcome.clone())
    }

    /// Remembers `outcome` for the lifetime, cut to the grant's `exp` (`now_secs`: `now` as Unix
    /// seconds).
    pub fn put(&self, key: [u8; 32], outcome: Outcome, now: Instant, now_secs: u64) {
        let left = match &outcome {
            Ok(grant) => grant.expires_at.map(|exp| exp.saturating_sub(now_secs)),
            Err(_) => None,
        };
        let lifetime = self.ttl.min(Duration::from_secs(left.unwrap_or(u64::MAX)));
        if lifetime.is_zero() {
            return;
        }
        let mut entries = self.lock();
        if entries.len() >= self.max_entries && !entries.contains_key(&key) {
            entries.retain(|_, e| e.until > now);
            if entries.len() >= self.max_entries {
                let soonest = entries.iter().min_by_key(|(_, e)| e.until).map(|(k, _)| *k);
                if let Some(soonest) = soonest {
                    entries.remove(&soonest);
                }
            }
        }
        let until = now + lifetime;
        entries.insert(key, Entry { outcome, until });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grant(expires_at: Option<u64>) -> Grant {
        Grant {
            issuer: "http://as".into(),
            subject: "u".into(),
            scopes: vec![],
            expires_at,
        }
    }

    #[test]
    fn the_table_never_holds_more_than_its_bound_and_drops_the_soonest_first() {
        let cache = TokenCache::new(Duration::from_secs(600), 3);
        let now = Instant::now();
        for i in 0..10u8 {
            // Later keys live longer: each is put one second later.
            cache.put(
                [i; 32],
                Err("inactive".into()),
                now + Duration::from_secs(u64::from(i)),
                0,
            );
            assert!(cache.len() <= 3);
        }
        let kept: Vec<u8> = (0..10u8)
            .filter(|i| cache.get(&[*i; 32], now).is_some())
            .collect();
        assert_eq!(kept, [7, 8, 9]);
    }

    #[test]
    fn entries_expire_with_their_lifetime_or_the_tokens_exp() {
        let now = Instant::now();
        let cache = TokenCache::new(Duration::from_secs(60), 8);
        cache.put([1; 32], Ok(grant(Some(1010))), now, 1000);
        assert!(cache.get(&[1; 32], now + Duration::from_secs(9)).is_some());
        assert!(
            cache.get(&[1; 32], now + Duration::from_secs(10)).is_none(),
            "exp passed"
        );
        cache.put([2; 32], Ok(grant(None)), now, 1000);
        assert!(cache.get(&[2; 32], now + Duration::from_secs(59)).is_some());
        assert!(
            cache.get(&[2; 32], now + Duration::from_secs(60)).is_none(),
            "lifetime passed"
        );
        cache.put([3; 32], Ok(grant(Some(900))), now, 1000);
        assert!(
            cache.get(&[3; 32], now).is_none(),
            "an expired grant is not kept"
        );
        let off = TokenCache::new(Duration::ZERO, 8);
        off.put([4; 32], Ok(grant(None)), now, 1000);
        assert!(off.is_empty());
        assert_ne!(key_of("a"), key_of("b"));
    }
}
