//! The client's protocol core, free of I/O: request ids, lifecycle and era state, the messages to
//! send, and the mapping of what comes back into results, events and typed errors.
//!
//! Transports move the [`Outgoing`] messages this core builds and hand back the raw reply; the
//! core decides what the reply means. Everything here is testable with plain values.

use super::error::ClientError;
use crate::json::{obj, Map, Value};
use crate::jsonrpc::{self, RpcError};
use crate::server::revision::{
    Revision, META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_LOG_LEVEL, META_PROTOCOL_VERSION,
};

/// The legacy revision this client asks for in `initialize` (it accepts any legacy revision back).
pub const REQUESTED_REVISION: Revision = Revision::LATEST_LEGACY;

/// Most pages of a list (`tools/list`, `resources/list`, `prompts/list`...) followed before giving
/// up (a server whose cursors never end).
pub const MAX_TOOL_PAGES: usize = 100;

/// Which era to speak.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EraChoice {
    /// Probe `server/discover`; speak 2026-07-28 when the server offers it, else `initialize`.
    Auto,
    /// Always `initialize` (2025-11-25 requested, any legacy answer accepted).
    Legacy,
    /// Always 2026-07-28, stateless; fail if the server does not speak it.
    Modern,
}

impl EraChoice {
    pub fn parse(text: &str) -> Option<EraChoice> {
        match text {
            "auto" => Some(EraChoice::Auto),
            "legacy" => Some(EraChoice::Legacy),
            "modern" => Some(EraChoice::Modern),
            _ => None,
        }
    }
}

/// What the server said about itself during the handshake.
#[derive(Clone, Debug)]
pub struct ServerInfo {
    /// The revision in use: the one `initialize` returned, or 2026-07-28.
    pub revision: Revision,
    pub name: String,
    pub version: String,
    pub capabilities: Value,
    pub instructions: Option<String>,
}

/// One tool as `tools/list` described it.
#[derive(Clone, Debug)]
pub struct ToolInfo {
    pub name: String,
    pub description: Option<String>,
    /// The tool object exactly as sent (schema, annotations, title, …).
    pub raw: Value,
}

impl ToolInfo {
    /// The tool's `inputSchema`, if it sent one.
    pub fn input_schema(&self) -> Option<&Map> {
        self.raw.get("inputSchema").and_then(Value::as_object)
    }
}

/// A successful `tools/call` result.
#[derive(Clone, Debug)]
pub struct ToolResult {
    /// The content blocks as sent.
    pub content: Vec<Value>,
    pub structured: Option<Value>,
    /// The whole result object as sent.
    pub raw: Value,
}

impl ToolResult {
    /// The text blocks joined with newlines.
    pub fn text(&self) -> String {
        text_of(&self.content)
    }
}

fn text_of(content: &[Value]) -> String {
    content
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A notification the server sent while a request was in flight.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    Progress {
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    },
    Log {
        level: String,
        logger: Option<String>,
        data: Value,
    },
    Other {
        method: String,
        params: Value,
    },
}

/// One message from the server, classified.
#[derive(Debug)]
pub enum Incoming {
    /// A response (result or error) to request `id`; `message` is the whole response.
    Response {
        id: Value,
        message: Value,
    },
    Notification(Event),
    /// A request from the server; the transport answers it with
    /// [`Answers::reply`](super::answers::Answers::reply).
    Request {
        id: Value,
        method: String,
        params: Value,
    },
    /// Not a JSON-RPC message this client understands (ignored, but worth a diagnostic).
    Invalid(String),
}

/// A message ready for a transport, with what HTTP needs to set headers.
#[derive(Clone, Debug)]
pub struct Outgoing {
    pub message: Value,
    /// The request id; `None` for a notification.
    pub id: Option<Value>,
    pub method: String,
    /// `params.name` of `tools/call` and `prompts/get`, `params.uri` of `resources/read` (the
    /// 2026-07-28 `Mcp-Name` header).
    pub name: Option<String>,
    /// The revision for the `MCP-Protocol-Version` header; `None` before one is negotiated.
    pub revision: Option<Revision>,
    /// Sent in the stateless 2026-07-28 era (modern headers, no session).
    pub modern: bool,
}

#[derive(Clone, Debug)]
enum Phase {
    /// Nothing negotiated yet.
    New,
    /// `initialize` answered; requests carry the session's revision.
    Legacy(Revision),
    /// Stateless 2026-07-28: every request carries `_meta`.
    Modern,
}

/// The client's protocol state.
#[derive(Clone, Debug)]
pub struct Core {
    client_name: String,
    client_version: String,
    log_level: Option<String>,
    next_id: u64,
    phase: Phase,
    /// The client capabilities declared (`initialize`, the 2026-07-28 `_meta`).
    capabilities: Value,
}

impl Core {
    /// `log_level`, when set, asks the server for log notifications at that level and above.
    pub fn new(client_name: &str, client_version: &str, log_level: Option<&str>) -> Core {
        Core {
            client_name: client_name.to_owned(),
            client_version: client_version.to_owned(),
            log_level: log_level.map(str::to_owned),
            next_id: 1,
            phase: Phase::New,
            capabilities: Value::Object(Map::new()),
        }
    }

    /// Declares `capabilities` (an object; [`Answers::capabilities`](super::answers::Answers::capabilities)).
    pub fn set_capabilities(&mut self, capabilities: Value) {
        self.capabilities = capabilities;
    }

    /// The revision in use, once negotiated.
    pub fn revision(&self) -> Option<Revision> {
        match self.phase {
            Phase::New => None,
            Phase::Legacy(r) => Some(r),
            Phase::Modern => Some(Revision::V2026_07_28),
        }
    }

    /// Forgets the negotiated state (before re-initializing an expired session).
    pub fn reset(&mut self) {
        self.phase = Phase::New;
    }

    fn client_info(&self) -> Value {
        obj([
            ("name", Value::from(self.client_name.as_str())),
            ("version", Value::from(self.client_version.as_str())),
        ])
    }

    fn modern_meta(&self) -> Map {
        let mut meta = Map::new();
        meta.insert(
            META_PROTOCOL_VERSION,
            Value::from(Revision::V2026_07_28.as_str()),
        );
        meta.insert(META_CLIENT_CAPABILITIES, self.capabilities.clone());
        meta.insert(META_CLIENT_INFO, self.client_info());
        if let Some(level) = &self.log_level {
            meta.insert(META_LOG_LEVEL, Value::from(level.as_str()));
        }
        meta
    }

    fn build(&mut self, method: &str, mut params: Map, modern: bool) -> Outgoing {
        let id = Value::from(self.next_id);
        self.next_id += 1;
        if modern {
            let mut meta = match params.remove("_meta") {
                Some(Value::Object(m)) => m,
                _ => Map::new(),
            };
            for (k, v) in self.modern_meta().into_entries() {
                meta.insert(k, v);
            }
            params.insert("_meta", Value::Object(meta));
        }
        // The member the 2026-07-28 `Mcp-Name` header repeats, for the methods that have one.
        let name_field = match method {
            "tools/call" | "prompts/get" => Some("name"),
            "resources/read" => Some("uri"),
            _ => None,
        };
        let name = name_field
            .and_then(|f| params.get(f))
            .and_then(Value::as_str)
            .map(str::to_owned);
        let message = obj([
            ("jsonrpc", Value::from("2.0")),
            ("id", id.clone()),
            ("method", Value::from(method)),
            ("params", Value::Object(params)),
        ]);
        Outgoing {
            message,
            id: Some(id),
            method: method.to_owned(),
            name,
            revision: if modern {
                Some(Revision::V2026_07_28)
            } else {
                self.revision()
            },
            modern,
        }
    }

    /// A request in the era negotiated so far.
    pub fn request(&mut self, method: &str, params: Map) -> Outgoing {
        let modern = matches!(self.phase, Phase::Modern);
        self.build(method, params, modern)
    }

    /// A notification in the negotiated era.
    pub fn notification(&self, method: &str, params: Map) -> Outgoing {
        Outgoing {
            message: jsonrpc::notification(method, Value::Object(params)),
            id: None,
            method: method.to_owned(),
            name: None,
            revision: self.revision(),
            modern: matches!(self.phase, Phase::Modern),
        }
    }

    /// The `server/discover` probe (always modern).
    pub fn discover_request(&mut self) -> Outgoing {
        self.build("server/discover", Map::new(), true)
    }

    /// Reads the probe's outcome. `Ok(true)`: the server speaks 2026-07-28 and the client is now
    /// modern. `Ok(false)`: fall back to `initialize` (any error that is not about reaching or
    /// authenticating to the server counts as "legacy", as the spec's detection rule says).
    pub fn accept_discover(
        &mut self,
        outcome: Result<Value, ClientError>,
    ) -> Result<bool, ClientError> {
        let reply = match outcome {
            Ok(reply) => reply,
            Err(
                e @ (ClientError::AuthRequired { .. }
                | ClientError::Connect(_)
                | ClientError::Closed(_)
                | ClientError::Unsupported(_)),
            ) => return Err(e),
            Err(_) => return Ok(false),
        };
        let Ok(result) = result_of("server/discover", reply) else {
            return Ok(false);
        };
        let offers_modern = result
            .get("supportedVersions")
            .and_then(Value::as_array)
            .is_some_and(|v| {
                v.iter()
                    .any(|s| s.as_str() == Some(Revision::V2026_07_28.as_str()))
            });
        if offers_modern {
            self.phase = Phase::Modern;
        }
        Ok(offers_modern)
    }

    /// The server identity from a `server/discover` result (after [`Core::accept_discover`]).
    pub fn modern_server_info(result: &Value) -> ServerInfo {
        let info = result
            .get("_meta")
            .and_then(|m| m.get("io.modelcontextprotocol/serverInfo"));
        server_info(Revision::V2026_07_28, result, info)
    }

    /// The `initialize` request.
    pub fn initialize_request(&mut self) -> Outgoing {
        let params = obj([
            ("protocolVersion", Value::from(REQUESTED_REVISION.as_str())),
            ("capabilities", self.capabilities.clone()),
            ("clientInfo", self.client_info()),
        ]);
        let Value::Object(params) = params else {
            unreachable!("obj builds an object")
        };
        self.build("initialize", params, false)
    }

    /// Reads the `initialize` reply; on success the session is legacy at the revision the server
    /// chose. Returns what the server said about itself.
    pub fn accept_initialize(&mut self, reply: Value) -> Result<ServerInfo, ClientError> {
        let result = result_of("initialize", reply)?;
        let version = result.get("protocolVersion").and_then(Value::as_str);
        let revision = match version.and_then(Revision::parse) {
            Some(r) if r.is_legacy() => r,
            _ => {
                return Err(ClientError::Protocol(format!(
                    "server answered initialize with protocolVersion {}, which this client does not speak (it speaks 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05)",
                    version.map_or_else(
                        || result.get("protocolVersion").map_or("(missing)".into(), jsonrpc::py_repr),
                        str::to_owned
                    )
                )))
            }
        };
        self.phase = Phase::Legacy(revision);
        let info = result.get("serverInfo");
        Ok(server_info(revision, &result, info))
    }

    /// The `logging/setLevel` request a legacy session needs for log notifications, if any.
    pub fn set_level_request(&mut self, server: &ServerInfo) -> Option<Outgoing> {
        let level = self.log_level.clone()?;
        let legacy = matches!(self.phase, Phase::Legacy(_));
        let has_logging = server.capabilities.get("logging").is_some();
        (legacy && has_logging).then(|| {
            let mut params = Map::new();
            params.insert("level", Value::from(level.as_str()));
            self.request("logging/setLevel", params)
        })
    }

    /// `tools/call` params; `progress` asks for progress notifications (token = the request id).
    pub fn call_request(&mut self, tool: &str, arguments: Map, progress: bool) -> Outgoing {
        self.call_retry(tool, arguments, progress, None)
    }

    /// [`Core::call_request`], retrying a 2026-07-28 `input_required` result with `retry`: the
    /// `inputResponses` (keyed as the server asked) and the `requestState` it sent.
    pub fn call_retry(
        &mut self,
        tool: &str,
        arguments: Map,
        progress: bool,
        retry: Option<(&Map, &str)>,
    ) -> Outgoing {
        let mut params = Map::new();
        params.insert("name", Value::from(tool));
        params.insert("arguments", Value::Object(arguments));
        if let Some((responses, state)) = retry {
            params.insert("inputResponses", Value::Object(responses.clone()));
            params.insert("requestState", Value::from(state));
        }
        if progress {
            let mut meta = Map::new();
            meta.insert("progressToken", Value::from(self.next_id));
            params.insert("_meta", Value::Object(meta));
        }
        self.request("tools/call", params)
    }

    /// `notifications/cancelled` for a request that timed out.
    pub fn cancelled_notification(&self, id: &Value, reason: &str) -> Outgoing {
        let mut params = Map::new();
        params.insert("requestId", id.clone());
        params.insert("reason", Value::from(reason));
        self.notification("notifications/cancelled", params)
    }
}

fn server_info(revision: Revision, result: &Value, info: Option<&Value>) -> ServerInfo {
    let field = |k: &str| {
        info.and_then(|i| i.get(k))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    ServerInfo {
        revision,
        name: field("name"),
        version: field("version"),
        capabilities: result
            .get("capabilities")
            .cloned()
            .unwrap_or_else(|| Value::Object(Map::new())),
        instructions: result
            .get("instructions")
            .and_then(Value::as_str)
            .map(str::to_owned),
    }
}

/// The `result` of a response to `method`, or the typed error it carries. A 2026-07-28
/// `input_required` result is passed on for `tools/call` (the client answers its input requests
/// and retries, `Client::call_tool_with`) and refused for anything else.
pub fn result_of(method: &str, reply: Value) -> Result<Value, ClientError> {
    let Value::Object(mut m) = reply else {
        return Err(ClientError::Protocol(format!(
            "server answered {method} with a JSON {}, not a JSON-RPC response object",
            reply.type_name()
        )));
    };
    if let Some(error) = m.remove("error") {
        return Err(ClientError::Rpc {
            method: method.to_owned(),
            error: rpc_error(&error),
        });
    }
    match m.remove("result") {
        Some(result @ Value::Object(_)) => {
            match result.get("resultType").and_then(Value::as_str) {
                None | Some("complete") => Ok(result),
                Some("input_required") if method == "tools/call" => Ok(result),
                Some(other) => Err(ClientError::Protocol(format!(
                    "server answered {method} with resultType {other:?}; this client supports only \"complete\" there (it answers input requests of tools/call only)"
                ))),
            }
        }
        Some(other) => Err(ClientError::Protocol(format!(
            "server answered {method} with a result that is a JSON {}, not an object",
            other.type_name()
        ))),
        None => Err(ClientError::Protocol(format!(
            "server answered {method} with neither result nor error"
        ))),
    }
}

/// Reads a JSON-RPC error object leniently: a server that breaks the shape still gets its words
/// reported.
pub fn rpc_error(error: &Value) -> RpcError {
    let code = error.get("code").and_then(Value::as_i64).unwrap_or(0);
    let message = match error.get("message").and_then(Value::as_str) {
        Some(m) => m.to_owned(),
        None => format!(
            "(malformed error object: {})",
            crate::json::to_string(error)
        ),
    };
    let mut e = RpcError::new(code, message);
    if let Some(data) = error.get("data") {
        e = e.with_data(data.clone());
    }
    e
}

/// One `tools/list` page: its tools and the cursor of the next page.
pub fn tools_page(result: &Value) -> Result<(Vec<ToolInfo>, Option<String>), ClientError> {
    let Some(tools) = result.get("tools").and_then(Value::as_array) else {
        return Err(ClientError::Protocol(
            "tools/list result has no \"tools\" array".into(),
        ));
    };
    let mut out = Vec::with_capacity(tools.len());
    for (i, tool) in tools.iter().enumerate() {
        let Some(name) = tool.get("name").and_then(Value::as_str) else {
            return Err(ClientError::Protocol(format!(
                "tools/list result: tool {i} has no string \"name\""
            )));
        };
        out.push(ToolInfo {
            name: name.to_owned(),
            description: tool
                .get("description")
                .and_then(Value::as_str)
                .map(str::to_owned),
            raw: tool.clone(),
        });
    }
    Ok((out, next_cursor("tools/list", result)?))
}

/// The `nextCursor` of a list result (`None` on the last page).
pub fn next_cursor(method: &str, result: &Value) -> Result<Option<String>, ClientError> {
    match result.get("nextCursor") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.to_string())),
        Some(other) => Err(ClientError::Protocol(format!(
            "{method} result: nextCursor must be a string, not {}",
            other.type_name()
        ))),
    }
}

/// The items of one page of a list result, under `key` (`resources`, `prompts`...).
pub fn page_items(method: &str, key: &str, result: &Value) -> Result<Vec<Value>, ClientError> {
    match result.get(key).and_then(Value::as_array) {
        Some(items) => Ok(items.iter().cloned().collect()),
        None => Err(ClientError::Protocol(format!(
            "{method} result has no {key:?} array"
        ))),
    }
}

/// What `completion/complete` answered.
#[derive(Clone, Debug, PartialEq)]
pub struct Completion {
    /// The completions, best first (the non-string entries a server sent are dropped).
    pub values: Vec<String>,
    /// How many completions there are in all, when the server says.
    pub total: Option<u64>,
    /// The server has more completions than it sent.
    pub has_more: bool,
}

/// The `completion` member of a `completion/complete` result.
pub fn completion(result: &Value) -> Result<Completion, ClientError> {
    let completion = result.get("completion");
    let values = completion
        .and_then(|c| c.get("values"))
        .and_then(Value::as_array)
        .ok_or_else(|| {
            ClientError::Protocol("completion/complete result has no completion.values".into())
        })?;
    let field = |k: &str| completion.and_then(|c| c.get(k));
    Ok(Completion {
        values: values
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        total: field("total").and_then(Value::as_u64),
        has_more: field("hasMore").and_then(Value::as_bool) == Some(true),
    })
}

/// The `tools/list` params for the page at `cursor`.
pub fn list_params(cursor: Option<&str>) -> Map {
    let mut params = Map::new();
    if let Some(c) = cursor {
        params.insert("cursor", Value::from(c));
    }
    params
}

/// A `tools/call` result: content on success, [`ClientError::Tool`] when `isError` is true.
pub fn tool_result(tool: &str, result: Value) -> Result<ToolResult, ClientError> {
    let content = match result.get("content") {
        Some(Value::Array(a)) => a.to_vec(),
        None => Vec::new(),
        Some(other) => {
            return Err(ClientError::Protocol(format!(
                "tools/call result: content must be an array, not {}",
                other.type_name()
            )))
        }
    };
    if result.get("isError").and_then(Value::as_bool) == Some(true) {
        let mut text = text_of(&content);
        if text.is_empty() {
            text = "(the server sent no text)".into();
        }
        return Err(ClientError::Tool {
            tool: tool.to_owned(),
            text,
            result,
        });
    }
    Ok(ToolResult {
        content,
        structured: result.get("structuredContent").cloned(),
        raw: result,
    })
}

/// Classifies one message from the server.
pub fn classify(message: Value) -> Incoming {
    let is_response = message
        .as_object()
        .is_some_and(|m| m.contains_key("result") || m.contains_key("error"))
        && message.get("method").is_none();
    if is_response {
        return match message.get("id") {
            Some(id @ (Value::String(_) | Value::Number(_))) => Incoming::Response {
                id: id.clone(),
                message,
            },
            // An error without a usable id answers a request the server could not read.
            _ => Incoming::Response {
                id: Value::Null,
                message,
            },
        };
    }
    match jsonrpc::classify(message) {
        jsonrpc::Message::Notification { method, params } => {
            Incoming::Notification(event(method, params.unwrap_or(Value::Null)))
        }
        jsonrpc::Message::Request { id, method, params } => Incoming::Request {
            id,
            method,
            params: params.unwrap_or_default(),
        },
        jsonrpc::Message::Invalid { error, .. } => Incoming::Invalid(error.message),
        jsonrpc::Message::Response { .. } => Incoming::Invalid("unexpected response".into()),
    }
}

fn event(method: String, params: Value) -> Event {
    let num = |k: &str| params.get(k).and_then(Value::as_f64);
    let text = |k: &str| params.get(k).and_then(Value::as_str).map(str::to_owned);
    match method.as_str() {
        "notifications/progress" if num("progress").is_some() => Event::Progress {
            progress: num("progress").unwrap_or(0.0),
            total: num("total"),
            message: text("message"),
        },
        "notifications/message" => Event::Log {
            level: text("level").unwrap_or_default(),
            logger: text("logger"),
            data: params.get("data").cloned().unwrap_or(Value::Null),
        },
        _ => Event::Other { method, params },
    }
}

/// Whether `message` answers the request with `id` (or is an id-less error, which answers the
/// only request in flight).
pub fn answers(reply_id: &Value, id: &Value) -> bool {
    reply_id == id || reply_id.is_null()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{parse, to_string};

    fn v(s: &str) -> Value {
        parse(s.as_bytes()).unwrap()
    }

    #[test]
    fn completions_carry_total_and_has_more_when_sent() {
        let c = completion(&v(
            r#"{"completion":{"values":["a","b",3],"total":9,"hasMore":true}}"#,
        ))
        .unwrap();
        assert_eq!(c.values, ["a", "b"]);
        assert_eq!((c.total, c.has_more), (Some(9), true));
        let c = completion(&v(r#"{"completion":{"values":[]}}"#)).unwrap();
        assert_eq!((c.total, c.has_more), (None, false));
        assert!(completion(&v(r#"{"completion":{}}"#)).is_err());
    }

    #[test]
    fn ids_increase_and_initialize_names_the_client() {
        let mut core = Core::new("probe", "1.2", None);
        let init = core.initialize_request();
        assert_eq!(
            to_string(&init.message),
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"probe","version":"1.2"}}}"#
        );
        assert_eq!(init.revision, None);
        let next = core.request("ping", Map::new());
        assert_eq!(next.id, Some(Value::from(2u64)));
    }

    #[test]
    fn legacy_session_takes_the_servers_revision_and_rejects_unknown_ones() {
        let mut core = Core::new("c", "1", None);
        let info = core
            .accept_initialize(v(r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-03-26","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"9"}}}"#))
            .unwrap();
        assert_eq!(info.revision, Revision::V2025_03_26);
        assert_eq!((info.name.as_str(), info.version.as_str()), ("s", "9"));
        let req = core.request("tools/list", Map::new());
        assert_eq!(req.revision, Some(Revision::V2025_03_26));
        assert!(!req.modern);

        let mut core = Core::new("c", "1", None);
        let err = core
            .accept_initialize(v(
                r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"1999-01-01"}}"#,
            ))
            .unwrap_err();
        assert!(err
            .to_string()
            .starts_with("server answered initialize with protocolVersion 1999-01-01"));
        let err = core
            .accept_initialize(v(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#))
            .unwrap_err();
        assert!(
            err.to_string().contains("protocolVersion (missing)"),
            "{err}"
        );
    }

    #[test]
    fn discover_decides_the_era() {
        let mut core = Core::new("c", "1", Some("info"));
        let probe = core.discover_request();
        assert!(probe.modern);
        let meta = probe.message.get("params").unwrap().get("_meta").unwrap();
        assert_eq!(
            meta.get(META_PROTOCOL_VERSION).and_then(Value::as_str),
            Some("2026-07-28")
        );
        assert!(meta.get(META_CLIENT_CAPABILITIES).is_some());
        assert_eq!(
            meta.get(META_LOG_LEVEL).and_then(Value::as_str),
            Some("info")
        );
        let modern = v(
            r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","supportedVersions":["2026-07-28","2025-11-25"],"capabilities":{"tools":{}}}}"#,
        );
        assert!(core.accept_discover(Ok(modern)).unwrap());
        let call = core.call_request("git_log", Map::new(), false);
        assert!(call.modern);
        assert_eq!(call.name.as_deref(), Some("git_log"));
        assert!(call.message.get("params").unwrap().get("_meta").is_some());

        for legacy in [
            Ok(v(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#)),
            Ok(v(
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"nope"}}"#,
            )),
            Err(ClientError::Http {
                status: 400,
                body: "Bad Request".into(),
            }),
            Err(ClientError::Timeout {
                method: "server/discover".into(),
                after: std::time::Duration::from_secs(1),
            }),
        ] {
            let mut core = Core::new("c", "1", None);
            assert!(!core.accept_discover(legacy).unwrap());
            assert!(!core.request("tools/list", Map::new()).modern);
        }
        let mut core = Core::new("c", "1", None);
        let auth = Err(ClientError::AuthRequired {
            status: 401,
            challenge: None,
            token_sent: false,
        });
        assert!(matches!(
            core.accept_discover(auth),
            Err(ClientError::AuthRequired { .. })
        ));
    }

    #[test]
    fn is_error_results_and_rpc_errors_become_typed_errors() {
        let err = tool_result(
            "t",
            v(r#"{"content":[{"type":"text","text":"bad rev"},{"type":"text","text":"second"}],"isError":true}"#),
        )
        .unwrap_err();
        match err {
            ClientError::Tool { tool, text, .. } => {
                assert_eq!(tool, "t");
                assert_eq!(text, "bad rev\nsecond");
            }
            other => panic!("{other:?}"),
        }
        let ok = tool_result(
            "t",
            v(r#"{"content":[{"type":"text","text":"hi"}],"isError":false}"#),
        )
        .unwrap();
        assert_eq!(ok.text(), "hi");
        match result_of(
            "tools/call",
            v(
                r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"unknown tool 'x'","data":1}}"#,
            ),
        ) {
            Err(ClientError::Rpc { method, error }) => {
                assert_eq!(method, "tools/call");
                assert_eq!(error.code, -32602);
                assert_eq!(error.message, "unknown tool 'x'");
                assert_eq!(error.data, Some(Value::from(1u64)));
            }
            other => panic!("{other:?}"),
        }
        let err = result_of(
            "x",
            v(r#"{"jsonrpc":"2.0","id":3,"result":{"resultType":"input_required"}}"#),
        )
        .unwrap_err();
        assert!(err.to_string().contains("input_required"), "{err}");
        let passed = result_of(
            "tools/call",
            v(r#"{"jsonrpc":"2.0","id":3,"result":{"resultType":"input_required"}}"#),
        )
        .unwrap();
        assert_eq!(
            passed.get("resultType").and_then(Value::as_str),
            Some("input_required")
        );
        let err = result_of("x", v(r#"[1]"#)).unwrap_err();
        assert!(err.to_string().contains("not a JSON-RPC response object"));
        let err = result_of("x", v(r#"{"jsonrpc":"2.0","id":1,"error":"boom"}"#)).unwrap_err();
        assert!(err.to_string().contains("malformed error object"), "{err}");
    }

    #[test]
    fn pages_and_cursors() {
        let (tools, next) = tools_page(&v(
            r#"{"tools":[{"name":"a","description":"A","inputSchema":{"type":"object"}}],"nextCursor":"p2"}"#,
        ))
        .unwrap();
        assert_eq!(tools[0].name, "a");
        assert!(tools[0].input_schema().is_some());
        assert_eq!(next.as_deref(), Some("p2"));
        let (_, next) = tools_page(&v(r#"{"tools":[]}"#)).unwrap();
        assert_eq!(next, None);
        let err = tools_page(&v(r#"{"tools":[{"title":"x"}]}"#)).unwrap_err();
        assert!(err.to_string().contains("tool 0 has no string \"name\""));
        assert!(tools_page(&v(r#"{}"#)).is_err());
        assert_eq!(list_params(Some("")).get("cursor"), Some(&Value::from("")));
    }

    #[test]
    fn incoming_messages_are_classified() {
        assert!(matches!(
            classify(v(r#"{"jsonrpc":"2.0","id":4,"result":{}}"#)),
            Incoming::Response { .. }
        ));
        match classify(v(
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":50,"total":100}}"#,
        )) {
            Incoming::Notification(Event::Progress {
                progress, total, ..
            }) => assert_eq!((progress, total), (50.0, Some(100.0))),
            other => panic!("{other:?}"),
        }
        match classify(v(
            r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}"#,
        )) {
            Incoming::Notification(Event::Log { level, data, .. }) => {
                assert_eq!(level, "info");
                assert_eq!(data, Value::from("x"));
            }
            other => panic!("{other:?}"),
        }
        match classify(v(
            r#"{"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage"}"#,
        )) {
            Incoming::Request { id, method, params } => {
                let reply = crate::client::answers::Answers::default().reply(id, &method, &params);
                assert_eq!(
                    to_string(&reply),
                    r#"{"jsonrpc":"2.0","id":"s1","error":{"code":-32601,"message":"this client has no model to sample from (sampling is not supported)"}}"#
                );
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(classify(v("7")), Incoming::Invalid(_)));
    }
}
