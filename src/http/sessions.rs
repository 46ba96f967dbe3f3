//! The table of live Streamable HTTP sessions: random ids, idle expiry and a size cap that a full
//! table enforces on the principal holding the most sessions.

use super::limits::{MAX_SESSIONS, SESSION_IDLE_EXPIRY};
use super::streams::StreamHub;
use crate::server::Session;
use std::collections::HashMap;
use std::io;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Random bytes per session id (128 bits), hex-encoded on the wire.
pub const SESSION_ID_BYTES: usize = 16;

struct Entry {
    session: Arc<Session>,
    /// The session's SSE streams and event store ([`super::streams`]).
    streams: Arc<StreamHub>,
    last_used: Instant,
    /// Gone from this moment whatever its use (a sealed session's token expiry).
    deadline: Option<Instant>,
}

/// A live session and its streams, as [`Sessions::get`] finds them.
pub struct Live {
    pub session: Arc<Session>,
    pub streams: Arc<StreamHub>,
}

impl Entry {
    /// Ends the session's calls and streams (it leaves the table).
    fn end(&self) {
        self.session.cancel_all();
        self.streams.close();
    }

    fn is_live(&self, now: Instant, idle_expiry: Duration) -> bool {
        now.duration_since(self.last_used) < idle_expiry && self.deadline.is_none_or(|d| now < d)
    }
}

/// Live sessions by id. Ids come from the OS random source, so they cannot be guessed.
pub struct Sessions {
    table: Mutex<HashMap<String, Entry>>,
    random: crate::random::Source,
    max: usize,
    expiry: Duration,
}

impl Sessions {
    /// Opens the OS random source ([`crate::random`]).
    pub fn new() -> io::Result<Sessions> {
        Ok(Sessions {
            table: Mutex::new(HashMap::new()),
            random: crate::random::Source::open()?,
            max: MAX_SESSIONS,
            expiry: SESSION_IDLE_EXPIRY,
        })
    }

    /// The same table with a smaller cap and expiry (tests).
    pub fn with_limits(mut self, max: usize, expiry: Duration) -> Sessions {
        self.max = max.max(1);
        self.expiry = expiry;
        self
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A fresh id: [`SESSION_ID_BYTES`] random bytes as lower-case hex (visible ASCII).
    pub fn new_id(&self) -> io::Result<String> {
        let mut bytes = [0u8; SESSION_ID_BYTES];
        self.random.fill(&mut bytes)?;
        Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
    }

    /// Registers `session` and returns its id. Expired sessions are dropped first; when the table
    /// is still full the least recently used session of the principal holding the most is ended
    /// (without OAuth every session has the same, no, principal: the least recently used of all).
    pub fn insert(&self, session: Arc<Session>) -> io::Result<String> {
        let id = self.new_id()?;
        self.insert_as(id.clone(), session);
        Ok(id)
    }

    /// Registers `session` under `id` (from [`Sessions::new_id`]), as [`Sessions::insert`] does.
    pub fn insert_as(&self, id: String, session: Arc<Session>) {
        self.insert_until(id, session, None);
    }

    /// Registers `session` under `id` as [`Sessions::insert_as`] does, gone at `deadline` even if
    /// in use (sealed sessions: the table then doubles as the cache of tokens already checked).
    pub fn insert_until(
        &self,
        id: String,
        session: Arc<Session>,
        deadline: Option<Instant>,
    ) -> Live {
        let now = Instant::now();
        let mut table = self.lock();
        let expiry = self.expiry;
        table.retain(|_, e| {
            let live = e.is_live(now, expiry);
            if !live {
                e.end();
            }
            live
        });
        if table.len() >= self.max {
            // Whoever fills the table ends its own sessions, not another principal's: a caller
            // opening sessions by the thousand would otherwise end everyone else's.
            let mut held: HashMap<Option<&str>, usize> = HashMap::new();
            for entry in table.values() {
                *held.entry(entry.session.principal()).or_default() += 1;
            }
            let oldest = table
                .iter()
                .min_by_key(|(_, e)| {
                    let holds = held.get(&e.session.principal()).copied().unwrap_or(0);
                    (std::cmp::Reverse(holds), e.last_used)
                })
                .map(|(id, _)| id.clone());
            if let Some(entry) = oldest.and_then(|id| table.remove(&id)) {
                entry.end();
            }
        }
        let streams = Arc::new(StreamHub::new());
        table.insert(
            id,
            Entry {
                session: session.clone(),
                streams: streams.clone(),
                last_used: now,
                deadline,
            },
        );
        Live { session, streams }
    }

    /// The live session with this id, marking it used; `None` if unknown, ended or expired.
    pub fn get(&self, id: &str) -> Option<Live> {
        let now = Instant::now();
        let mut table = self.lock();
        let entry = table.get_mut(id)?;
        if !entry.is_live(now, self.expiry) {
            if let Some(entry) = table.remove(id) {
                entry.end();
            }
            return None;
        }
        entry.last_used = now;
        Some(Live {
            session: entry.session.clone(),
            streams: entry.streams.clone(),
        })
    }

    /// Ends the session with this id; false if there was none.
    pub fn remove(&self, id: &str) -> bool {
        match self.lock().remove(id) {
            Some(entry) => {
                entry.end();
                true
            }
            None => false,
        }
    }

    pub fn len(&self) -> usize {
        self.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::Map;
    use crate::server::{CallContext, Engine, Tool, ToolError, ToolOutput, ToolSet};

    struct NoTools;
    impl ToolSet for NoTools {
        fn server_name(&self) -> &str {
            "none"
        }
        fn tools(&self) -> Vec<Tool> {
            Vec::new()
        }
        fn call(&self, _: &str, _: &Map, _: &CallContext<'_>) -> Result<ToolOutput, ToolError> {
            Err(ToolError::new("no tools"))
        }
    }

    fn session() -> Arc<Session> {
        owned_by(None)
    }

    fn owned_by(principal: Option<&str>) -> Arc<Session> {
        Arc::new(Session::new(Arc::new(Engine::new(Arc::new(NoTools)))).with_principal(principal))
    }

    #[test]
    fn ids_are_random_visible_ascii_and_resolve() {
        let sessions = Sessions::new().unwrap();
        let a = sessions.insert(session()).unwrap();
        let b = sessions.insert(session()).unwrap();
        assert_ne!(a, b);
        assert_eq!(a.len(), 2 * SESSION_ID_BYTES);
        assert!(a.bytes().all(|c| (0x21..=0x7e).contains(&c)));
        assert!(sessions.get(&a).is_some());
        assert!(sessions.get("not-an-id").is_none());
        assert!(sessions.remove(&a));
        assert!(sessions.get(&a).is_none());
        assert!(!sessions.remove(&a));
        assert!(sessions.get(&b).is_some());
    }

    #[test]
    fn the_cap_ends_the_least_recently_used_session() {
        let sessions = Sessions::new()
            .unwrap()
            .with_limits(2, Duration::from_secs(3600));
        let a = sessions.insert(session()).unwrap();
        let b = sessions.insert(session()).unwrap();
        std::thread::sleep(Duration::from_millis(2));
        assert!(sessions.get(&a).is_some()); // a is now more recent than b
        let c = sessions.insert(session()).unwrap();
        assert_eq!(sessions.len(), 2);
        assert!(sessions.get(&b).is_none());
        assert!(sessions.get(&a).is_some() && sessions.get(&c).is_some());
    }

    #[test]
    fn the_cap_ends_a_session_of_the_principal_holding_the_most() {
        let sessions = Sessions::new()
            .unwrap()
            .with_limits(3, Duration::from_secs(3600));
        let alice = sessions.insert(owned_by(Some("a"))).unwrap();
        let bobs: Vec<_> = (0..2)
            .map(|_| sessions.insert(owned_by(Some("b"))).unwrap())
            .collect();
        // Alice's is the least recently used of all; Bob holds the most.
        let next = sessions.insert(owned_by(Some("b"))).unwrap();
        assert_eq!(sessions.len(), 3);
        assert!(sessions.get(&bobs[0]).is_none(), "Bob's oldest ended");
        assert!(sessions.get(&alice).is_some());
        assert!(sessions.get(&bobs[1]).is_some() && sessions.get(&next).is_some());
        // A tie: the least recently used of the tied holders' sessions ends.
        let carol = sessions.insert(owned_by(Some("c"))).unwrap();
        assert!(sessions.get(&bobs[1]).is_none(), "Bob still held the most");
        std::thread::sleep(Duration::from_millis(2));
        assert!(sessions.get(&carol).is_some() && sessions.get(&next).is_some());
        sessions.insert(owned_by(Some("d"))).unwrap();
        assert!(
            sessions.get(&alice).is_none(),
            "one each: the least recently used"
        );
    }

    #[test]
    fn a_deadline_ends_a_session_in_use() {
        let sessions = Sessions::new().unwrap();
        let now = Instant::now();
        sessions.insert_until("a".into(), session(), Some(now + Duration::from_millis(30)));
        sessions.insert_until("b".into(), session(), Some(now + Duration::from_secs(60)));
        assert!(sessions.get("a").is_some());
        std::thread::sleep(Duration::from_millis(40));
        assert!(sessions.get("a").is_none());
        assert!(sessions.get("b").is_some());
    }

    #[test]
    fn idle_sessions_expire() {
        let sessions = Sessions::new().unwrap().with_limits(8, Duration::ZERO);
        let a = sessions.insert(session()).unwrap();
        assert!(sessions.get(&a).is_none());
        assert!(sessions.is_empty());
    }
}
