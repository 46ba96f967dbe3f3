//! Multi round-trip requests (MRTR) of the 2026-07-28 era: what a call asks the client through its
//! [`CallContext`](super::CallContext) becomes an `input_required` result, and the client's retry
//! brings the answers back.
//!
//! The era has no server-to-client requests. A tool asks exactly as in a legacy session
//! (`ctx.elicit`, `ctx.sample`, `ctx.list_roots`): the Nth request of a run is keyed
//! `<kind>-N` (`elicitation-1`, `sampling-2`, `roots-3`). A key the retry answered returns the
//! client's answer at once; an unanswered one is recorded and fails with
//! [`ClientRequestError::InputRequired`], and once the tool returns, the engine answers the call
//! with `{"resultType": "input_required", "inputRequests": {key: {method, params}},
//! "requestState": ...}` instead of its result. The client retries the same `tools/call` with
//! `inputResponses` (keyed the same) and the `requestState`; the tool runs again from the start and
//! this time gets the answers.
//!
//! The server keeps nothing between rounds: the `requestState` carries the answers of earlier
//! rounds, the requests still open, the tool's name, a digest of its arguments and an expiry,
//! sealed with HMAC-SHA-256 under the engine's request-state key (random per process, or derived
//! from the HTTP session key so every replica holding it opens the state). On a retry the state must
//! authenticate, be at most [`MAX_REQUEST_STATE_BYTES`], be younger than
//! [`REQUEST_STATE_LIFETIME`], and name this tool and these arguments; each answer must have the
//! shape of its method's result. Any failure is -32602 naming what was wrong. As the specification
//! asks, an answer missing from `inputResponses` is asked again (a new `input_required`), and
//! answers to keys never asked are ignored. A call asks at most [`MAX_INPUT_REQUESTS_PER_CALL`]
//! times over all its rounds; a retry carries at most [`MAX_INPUT_RESPONSES`] answers.
//!
//! The state is signed, not encrypted: it holds the client's own answers and the server's
//! requests, nothing the client has not seen. A state can be replayed until it expires (the
//! specification's "does not by themselves guarantee single-use"); tools here only read.

pub use super::outbound::MAX_INPUT_REQUESTS_PER_CALL;
use super::outbound::{check_capability, ClientRequestError};
use crate::hmac::HmacSha256;
use crate::json::{self, obj, Map, Value};
use crate::jsonrpc::{py_repr, RpcError};
use crate::sha256;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Longest `requestState` accepted or issued, in bytes. A state that would be longer (a call that
/// gathered many long answers) ends the call with an error result instead.
pub const MAX_REQUEST_STATE_BYTES: usize = 64 * 1024;
/// Most entries of one retry's `inputResponses`.
pub const MAX_INPUT_RESPONSES: usize = 16;
/// How long a `requestState` is accepted after it was issued.
pub const REQUEST_STATE_LIFETIME: Duration = Duration::from_secs(600);

/// The state layout's version; any other is refused.
const STATE_VERSION: u64 = 1;
/// Bytes of the HMAC-SHA-256 tag at the end of a state.
const TAG_BYTES: usize = 32;

/// Unix seconds now (a clock before 1970 reads 0: states then look expired, never young).
fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The key every `requestState` of an engine is sealed with.
pub(crate) struct StateKey(HmacSha256);

impl StateKey {
    pub(crate) fn new(key: &[u8]) -> StateKey {
        StateKey(HmacSha256::new(key))
    }

    /// A key of 32 bytes from the OS random source; `None` when it cannot be read (calls then
    /// cannot ask for input in the 2026-07-28 era, and say so).
    pub(crate) fn random() -> Option<StateKey> {
        let key: [u8; 32] = crate::random::array().ok()?;
        Some(StateKey::new(&key))
    }

    fn seal(&self, payload: &str) -> String {
        let tag = self.0.mac(payload.as_bytes());
        format!(
            "{}.{}",
            crate::base64::encode_url(payload.as_bytes()),
            crate::base64::encode_url(&tag)
        )
    }

    /// The payload of a state this key sealed, or why it is not one.
    fn open(&self, state: &str) -> Result<Value, String> {
        if state.len() > MAX_REQUEST_STATE_BYTES {
            return Err(format!(
                "requestState is longer than {MAX_REQUEST_STATE_BYTES} bytes"
            ));
        }
        let forged = || {
            "requestState does not authenticate (forged, altered, or issued by another server)"
                .to_owned()
        };
        let (payload, tag) = state.split_once('.').ok_or_else(forged)?;
        let payload = crate::base64::decode_url(payload).ok_or_else(forged)?;
        let tag = crate::base64::decode_url(tag).ok_or_else(forged)?;
        if tag.len() != TAG_BYTES || !self.0.verify_truncated(&payload, &tag) {
            return Err(forged());
        }
        json::parse(&payload).map_err(|_| "requestState is malformed".to_owned())
    }
}

/// The short name of a request method in its key (`elicitation-1`).
fn kind(method: &str) -> Option<&'static str> {
    match method {
        "elicitation/create" => Some("elicitation"),
        "sampling/createMessage" => Some("sampling"),
        "roots/list" => Some("roots"),
        _ => None,
    }
}

/// Digest of what a request asks: a re-run that asks something else under the same key is asked
/// anew rather than handed an answer to another question.
fn request_digest(method: &str, params: Option<&Value>) -> String {
    let asked = obj([
        ("method", Value::from(method)),
        ("params", params.cloned().unwrap_or_default()),
    ]);
    sha256::hex_digest(json::to_string_sorted(&asked).as_bytes())
}

/// Digest binding a state to one tool and its arguments (absent and `null` arguments are `{}`).
fn call_binding(tool: &str, arguments: Option<&Value>) -> String {
    let arguments = match arguments {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(a) => a.clone(),
    };
    let call = obj([("tool", Value::from(tool)), ("arguments", arguments)]);
    sha256::hex_digest(json::to_string_sorted(&call).as_bytes())
}

/// Whether `response` has the shape of `method`'s result, or why not.
fn check_response(method: &str, response: &Value) -> Result<(), String> {
    let Some(m) = response.as_object() else {
        return Err("it is not an object".into());
    };
    let string = |key: &str| m.get(key).and_then(Value::as_str);
    match method {
        "elicitation/create" => {
            if !matches!(string("action"), Some("accept" | "decline" | "cancel")) {
                return Err("action must be accept, decline or cancel".into());
            }
            if m.get("content").is_some_and(|c| c.as_object().is_none()) {
                return Err("content must be an object".into());
            }
        }
        "sampling/createMessage" => {
            if !matches!(string("role"), Some("assistant" | "user")) {
                return Err("role must be assistant or user".into());
            }
            if !matches!(m.get("content"), Some(Value::Object(_) | Value::Array(_))) {
                return Err("content must be a content block or a list of them".into());
            }
            if string("model").is_none() {
                return Err("model must be a string".into());
            }
        }
        "roots/list" => {
            let roots = m.get("roots").and_then(Value::as_array);
            let ok = roots.is_some_and(|r| {
                r.iter()
                    .all(|root| root.get("uri").and_then(Value::as_str).is_some())
            });
            if !ok {
                return Err("roots must be a list of objects with a uri".into());
            }
        }
        _ => return Err(format!("{method} is not a request this server makes")),
    }
    Ok(())
}

/// A request of an earlier run: its key, method and digest, and the client's answer once given.
#[derive(Clone)]
struct Exchange {
    key: String,
    method: String,
    digest: String,
    answer: Option<Value>,
}

impl Exchange {
    fn to_value(&self) -> Value {
        let mut m = Map::with_capacity(4);
        m.insert("key", Value::from(self.key.as_str()));
        m.insert("method", Value::from(self.method.as_str()));
        m.insert("digest", Value::from(self.digest.as_str()));
        if let Some(answer) = &self.answer {
            m.insert("answer", answer.clone());
        }
        Value::Object(m)
    }

    fn from_value(v: &Value) -> Option<Exchange> {
        let text = |key: &str| v.get(key).and_then(Value::as_str).map(str::to_owned);
        Some(Exchange {
            key: text("key")?,
            method: text("method")?,
            digest: text("digest")?,
            answer: v.get("answer").cloned(),
        })
    }
}

/// A request this run made that nobody has answered yet.
struct Open {
    exchange: Exchange,
    params: Option<Value>,
}

/// One run of a `tools/call` in the 2026-07-28 era: the answers it may use, and what it asks.
pub(crate) struct Round<'k> {
    key: Option<&'k StateKey>,
    tool: String,
    binding: String,
    /// The `io.modelcontextprotocol/clientCapabilities` of the request.
    capabilities: Option<Value>,
    /// Earlier rounds' requests, answered or not (from the state and this retry's responses).
    known: Vec<Exchange>,
    /// Requests made in this run, in order.
    made: AtomicUsize,
    /// This run's requests without an answer.
    open: Mutex<Vec<Open>>,
}

impl<'k> Round<'k> {
    /// The round of a modern `tools/call` whose `params` may carry `requestState` and
    /// `inputResponses`: checked as the module says, -32602 naming what is wrong.
    pub(crate) fn open(
        key: Option<&'k StateKey>,
        tool: &str,
        params: &Map,
        capabilities: Option<Value>,
    ) -> Result<Round<'k>, RpcError> {
        let binding = call_binding(tool, params.get("arguments"));
        let mut round = Round {
            key,
            tool: tool.to_owned(),
            binding,
            capabilities,
            known: Vec::new(),
            made: AtomicUsize::new(0),
            open: Mutex::new(Vec::new()),
        };
        let responses = match params.get("inputResponses") {
            None | Some(Value::Null) => None,
            Some(Value::Object(r)) => Some(r),
            Some(_) => return Err(RpcError::invalid_params("inputResponses must be an object")),
        };
        let state = match params.get("requestState") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.as_str()),
            Some(_) => return Err(RpcError::invalid_params("requestState must be a string")),
        };
        if responses.is_some_and(|r| r.len() > MAX_INPUT_RESPONSES) {
            return Err(RpcError::invalid_params(format!(
                "inputResponses holds more than {MAX_INPUT_RESPONSES} answers"
            )));
        }
        let Some(state) = state else {
            if responses.is_some_and(|r| !r.is_empty()) {
                return Err(RpcError::invalid_params(
                    "inputResponses without requestState: this server asks for input only with a requestState, so these answer nothing",
                ));
            }
            return Ok(round);
        };
        let Some(key) = key else {
            return Err(RpcError::invalid_params(
                "requestState cannot be checked: this server has no key to seal it",
            ));
        };
        let payload = key.open(state).map_err(RpcError::invalid_params)?;
        let field = |name: &str| payload.get(name);
        let malformed = || RpcError::invalid_params("requestState is malformed");
        if field("v").and_then(Value::as_u64) != Some(STATE_VERSION) {
            return Err(malformed());
        }
        let expires = field("exp").and_then(Value::as_u64).ok_or_else(malformed)?;
        if unix_now() >= expires {
            return Err(RpcError::invalid_params(format!(
                "requestState expired (it is accepted for {} s); call the tool again without it",
                REQUEST_STATE_LIFETIME.as_secs()
            )));
        }
        let issued_for = field("tool")
            .and_then(Value::as_str)
            .ok_or_else(malformed)?;
        if issued_for != tool {
            return Err(RpcError::invalid_params(format!(
                "requestState was issued for tool {}, not {}",
                py_repr(&Value::from(issued_for)),
                py_repr(&Value::from(tool))
            )));
        }
        if field("bind").and_then(Value::as_str) != Some(round.binding.as_str()) {
            return Err(RpcError::invalid_params(format!(
                "requestState was issued for other arguments of tool {}",
                py_repr(&Value::from(tool))
            )));
        }
        let exchanges = field("exchanges")
            .and_then(Value::as_array)
            .ok_or_else(malformed)?;
        for item in exchanges.iter() {
            let mut exchange = Exchange::from_value(item).ok_or_else(malformed)?;
            let answer = responses.and_then(|r| r.get(&exchange.key));
            if let (None, Some(answer)) = (&exchange.answer, answer) {
                check_response(&exchange.method, answer).map_err(|why| {
                    RpcError::invalid_params(format!(
                        "inputResponses[{}] is not a valid {} result: {why}",
                        py_repr(&Value::from(exchange.key.as_str())),
                        exchange.method
                    ))
                })?;
                exchange.answer = Some(answer.clone());
            }
            round.known.push(exchange);
        }
        Ok(round)
    }

    /// The Nth request of this run: the client's answer when an earlier round got one, else
    /// recorded to be asked ([`ClientRequestError::InputRequired`]).
    pub(crate) fn request(
        &self,
        method: &str,
        params: Option<Value>,
    ) -> Result<Value, ClientRequestError> {
        let Some(kind) = kind(method) else {
            return Err(ClientRequestError::Unsupported(format!(
                "{method} has no place in the 2026-07-28 era (input requests are elicitation, sampling and roots)"
            )));
        };
        let n = self.made.fetch_add(1, Ordering::SeqCst) + 1;
        let key = format!("{kind}-{n}");
        let digest = request_digest(method, params.as_ref());
        let answered = self.known.iter().find(|e| {
            e.key == key && e.method == method && e.digest == digest && e.answer.is_some()
        });
        if let Some(answer) = answered.and_then(|e| e.answer.clone()) {
            return Ok(answer);
        }
        check_capability(self.capabilities.as_ref(), method, params.as_ref())?;
        if self.key.is_none() {
            return Err(ClientRequestError::Unsupported(format!(
                "{method} cannot be asked: this server has no key to seal a requestState"
            )));
        }
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        let answered_elsewhere = self.known.iter().filter(|e| e.answer.is_some()).count();
        if answered_elsewhere + open.len() >= MAX_INPUT_REQUESTS_PER_CALL {
            return Err(ClientRequestError::TooManyInputRequests);
        }
        open.push(Open {
            exchange: Exchange {
                key,
                method: method.to_owned(),
                digest,
                answer: None,
            },
            params,
        });
        Err(ClientRequestError::InputRequired)
    }

    /// Whether this run asked the client something it has no answer to.
    pub(crate) fn needs_input(&self) -> bool {
        !self
            .open
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_empty()
    }

    /// The `input_required` result of a run that [`Round::needs_input`]: the open requests, and a
    /// state holding them and every answer this run used. `Err` with the reason when the state
    /// would be longer than [`MAX_REQUEST_STATE_BYTES`].
    pub(crate) fn input_required(&self) -> Result<Value, String> {
        let key = self.key.ok_or("no key to seal a requestState")?;
        let open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        let mut exchanges: Vec<Value> = (self.known.iter())
            .filter(|e| e.answer.is_some())
            .map(Exchange::to_value)
            .collect();
        let mut requests = Map::with_capacity(open.len());
        for item in open.iter() {
            exchanges.push(item.exchange.to_value());
            let mut request = Map::with_capacity(2);
            request.insert("method", Value::from(item.exchange.method.as_str()));
            if let Some(params) = &item.params {
                request.insert("params", params.clone());
            }
            requests.insert(item.exchange.key.as_str(), Value::Object(request));
        }
        let expires = unix_now().saturating_add(REQUEST_STATE_LIFETIME.as_secs());
        let payload = obj([
            ("v", Value::from(STATE_VERSION)),
            ("tool", Value::from(self.tool.as_str())),
            ("bind", Value::from(self.binding.as_str())),
            ("exp", Value::from(expires)),
            ("exchanges", Value::from(exchanges)),
        ]);
        let state = key.seal(&json::to_string(&payload));
        if state.len() > MAX_REQUEST_STATE_BYTES {
            return Err(format!(
                "the answers gathered for this call would make a requestState longer than {MAX_REQUEST_STATE_BYTES} bytes"
            ));
        }
        Ok(obj([
            ("resultType", Value::from("input_required")),
            ("inputRequests", Value::Object(requests)),
            ("requestState", Value::from(state)),
        ]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(text: &str) -> Map {
        match json::parse(text.as_bytes()).unwrap() {
            Value::Object(m) => m,
            _ => unreachable!(),
        }
    }

    fn caps() -> Option<Value> {
        Some(json::parse(br#"{"elicitation":{},"sampling":{},"roots":{}}"#).unwrap())
    }

    fn state_of(result: &Value) -> String {
        result
            .get("requestState")
            .and_then(Value::as_str)
            .unwrap()
            .to_owned()
    }

    fn error_of(outcome: Result<Round<'_>, RpcError>) -> String {
        match outcome {
            Ok(_) => panic!("accepted"),
            Err(e) => {
                assert_eq!(e.code, -32602);
                e.message
            }
        }
    }

    /// A first run that asks one elicitation, and its result.
    fn first_round(key: &StateKey, tool: &str, arguments: &str) -> Value {
        let p = params(&format!(r#"{{"arguments":{arguments}}}"#));
        let round = Round::open(Some(key), tool, &p, caps()).unwrap();
        let asked = round.request("elicitation/create", Some(obj([("message", "m".into())])));
        assert_eq!(asked.unwrap_err(), ClientRequestError::InputRequired);
        assert!(round.needs_input());
        round.input_required().unwrap()
    }

    #[test]
    fn answers_come_back_and_states_are_bound() {
        let key = StateKey::new(&[7; 32]);
        let result = first_round(&key, "t", r#"{"a":1}"#);
        assert_eq!(
            json::to_string(result.get("inputRequests").unwrap()),
            r#"{"elicitation-1":{"method":"elicitation/create","params":{"message":"m"}}}"#
        );
        let state = state_of(&result);
        let retry = |tool: &str, arguments: &str, responses: &str, state: &str| {
            let p = params(&format!(
                r#"{{"arguments":{arguments},"inputResponses":{responses},"requestState":{}}}"#,
                json::to_string(&Value::from(state))
            ));
            Round::open(Some(&key), tool, &p, caps())
        };
        let answer = r#"{"elicitation-1":{"action":"accept","content":{"n":"x"}},"other":1}"#;
        let round = retry("t", r#"{"a":1}"#, answer, &state).unwrap();
        let got = round.request("elicitation/create", Some(obj([("message", "m".into())])));
        assert_eq!(
            json::to_string(&got.unwrap()),
            r#"{"action":"accept","content":{"n":"x"}}"#
        );
        assert!(!round.needs_input());
        // The same key asking something else is asked anew.
        let round = retry("t", r#"{"a":1}"#, answer, &state).unwrap();
        let got = round.request("elicitation/create", Some(obj([("message", "z".into())])));
        assert_eq!(got.unwrap_err(), ClientRequestError::InputRequired);
        // Missing answers: asked again.
        let round = retry("t", r#"{"a":1}"#, "{}", &state).unwrap();
        let got = round.request("elicitation/create", Some(obj([("message", "m".into())])));
        assert_eq!(got.unwrap_err(), ClientRequestError::InputRequired);
        // Another tool, other arguments, a wrong answer type, a forged or cut state.
        let cases = [
            ("u", r#"{"a":1}"#, answer, state.clone(), "issued for tool 't', not 'u'"),
            ("t", r#"{"a":2}"#, answer, state.clone(), "other arguments of tool 't'"),
            (
                "t",
                r#"{"a":1}"#,
                r#"{"elicitation-1":{"action":"maybe"}}"#,
                state.clone(),
                "inputResponses['elicitation-1'] is not a valid elicitation/create result: action must be",
            ),
            ("t", r#"{"a":1}"#, answer, format!("{state}x"), "does not authenticate"),
            ("t", r#"{"a":1}"#, answer, state.replacen('e', "f", 1), "does not authenticate"),
            ("t", r#"{"a":1}"#, answer, "x".repeat(MAX_REQUEST_STATE_BYTES + 1), "longer than"),
        ];
        for (tool, arguments, responses, state, want) in cases {
            let got = error_of(retry(tool, arguments, responses, &state));
            assert!(got.contains(want), "{got}");
        }
        // A state sealed by another key does not authenticate.
        let other = first_round(&StateKey::new(&[8; 32]), "t", r#"{"a":1}"#);
        let got = error_of(retry("t", r#"{"a":1}"#, answer, &state_of(&other)));
        assert!(got.contains("does not authenticate"), "{got}");
    }

    #[test]
    fn expired_states_and_bad_members_are_refused() {
        let key = StateKey::new(&[1; 32]);
        let payload = obj([
            ("v", Value::from(1)),
            ("tool", Value::from("t")),
            ("bind", Value::from(call_binding("t", None))),
            ("exp", Value::from(unix_now() - 1)),
            ("exchanges", Value::from(Vec::<Value>::new())),
        ]);
        let state = key.seal(&json::to_string(&payload));
        let p = params(&format!(
            r#"{{"requestState":{}}}"#,
            json::to_string(&Value::from(state))
        ));
        let got = error_of(Round::open(Some(&key), "t", &p, None));
        assert!(got.contains("requestState expired"), "{got}");
        for (text, want) in [
            (r#"{"requestState":1}"#, "requestState must be a string"),
            (
                r#"{"inputResponses":[]}"#,
                "inputResponses must be an object",
            ),
            (r#"{"inputResponses":{"a":{}}}"#, "without requestState"),
        ] {
            let got = error_of(Round::open(Some(&key), "t", &params(text), None));
            assert!(got.contains(want), "{got}");
        }
        let many: Vec<String> = (0..=MAX_INPUT_RESPONSES)
            .map(|i| format!(r#""k{i}":{{}}"#))
            .collect();
        let text = format!(r#"{{"inputResponses":{{{}}}}}"#, many.join(","));
        let got = error_of(Round::open(Some(&key), "t", &params(&text), None));
        assert!(got.contains("more than 16 answers"), "{got}");
    }

    #[test]
    fn capabilities_and_the_per_call_cap_are_enforced() {
        let key = StateKey::new(&[2; 32]);
        let round = Round::open(Some(&key), "t", &Map::new(), None).unwrap();
        let got = round.request("sampling/createMessage", None).unwrap_err();
        assert!(got.to_string().contains("sampling capability"), "{got}");
        assert!(matches!(
            round.request("ping", None),
            Err(ClientRequestError::Unsupported(_))
        ));
        let round = Round::open(Some(&key), "t", &Map::new(), caps()).unwrap();
        for _ in 0..MAX_INPUT_REQUESTS_PER_CALL {
            let got = round.request("roots/list", None).unwrap_err();
            assert_eq!(got, ClientRequestError::InputRequired);
        }
        let got = round.request("roots/list", None).unwrap_err();
        assert_eq!(got, ClientRequestError::TooManyInputRequests);
        let result = round.input_required().unwrap();
        let asked = result.get("inputRequests").and_then(Value::as_object);
        assert_eq!(asked.map(Map::len), Some(MAX_INPUT_REQUESTS_PER_CALL));
        for (method, answer, ok) in [
            (
                "sampling/createMessage",
                r#"{"role":"assistant","content":{"type":"text","text":"x"},"model":"m"}"#,
                true,
            ),
            (
                "sampling/createMessage",
                r#"{"role":"assistant","content":"x","model":"m"}"#,
                false,
            ),
            ("roots/list", r#"{"roots":[{"uri":"file:///a"}]}"#, true),
            ("roots/list", r#"{"roots":[{}]}"#, false),
            (
                "elicitation/create",
                r#"{"action":"accept","content":[]}"#,
                false,
            ),
            ("elicitation/create", r#""accept""#, false),
        ] {
            let answer = json::parse(answer.as_bytes()).unwrap();
            assert_eq!(check_response(method, &answer).is_ok(), ok, "{method}");
        }
    }
}
