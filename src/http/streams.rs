//! Resumable SSE streams of one legacy session: event ids, the bounded event store, the standalone
//! GET stream and the resumption of any stream with `Last-Event-ID`.
//!
//! Every event a session's streams carry is recorded here before it is written, under an id
//! `<replica>.<instance>.<stream>.<seq>`: the replica's name (so a balancer can route a resuming
//! GET to the replica that holds the events), a random tag of this process (so ids of an earlier
//! run never match), the stream's number in the session (0 is the standalone GET stream, POST
//! streams count from 1) and the event's number in its stream (0 is the priming event, which
//! carries no data and is not stored). The store is the only queue: a writer (the POST's own
//! connection, or a GET) writes what is stored after the last id it wrote, so a slow or absent
//! reader costs at most the store's limits, and a writer that falls behind eviction ends its
//! stream instead of skipping events (the client's resumption then gets a clear 410).

use super::limits::{
    EVENT_RETENTION, MAX_EVENT_ID_BYTES, MAX_REPLICA_NAME_BYTES, MAX_STORED_EVENTS,
    MAX_STORED_EVENT_BYTES, MAX_STREAM_RECORDS,
};
use std::collections::VecDeque;
use std::fmt;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The number of the session's standalone (GET) stream.
pub const STANDALONE_STREAM: u64 = 0;

/// Bytes of the random per-process tag in event ids (hex-encoded on the wire).
pub const INSTANCE_TAG_BYTES: usize = 4;

/// One event's place: which stream of the session, which event of the stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventId<'a> {
    pub replica: &'a str,
    pub instance: &'a str,
    pub stream: u64,
    pub seq: u64,
}

/// Why a `Last-Event-ID` is not an event id this server writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventIdError {
    TooLong,
    /// Not four dot-separated fields.
    Shape,
    /// The replica name is empty, too long or holds a character other than `A-Z a-z 0-9 _ -`.
    Replica,
    /// The instance tag is not lower-case hex of the right length.
    Instance,
    /// A number is empty, has a leading zero, a non-digit, or overflows.
    Number(&'static str),
}

impl fmt::Display for EventIdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EventIdError::TooLong => write!(f, "longer than {MAX_EVENT_ID_BYTES} bytes"),
            EventIdError::Shape => {
                f.write_str("not of the form <replica>.<instance>.<stream>.<event>")
            }
            EventIdError::Replica => write!(
                f,
                "the replica field is not 1 to {MAX_REPLICA_NAME_BYTES} of A-Z a-z 0-9 _ -"
            ),
            EventIdError::Instance => write!(
                f,
                "the instance field is not {} lower-case hex digits",
                2 * INSTANCE_TAG_BYTES
            ),
            EventIdError::Number(field) => {
                write!(
                    f,
                    "the {field} field is not a decimal number without leading zeros"
                )
            }
        }
    }
}

/// Whether `name` may name a replica in event ids (and so in a balancer's routing rule).
pub fn is_replica_name(name: &str) -> bool {
    (1..=MAX_REPLICA_NAME_BYTES).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

fn number(text: &str, field: &'static str) -> Result<u64, EventIdError> {
    let bad = EventIdError::Number(field);
    if text.is_empty() || (text.len() > 1 && text.starts_with('0')) {
        return Err(bad);
    }
    if !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad);
    }
    text.parse().map_err(|_| bad)
}

/// Parses a `Last-Event-ID` strictly (untrusted input: a pure function, fuzzed).
pub fn parse_event_id(raw: &[u8]) -> Result<EventId<'_>, EventIdError> {
    if raw.len() > MAX_EVENT_ID_BYTES {
        return Err(EventIdError::TooLong);
    }
    let text = std::str::from_utf8(raw).map_err(|_| EventIdError::Shape)?;
    let mut fields = text.split('.');
    let (Some(replica), Some(instance), Some(stream), Some(seq), None) = (
        fields.next(),
        fields.next(),
        fields.next(),
        fields.next(),
        fields.next(),
    ) else {
        return Err(EventIdError::Shape);
    };
    if !is_replica_name(replica) {
        return Err(EventIdError::Replica);
    }
    let hex = |b: u8| b.is_ascii_digit() || (b'a'..=b'f').contains(&b);
    if instance.len() != 2 * INSTANCE_TAG_BYTES || !instance.bytes().all(hex) {
        return Err(EventIdError::Instance);
    }
    Ok(EventId {
        replica,
        instance,
        stream: number(stream, "stream")?,
        seq: number(seq, "event")?,
    })
}

/// Who this process is in event ids: `<replica>.<instance>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    replica: String,
    instance: String,
    tag: [u8; INSTANCE_TAG_BYTES],
}

impl Origin {
    /// `replica` must pass [`is_replica_name`]; `instance` is [`INSTANCE_TAG_BYTES`] random bytes.
    pub fn new(replica: &str, instance: [u8; INSTANCE_TAG_BYTES]) -> Option<Origin> {
        is_replica_name(replica).then(|| Origin {
            replica: replica.to_owned(),
            instance: instance.iter().map(|b| format!("{b:02x}")).collect(),
            tag: instance,
        })
    }

    /// The random tag of this process, as bytes.
    pub fn instance_tag(&self) -> [u8; INSTANCE_TAG_BYTES] {
        self.tag
    }

    pub fn replica(&self) -> &str {
        &self.replica
    }

    /// The wire form of event `seq` of `stream`.
    pub fn event_id(&self, stream: u64, seq: u64) -> String {
        format!("{}.{}.{stream}.{seq}", self.replica, self.instance)
    }
}

/// Why a `Last-Event-ID` cannot be resumed here; each maps to one status and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResumeRefusal {
    /// 400: not an id this server writes.
    Malformed(EventIdError),
    /// 421: the events live in another replica (the balancer routed the GET wrongly).
    OtherReplica(String),
    /// 410: an earlier run of this replica wrote it; its events are gone.
    EarlierRun,
    /// 410: this session has no such stream (never made, or ended and evicted).
    UnknownStream(u64),
    /// 400: the stream has not sent that event yet.
    NotYetSent { stream: u64, seq: u64 },
    /// 410: events after it were evicted (store limits or age).
    Evicted { stream: u64, seq: u64 },
}

impl ResumeRefusal {
    pub fn status(&self) -> u16 {
        match self {
            ResumeRefusal::Malformed(_) | ResumeRefusal::NotYetSent { .. } => 400,
            ResumeRefusal::OtherReplica(_) => 421,
            ResumeRefusal::EarlierRun
            | ResumeRefusal::UnknownStream(_)
            | ResumeRefusal::Evicted { .. } => 410,
        }
    }
}

impl fmt::Display for ResumeRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ResumeRefusal::Malformed(why) => write!(f, "Last-Event-ID is malformed: {why}"),
            ResumeRefusal::OtherReplica(name) => write!(
                f,
                "Last-Event-ID names replica {name:?}: its events are held there (route on the id's first field)"
            ),
            ResumeRefusal::EarlierRun => f.write_str(
                "Last-Event-ID was written by an earlier run of this server; its events are gone",
            ),
            ResumeRefusal::UnknownStream(stream) => write!(
                f,
                "Last-Event-ID names stream {stream}, which this session does not hold (never opened, or ended and evicted)"
            ),
            ResumeRefusal::NotYetSent { stream, seq } => write!(
                f,
                "Last-Event-ID names event {seq} of stream {stream}, which has not been sent"
            ),
            ResumeRefusal::Evicted { stream, seq } => write!(
                f,
                "events after {seq} of stream {stream} were evicted from the event store; they cannot be replayed"
            ),
        }
    }
}

struct StoredEvent {
    stream: u64,
    seq: u64,
    at: Instant,
    data: String,
}

struct StreamRecord {
    stream: u64,
    /// The number the next event gets (0 is the priming event, never stored).
    next_seq: u64,
    finished: bool,
    /// The POST connection that opened the stream still writes its events itself.
    direct: bool,
    /// The GET writing this stream now (a generation number; 0: none).
    writer: u64,
}

struct State {
    closed: bool,
    next_stream: u64,
    next_writer: u64,
    streams: Vec<StreamRecord>,
    events: VecDeque<StoredEvent>,
    bytes: usize,
}

/// The streams and event store of one session (one replica's part of it, under sealed sessions).
pub struct StreamHub {
    state: Mutex<State>,
    changed: Condvar,
}

/// What a POST writer does with an event it published.
#[derive(Debug, PartialEq, Eq)]
pub struct Published {
    pub seq: u64,
    /// The POST connection still owns the stream: write the event there.
    pub direct: bool,
}

/// What a GET writer gets when it asks for more.
#[derive(Debug, PartialEq, Eq)]
pub enum Next {
    /// Events after the last one written, in order: `(seq, data)`.
    Events(Vec<(u64, String)>),
    /// Nothing within the wait.
    Idle,
    /// The stream ended: write nothing more (the reason only names it for tests and logs).
    End(EndReason),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndReason {
    /// Its last event (the response) has been written.
    Finished,
    /// Another GET took the stream over.
    Replaced,
    /// Events it had not written yet were evicted: the client's resumption gets a 410.
    FellBehind,
    /// The session ended.
    SessionEnded,
}

impl Default for StreamHub {
    fn default() -> Self {
        StreamHub::new()
    }
}

impl StreamHub {
    pub fn new() -> StreamHub {
        StreamHub {
            state: Mutex::new(State {
                closed: false,
                next_stream: STANDALONE_STREAM + 1,
                next_writer: 1,
                streams: vec![StreamRecord {
                    stream: STANDALONE_STREAM,
                    next_seq: 1,
                    finished: false,
                    direct: false,
                    writer: 0,
                }],
                events: VecDeque::new(),
                bytes: 0,
            }),
            changed: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Every update below leaves the state whole between statements that can panic (none do).
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Ends every stream (the session ended): writers stop, nothing more is stored.
    pub fn close(&self) {
        let mut state = self.lock();
        state.closed = true;
        state.events.clear();
        state.bytes = 0;
        self.changed.notify_all();
    }

    pub fn is_closed(&self) -> bool {
        self.lock().closed
    }

    /// Opens a POST stream written by its own connection; returns its number. Past
    /// [`MAX_STREAM_RECORDS`] the oldest finished stream is forgotten with its events.
    pub fn open_post_stream(&self) -> u64 {
        let mut state = self.lock();
        if state.streams.len() >= MAX_STREAM_RECORDS {
            if let Some(i) = state
                .streams
                .iter()
                .position(|s| s.finished && s.stream != STANDALONE_STREAM)
            {
                let gone = state.streams.remove(i).stream;
                state.forget_events(|e| e.stream == gone);
            }
        }
        let stream = state.next_stream;
        state.next_stream += 1;
        state.streams.push(StreamRecord {
            stream,
            next_seq: 1,
            finished: false,
            direct: true,
            writer: 0,
        });
        stream
    }

    /// Stores `data` as the next event of `stream` (`last`: the stream's final event, the
    /// response) and wakes its writer. `None` when the stream or session is gone.
    pub fn publish(&self, stream: u64, data: String, last: bool) -> Option<Published> {
        let mut state = self.lock();
        if state.closed {
            return None;
        }
        let now = Instant::now();
        let record = state.streams.iter_mut().find(|s| s.stream == stream)?;
        let seq = record.next_seq;
        record.next_seq += 1;
        record.finished |= last;
        let direct = record.direct;
        state.bytes += data.len();
        state.events.push_back(StoredEvent {
            stream,
            seq,
            at: now,
            data,
        });
        state.evict(now);
        self.changed.notify_all();
        Some(Published { seq, direct })
    }

    /// The POST connection no longer writes `stream` (it broke, or the server closed it to make
    /// the client poll): its events wait in the store for a GET that resumes it.
    pub fn detach(&self, stream: u64) {
        if let Some(record) = self.lock().streams.iter_mut().find(|s| s.stream == stream) {
            record.direct = false;
        }
    }

    /// Whether a request of `stream` should go to the standalone stream instead: its POST
    /// connection is gone, no GET resumes it, and a GET holds the standalone stream.
    pub fn reroutes_requests(&self, stream: u64) -> bool {
        let state = self.lock();
        let find = |n: u64| state.streams.iter().find(|s| s.stream == n);
        let orphaned = find(stream).is_some_and(|s| !s.direct && s.writer == 0);
        orphaned && find(STANDALONE_STREAM).is_some_and(|s| s.writer != 0)
    }

    /// Makes a GET the writer of the standalone stream from now on (replacing any earlier GET).
    /// Returns the writer's generation and the event to write after (the last one sent).
    pub fn attach_standalone(&self) -> (u64, u64) {
        let mut state = self.lock();
        let writer = state.take_writer_generation();
        let record = &mut state.streams[0];
        record.writer = writer;
        let after = record.next_seq - 1;
        self.changed.notify_all();
        (writer, after)
    }

    /// Makes a GET the writer of the stream `id` names, from the event after it. Checks
    /// everything a resumption needs: this replica and run wrote it, the session holds the
    /// stream, the event was sent, and nothing after it was evicted.
    pub fn resume(&self, origin: &Origin, id: &EventId<'_>) -> Result<(u64, u64), ResumeRefusal> {
        if id.replica != origin.replica {
            return Err(ResumeRefusal::OtherReplica(id.replica.to_owned()));
        }
        if id.instance != origin.instance {
            return Err(ResumeRefusal::EarlierRun);
        }
        let mut state = self.lock();
        let now = Instant::now();
        state.evict(now);
        let writer = state.take_writer_generation();
        let State {
            streams, events, ..
        } = &mut *state;
        let Some(record) = streams.iter_mut().find(|s| s.stream == id.stream) else {
            return Err(ResumeRefusal::UnknownStream(id.stream));
        };
        if id.seq >= record.next_seq {
            return Err(ResumeRefusal::NotYetSent {
                stream: id.stream,
                seq: id.seq,
            });
        }
        let wanted = id.seq + 1;
        let held = events
            .iter()
            .any(|e| e.stream == id.stream && e.seq == wanted);
        if wanted < record.next_seq && !held {
            return Err(ResumeRefusal::Evicted {
                stream: id.stream,
                seq: id.seq,
            });
        }
        record.direct = false;
        record.writer = writer;
        self.changed.notify_all();
        Ok((writer, id.seq))
    }

    /// The events of `stream` after `after`, for the GET whose generation is `writer`; waits up
    /// to `wait` when there are none yet.
    pub fn next(&self, stream: u64, writer: u64, after: u64, wait: Duration) -> Next {
        let deadline = Instant::now() + wait;
        let mut state = self.lock();
        loop {
            if state.closed {
                return Next::End(EndReason::SessionEnded);
            }
            let Some(record) = state.streams.iter().find(|s| s.stream == stream) else {
                return Next::End(EndReason::FellBehind);
            };
            if record.writer != writer {
                return Next::End(EndReason::Replaced);
            }
            let (next_seq, finished) = (record.next_seq, record.finished);
            let pending: Vec<(u64, String)> = state
                .events
                .iter()
                .filter(|e| e.stream == stream && e.seq > after)
                .map(|e| (e.seq, e.data.clone()))
                .collect();
            match pending.first() {
                Some(&(first, _)) if first != after + 1 => return Next::End(EndReason::FellBehind),
                Some(_) => return Next::Events(pending),
                None if after + 1 < next_seq => return Next::End(EndReason::FellBehind),
                None if finished => return Next::End(EndReason::Finished),
                None => {}
            }
            let now = Instant::now();
            if now >= deadline {
                return Next::Idle;
            }
            state = self
                .changed
                .wait_timeout(state, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// Lets go of `stream` when its GET ends (unless another took it over meanwhile).
    pub fn release(&self, stream: u64, writer: u64) {
        if let Some(record) = self
            .lock()
            .streams
            .iter_mut()
            .find(|s| s.stream == stream && s.writer == writer)
        {
            record.writer = 0;
        }
    }

    /// Events and bytes held now (tests and the limits' documentation).
    pub fn held(&self) -> (usize, usize) {
        let state = self.lock();
        (state.events.len(), state.bytes)
    }
}

impl State {
    fn take_writer_generation(&mut self) -> u64 {
        let writer = self.next_writer;
        self.next_writer += 1;
        writer
    }

    fn forget_events(&mut self, gone: impl Fn(&StoredEvent) -> bool) {
        let before = self.events.len();
        let mut freed = 0;
        self.events.retain(|e| {
            let keep = !gone(e);
            if !keep {
                freed += e.data.len();
            }
            keep
        });
        if self.events.len() != before {
            self.bytes -= freed;
        }
    }

    /// Drops the oldest events past the count, byte and age limits, then the records of finished
    /// POST streams none of whose events remain.
    fn evict(&mut self, now: Instant) {
        while let Some(front) = self.events.front() {
            let over = self.events.len() > MAX_STORED_EVENTS
                || self.bytes > MAX_STORED_EVENT_BYTES
                || now.duration_since(front.at) > EVENT_RETENTION;
            if !over {
                break;
            }
            self.bytes -= front.data.len();
            self.events.pop_front();
        }
        let events = &self.events;
        self.streams.retain(|s| {
            s.stream == STANDALONE_STREAM
                || !s.finished
                || s.writer != 0
                || events.iter().any(|e| e.stream == s.stream)
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn origin() -> Origin {
        Origin::new("r1", [0xab, 0xcd, 0x01, 0x23]).unwrap()
    }

    #[test]
    fn event_ids_round_trip_and_parse_strictly() {
        let o = origin();
        let id = o.event_id(3, 17);
        assert_eq!(id, "r1.abcd0123.3.17");
        let parsed = parse_event_id(id.as_bytes()).unwrap();
        assert_eq!((parsed.replica, parsed.stream, parsed.seq), ("r1", 3, 17));
        for (bad, why) in [
            ("", EventIdError::Shape),
            ("r1.abcd0123.3", EventIdError::Shape),
            ("r1.abcd0123.3.17.1", EventIdError::Shape),
            (".abcd0123.3.17", EventIdError::Replica),
            ("r 1.abcd0123.3.17", EventIdError::Replica),
            ("r1.ABCD0123.3.17", EventIdError::Instance),
            ("r1.abcd012.3.17", EventIdError::Instance),
            ("r1.abcd0123.03.17", EventIdError::Number("stream")),
            ("r1.abcd0123.3.", EventIdError::Number("event")),
            ("r1.abcd0123.3.+1", EventIdError::Number("event")),
            (
                "r1.abcd0123.3.99999999999999999999",
                EventIdError::Number("event"),
            ),
        ] {
            assert_eq!(parse_event_id(bad.as_bytes()), Err(why), "{bad:?}");
        }
        assert_eq!(parse_event_id(b"r1.abcd0123.0.0").unwrap().seq, 0);
        assert_eq!(
            parse_event_id(b"r1.abcd0123.\xff.1"),
            Err(EventIdError::Shape)
        );
        let long = format!("{}.abcd0123.1.1", "r".repeat(MAX_EVENT_ID_BYTES));
        assert_eq!(parse_event_id(long.as_bytes()), Err(EventIdError::TooLong));
        let long_name = format!("{}.abcd0123.1.1", "r".repeat(MAX_REPLICA_NAME_BYTES + 1));
        assert_eq!(
            parse_event_id(long_name.as_bytes()),
            Err(EventIdError::Replica)
        );
        assert!(Origin::new("a.b", [0; 4]).is_none());
    }

    fn resume(hub: &StreamHub, stream: u64, seq: u64) -> Result<(u64, u64), ResumeRefusal> {
        let o = origin();
        let id = o.event_id(stream, seq);
        hub.resume(&o, &parse_event_id(id.as_bytes()).unwrap())
    }

    #[test]
    fn a_resumed_stream_replays_what_followed_and_ends_with_its_response() {
        let hub = StreamHub::new();
        let s = hub.open_post_stream();
        assert_eq!(
            hub.publish(s, "a".into(), false),
            Some(Published {
                seq: 1,
                direct: true
            })
        );
        hub.publish(s, "b".into(), false);
        let (writer, after) = resume(&hub, s, 1).unwrap();
        assert_eq!(after, 1);
        // The POST connection lost the stream to the GET.
        assert!(!hub.publish(s, "c".into(), true).unwrap().direct);
        let wait = Duration::from_millis(10);
        assert_eq!(
            hub.next(s, writer, 1, wait),
            Next::Events(vec![(2, "b".into()), (3, "c".into())])
        );
        assert_eq!(hub.next(s, writer, 3, wait), Next::End(EndReason::Finished));
    }

    #[test]
    fn refusals_name_what_is_wrong() {
        let hub = StreamHub::new();
        let s = hub.open_post_stream();
        hub.publish(s, "a".into(), false);
        assert_eq!(
            resume(&hub, s, 5),
            Err(ResumeRefusal::NotYetSent { stream: s, seq: 5 })
        );
        assert_eq!(resume(&hub, 9, 0), Err(ResumeRefusal::UnknownStream(9)));
        let other = Origin::new("r2", [0xab, 0xcd, 0x01, 0x23]).unwrap();
        let id = other.event_id(s, 0);
        let parsed = parse_event_id(id.as_bytes()).unwrap();
        let refusal = hub.resume(&origin(), &parsed).unwrap_err();
        assert_eq!(refusal, ResumeRefusal::OtherReplica("r2".into()));
        assert_eq!(refusal.status(), 421);
        let earlier = Origin::new("r1", [0; 4]).unwrap().event_id(s, 0);
        let parsed = parse_event_id(earlier.as_bytes()).unwrap();
        assert_eq!(
            hub.resume(&origin(), &parsed),
            Err(ResumeRefusal::EarlierRun)
        );
    }

    #[test]
    fn the_store_is_bounded_and_eviction_is_reported_not_skipped() {
        let hub = StreamHub::new();
        let s = hub.open_post_stream();
        for i in 0..MAX_STORED_EVENTS + 10 {
            hub.publish(s, format!("{i}"), false);
        }
        assert_eq!(hub.held().0, MAX_STORED_EVENTS);
        assert_eq!(
            resume(&hub, s, 1),
            Err(ResumeRefusal::Evicted { stream: s, seq: 1 })
        );
        let big = "x".repeat(MAX_STORED_EVENT_BYTES / 4 + 1);
        for _ in 0..8 {
            hub.publish(s, big.clone(), false);
        }
        assert!(hub.held().1 <= MAX_STORED_EVENT_BYTES);
        // A writer that falls behind eviction ends instead of skipping events.
        let last = (MAX_STORED_EVENTS + 18) as u64;
        let (writer, _) = resume(&hub, s, last).unwrap();
        for _ in 0..=MAX_STORED_EVENTS {
            hub.publish(s, "y".into(), false);
        }
        assert_eq!(
            hub.next(s, writer, last, Duration::ZERO),
            Next::End(EndReason::FellBehind)
        );
    }

    #[test]
    fn a_new_writer_replaces_the_old_and_closing_ends_all() {
        let hub = StreamHub::new();
        let (first, after) = hub.attach_standalone();
        assert_eq!(after, 0);
        let (second, _) = hub.attach_standalone();
        let wait = Duration::from_millis(5);
        assert_eq!(
            hub.next(STANDALONE_STREAM, first, 0, wait),
            Next::End(EndReason::Replaced)
        );
        assert_eq!(hub.next(STANDALONE_STREAM, second, 0, wait), Next::Idle);
        hub.publish(STANDALONE_STREAM, "n".into(), false);
        assert_eq!(
            hub.next(STANDALONE_STREAM, second, 0, wait),
            Next::Events(vec![(1, "n".into())])
        );
        hub.close();
        assert_eq!(
            hub.next(STANDALONE_STREAM, second, 1, wait),
            Next::End(EndReason::SessionEnded)
        );
        assert!(hub.publish(STANDALONE_STREAM, "m".into(), false).is_none());
    }

    #[test]
    fn requests_of_an_orphaned_stream_go_to_the_standalone_stream() {
        let hub = StreamHub::new();
        let s = hub.open_post_stream();
        assert!(!hub.reroutes_requests(s));
        hub.detach(s);
        assert!(
            !hub.reroutes_requests(s),
            "no GET holds the standalone stream"
        );
        let (writer, _) = hub.attach_standalone();
        assert!(hub.reroutes_requests(s));
        hub.release(STANDALONE_STREAM, writer);
        assert!(!hub.reroutes_requests(s));
    }

    #[test]
    fn finished_streams_are_forgotten_past_the_record_limit() {
        let hub = StreamHub::new();
        let first = hub.open_post_stream();
        hub.publish(first, "r".into(), true);
        for _ in 0..MAX_STREAM_RECORDS {
            hub.open_post_stream();
        }
        assert_eq!(
            resume(&hub, first, 0),
            Err(ResumeRefusal::UnknownStream(first))
        );
    }
}
