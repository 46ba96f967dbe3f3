//! A blocking MCP client: connect to a server (a child process over stdio, or Streamable HTTP),
//! list its tools and call them.
//!
//! Layers: [`core`] holds the protocol state and message mapping and does no I/O; [`stdio`] and
//! [`http`] move messages ([`Transport`]), HTTP over [`stream`] (a socket, or for `https://` the
//! pipes of the system's TLS client run by [`tls`]); [`Client`] runs the lifecycle over any transport:
//! era detection (`server/discover`, then `initialize` as the fallback), pagination, one
//! re-initialization when an HTTP session expires, and `notifications/cancelled` after a timeout.
//! [`trust`] decides which of a server's tools may be used.
//!
//! ```no_run
//! use agentteams_mcp::client::{Client, Options};
//! use agentteams_mcp::json::Map;
//! let argv = ["agentteams-mcp", "--serve-mcp", "gitread", "--root", "."].map(String::from);
//! let mut client = Client::spawn(&argv, Options::default())?;
//! for tool in client.list_tools()? {
//!     println!("{}", tool.name);
//! }
//! let result = client.call_tool("git_log", Map::new())?;
//! println!("{}", result.text());
//! client.close()?;
//! # Ok::<(), agentteams_mcp::client::ClientError>(())
//! ```

mod answers;
pub mod core;
mod error;
pub mod http;
pub mod oauth;
pub mod oneshot;
pub mod pool;
pub mod stdio;
pub mod stream;
pub mod tls;
mod transport;
pub mod trust;

pub use self::core::{Completion, EraChoice, Event, Outgoing, ServerInfo, ToolInfo, ToolResult};
pub use answers::{Answers, MAX_ELICITATION_FIELDS};

/// Rounds of 2026-07-28 `input_required` results one call may take before the client stops (the
/// product's servers ask at most 8 times per call, one request or more a round).
pub const MAX_INPUT_ROUNDS: usize = 8;

/// Input requests answered in one round; a server asking more is refused (the product's servers
/// carry at most 16 answers in a retry).
pub const MAX_INPUT_REQUESTS: usize = 16;
pub use error::ClientError;
pub use stdio::ServerStderr;
pub use transport::Transport;

use crate::json::{self, Map, Value};
use std::time::Duration;

/// Default time allowed to establish an HTTP connection.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Default time allowed for one request's answer (including SSE resumption).
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(60);

/// Time allowed for the `server/discover` probe before falling back to `initialize`.
pub const DISCOVER_TIMEOUT: Duration = Duration::from_secs(5);

/// Default cap on one message from the server (a JSON body, an SSE event or a stdio line).
pub const DEFAULT_MAX_RESPONSE_BYTES: usize = 4 * 1024 * 1024;

/// How to connect and what to ask for.
#[derive(Clone, Debug)]
pub struct Options {
    pub client_name: String,
    pub client_version: String,
    pub era: EraChoice,
    pub connect_timeout: Duration,
    pub call_timeout: Duration,
    pub max_response_bytes: usize,
    /// Sent as `Authorization: Bearer` (HTTP only).
    pub bearer_token: Option<String>,
    /// When set, asks the server for log notifications at this level and above.
    pub log_level: Option<String>,
    /// Where a stdio server's stderr goes: by default relayed, sanitised, to this process's
    /// stderr ([`ServerStderr`]).
    pub server_stderr: ServerStderr,
    /// How requests from the server are answered, and so which client capabilities are declared
    /// (by default: none; `ping` is always answered).
    pub answers: Answers,
    /// Log in with OAuth when an HTTP server asks (`None`: a 401 is an error).
    pub oauth: Option<oauth::OAuthConfig>,
    /// How `https://` connections are made (MCP and OAuth requests alike).
    pub tls: tls::TlsConfig,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            client_name: "agentteams-mcp-client".into(),
            client_version: env!("CARGO_PKG_VERSION").into(),
            era: EraChoice::Auto,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            call_timeout: DEFAULT_CALL_TIMEOUT,
            max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
            bearer_token: None,
            log_level: None,
            server_stderr: ServerStderr::default(),
            answers: Answers::default(),
            oauth: None,
            tls: tls::TlsConfig::default(),
        }
    }
}

/// A connected client. Dropping it closes the connection (without reporting close errors).
pub struct Client {
    core: core::Core,
    transport: Box<dyn Transport>,
    options: Options,
    server: ServerInfo,
    closed: bool,
}

impl Client {
    /// Starts `argv` as a child process and connects to it over stdio.
    pub fn spawn(argv: &[String], options: Options) -> Result<Client, ClientError> {
        let transport = stdio::StdioTransport::spawn_with(
            argv,
            options.max_response_bytes,
            &options.server_stderr,
        )?;
        Client::connect(Box::new(transport), options)
    }

    /// Connects to the Streamable HTTP endpoint at `url` (`http://`, or `https://` through the
    /// TLS helper, [`tls`]).
    pub fn connect_http(url: &str, options: Options) -> Result<Client, ClientError> {
        let mut transport = http::HttpTransport::new(
            url,
            options.bearer_token.clone(),
            options.connect_timeout,
            options.max_response_bytes,
        )?
        .with_tls(options.tls.clone());
        if let Some(config) = &options.oauth {
            let fetcher = oauth::fetch::Fetcher {
                connect_timeout: options.connect_timeout,
                timeout: options.call_timeout,
                tls: options.tls.clone(),
            };
            transport = transport.with_oauth(oauth::OAuth::new(url, config.clone(), fetcher)?);
        }
        Client::connect(Box::new(transport), options)
    }

    /// Runs the handshake over `transport`: the era probe when asked for, then `initialize` and
    /// `notifications/initialized` for a legacy server.
    pub fn connect(
        mut transport: Box<dyn Transport>,
        options: Options,
    ) -> Result<Client, ClientError> {
        let mut core = core::Core::new(
            &options.client_name,
            &options.client_version,
            options.log_level.as_deref(),
        );
        core.set_capabilities(options.answers.capabilities());
        transport.set_answers(options.answers.clone());
        let server = match handshake(&mut core, transport.as_mut(), &options) {
            Ok(server) => server,
            Err(e) => {
                let _ = transport.close();
                return Err(e);
            }
        };
        Ok(Client {
            core,
            transport,
            options,
            server,
            closed: false,
        })
    }

    /// What the server said about itself (revision, name, version, capabilities, instructions).
    pub fn server(&self) -> &ServerInfo {
        &self.server
    }

    /// Sends `method` and returns its result. An expired HTTP session is re-initialized once and
    /// the request replayed; a timeout sends `notifications/cancelled` (legacy era).
    pub fn request(
        &mut self,
        method: &str,
        params: Map,
        on_event: &mut dyn FnMut(&Event),
    ) -> Result<Value, ClientError> {
        self.exchange(
            method,
            &|core| core.request(method, params.clone()),
            on_event,
        )
    }

    fn exchange(
        &mut self,
        method: &str,
        build: &dyn Fn(&mut core::Core) -> Outgoing,
        on_event: &mut dyn FnMut(&Event),
    ) -> Result<Value, ClientError> {
        let out = build(&mut self.core);
        let reply = match self.send(&out, on_event) {
            Err(ClientError::SessionExpired) => {
                self.server = self.reinitialize()?;
                let out = build(&mut self.core);
                self.send(&out, on_event)?
            }
            other => other?,
        };
        core::result_of(method, reply)
    }

    fn send(
        &mut self,
        out: &Outgoing,
        on_event: &mut dyn FnMut(&Event),
    ) -> Result<Value, ClientError> {
        let result = self
            .transport
            .request(out, self.options.call_timeout, on_event);
        if let (Err(ClientError::Timeout { .. }), Some(id)) = (&result, &out.id) {
            if self.transport.cancels_with_notification(out) {
                let cancel = self.core.cancelled_notification(id, "timed out");
                let _ = self.transport.notify(&cancel, self.options.connect_timeout);
            }
        }
        result
    }

    fn reinitialize(&mut self) -> Result<ServerInfo, ClientError> {
        self.transport.reset_session();
        self.core.reset();
        let options = Options {
            era: EraChoice::Legacy,
            ..self.options.clone()
        };
        handshake(&mut self.core, self.transport.as_mut(), &options)
    }

    /// The HTTP session id the server assigned, while one is live.
    pub fn session_id(&self) -> Option<&str> {
        self.transport.session_id()
    }

    /// Changes the time allowed for each later call.
    pub fn set_call_timeout(&mut self, timeout: Duration) {
        self.options.call_timeout = timeout;
    }

    /// Every tool the server offers, following `nextCursor` across pages.
    pub fn list_tools(&mut self) -> Result<Vec<ToolInfo>, ClientError> {
        let mut tools = Vec::new();
        self.pages("tools/list", &mut |result| {
            let (page, next) = core::tools_page(result)?;
            tools.extend(page);
            Ok(next)
        })?;
        Ok(tools)
    }

    /// Calls list `method` page after page, handing each result to `take`, which returns the
    /// next cursor; stops at the last page, at a cursor seen before (a loop), or after
    /// [`core::MAX_TOOL_PAGES`] pages.
    fn pages(
        &mut self,
        method: &str,
        take: &mut dyn FnMut(&Value) -> Result<Option<String>, ClientError>,
    ) -> Result<(), ClientError> {
        let mut cursor: Option<String> = None;
        let mut seen = std::collections::HashSet::new();
        for _ in 0..core::MAX_TOOL_PAGES {
            let result = self.request(method, core::list_params(cursor.as_deref()), &mut |_| {})?;
            match take(&result)? {
                None => return Ok(()),
                Some(c) if !seen.insert(c.clone()) => {
                    return Err(ClientError::Protocol(format!(
                        "{method} returned cursor {c:?} twice; stopping to avoid a loop"
                    )))
                }
                Some(c) => cursor = Some(c),
            }
        }
        Err(ClientError::Protocol(format!(
            "{method} has more than {} pages",
            core::MAX_TOOL_PAGES
        )))
    }

    /// Every item list `method` returns under `key`, across pages, as the server sent them.
    fn list_all(&mut self, method: &str, key: &str) -> Result<Vec<Value>, ClientError> {
        let mut items = Vec::new();
        self.pages(method, &mut |result| {
            items.extend(core::page_items(method, key, result)?);
            core::next_cursor(method, result)
        })?;
        Ok(items)
    }

    /// Every resource the server lists (`{uri, name, ...}` objects).
    pub fn list_resources(&mut self) -> Result<Vec<Value>, ClientError> {
        self.list_all("resources/list", "resources")
    }

    /// Every resource template the server lists (`{uriTemplate, name, ...}` objects).
    pub fn list_resource_templates(&mut self) -> Result<Vec<Value>, ClientError> {
        self.list_all("resources/templates/list", "resourceTemplates")
    }

    /// The contents of resource `uri` (`{uri, mimeType?, text | blob}` objects).
    pub fn read_resource(&mut self, uri: &str) -> Result<Vec<Value>, ClientError> {
        let mut params = Map::new();
        params.insert("uri", Value::from(uri));
        let result = self.request("resources/read", params, &mut |_| {})?;
        core::page_items("resources/read", "contents", &result)
    }

    /// Every prompt the server lists (`{name, description?, arguments}` objects).
    pub fn list_prompts(&mut self) -> Result<Vec<Value>, ClientError> {
        self.list_all("prompts/list", "prompts")
    }

    /// Prompt `name` built from `arguments`: the `prompts/get` result (`description?`, `messages`).
    pub fn get_prompt(
        &mut self,
        name: &str,
        arguments: &[(String, String)],
    ) -> Result<Value, ClientError> {
        let mut given = Map::new();
        for (k, v) in arguments {
            given.insert(k.as_str(), Value::from(v.as_str()));
        }
        let mut params = Map::new();
        params.insert("name", Value::from(name));
        params.insert("arguments", Value::Object(given));
        self.request("prompts/get", params, &mut |_| {})
    }

    /// Completions of `argument` from `value`, for `reference`
    /// (`{"type": "ref/prompt", "name": ...}` or `{"type": "ref/resource", "uri": <template>}`):
    /// the values the server ranks first.
    pub fn complete(
        &mut self,
        reference: Value,
        argument: &str,
        value: &str,
    ) -> Result<Vec<String>, ClientError> {
        Ok(self.complete_in(reference, argument, value, &[])?.values)
    }

    /// [`Client::complete`] with `context`, the values already chosen for the reference's other
    /// arguments (`context.arguments`; none sent when empty), and the whole answer: the values,
    /// the server's `total` and `hasMore`.
    pub fn complete_in(
        &mut self,
        reference: Value,
        argument: &str,
        value: &str,
        context: &[(String, String)],
    ) -> Result<Completion, ClientError> {
        let mut params = Map::new();
        params.insert("ref", reference);
        params.insert(
            "argument",
            json::obj([
                ("name", Value::from(argument)),
                ("value", Value::from(value)),
            ]),
        );
        if !context.is_empty() {
            let mut given = Map::new();
            for (k, v) in context {
                given.insert(k.as_str(), Value::from(v.as_str()));
            }
            params.insert("context", json::obj([("arguments", Value::Object(given))]));
        }
        let result = self.request("completion/complete", params, &mut |_| {})?;
        core::completion(&result)
    }

    /// Calls `tool`. A result with `isError: true` is returned as [`ClientError::Tool`].
    pub fn call_tool(&mut self, tool: &str, arguments: Map) -> Result<ToolResult, ClientError> {
        self.call_tool_with(tool, arguments, &mut |_| {})
    }

    /// Calls `tool`, passing progress and log notifications to `on_event` as they arrive.
    pub fn call_tool_with(
        &mut self,
        tool: &str,
        arguments: Map,
        on_event: &mut dyn FnMut(&Event),
    ) -> Result<ToolResult, ClientError> {
        let mut retry: Option<(Map, String)> = None;
        for _ in 0..=MAX_INPUT_ROUNDS {
            let given = retry
                .as_ref()
                .map(|(responses, state)| (responses, state.as_str()));
            let build =
                |core: &mut core::Core| core.call_retry(tool, arguments.clone(), true, given);
            let result = self.exchange("tools/call", &build, on_event)?;
            if result.get("resultType").and_then(Value::as_str) != Some("input_required") {
                return core::tool_result(tool, result);
            }
            retry = Some(self.input_responses(tool, &result)?);
        }
        Err(ClientError::Protocol(format!(
            "the server asked for input to finish {tool} more than {MAX_INPUT_ROUNDS} times"
        )))
    }

    /// The answers to a 2026-07-28 `input_required` result of `tool`, and its `requestState`:
    /// each input request answered as a legacy server request would be ([`Answers::answer`]); one
    /// this client cannot answer ends the call with an error naming it.
    fn input_responses(&self, tool: &str, result: &Value) -> Result<(Map, String), ClientError> {
        let malformed =
            |what: &str| ClientError::Protocol(format!("input_required result of {tool}: {what}"));
        let requests = (result.get("inputRequests").and_then(Value::as_object))
            .ok_or_else(|| malformed("inputRequests is not an object"))?;
        let state = (result.get("requestState").and_then(Value::as_str))
            .ok_or_else(|| malformed("requestState is not a string"))?;
        if requests.len() > MAX_INPUT_REQUESTS {
            return Err(malformed(&format!(
                "more than {MAX_INPUT_REQUESTS} input requests"
            )));
        }
        let mut responses = Map::new();
        for (key, request) in requests.iter() {
            let method = (request.get("method").and_then(Value::as_str))
                .ok_or_else(|| malformed(&format!("inputRequests[{key:?}] has no method")))?;
            let params = request.get("params").cloned().unwrap_or_default();
            let answer = self.options.answers.answer(method, &params).map_err(|e| {
                ClientError::Unsupported(format!(
                    "the server needs {method} answered to finish {tool}, and this client does not: {}",
                    e.message
                ))
            })?;
            responses.insert(key.as_str(), answer);
        }
        Ok((responses, state.to_owned()))
    }

    /// Ends the conversation: stdio closes the child's stdin, then ends its process group;
    /// HTTP deletes the session (200, 202, 204, 404 and 405 all count as done).
    pub fn close(mut self) -> Result<(), ClientError> {
        self.closed = true;
        self.transport.close()
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        if !self.closed {
            let _ = self.transport.close();
        }
    }
}

fn handshake(
    core: &mut core::Core,
    transport: &mut dyn Transport,
    options: &Options,
) -> Result<ServerInfo, ClientError> {
    // What went wrong with the probe, if anything: worth telling when initialize fails too.
    let mut probe_failure: Option<ClientError> = None;
    if options.era != EraChoice::Legacy {
        let probe = core.discover_request();
        let timeout = match options.era {
            EraChoice::Auto => DISCOVER_TIMEOUT.min(options.call_timeout),
            _ => options.call_timeout,
        };
        let outcome = transport.request(&probe, timeout, &mut |_| {});
        let discovered = outcome.as_ref().ok().cloned();
        if core.accept_discover(outcome.clone())? {
            let result = core::result_of("server/discover", discovered.unwrap_or_default())?;
            return Ok(core::Core::modern_server_info(&result));
        }
        if options.era == EraChoice::Auto {
            probe_failure = outcome.err();
        } else {
            return Err(match outcome {
                Err(e) => e,
                Ok(reply) => match core::result_of("server/discover", reply) {
                    Err(e) => e,
                    Ok(_) => ClientError::Protocol(
                        "server/discover does not list 2026-07-28 among supportedVersions".into(),
                    ),
                },
            });
        }
    }
    let init = core.initialize_request();
    let reply = match transport.request(&init, options.call_timeout, &mut |_| {}) {
        Ok(reply) => reply,
        Err(ClientError::Closed(closed)) => {
            return Err(ClientError::Closed(match probe_failure {
                Some(probe @ ClientError::Protocol(_)) => {
                    format!("{closed}; earlier, probing server/discover: {probe}")
                }
                _ => closed,
            }))
        }
        Err(e) => return Err(e),
    };
    let server = core.accept_initialize(reply)?;
    let initialized = core.notification("notifications/initialized", Map::new());
    transport.notify(&initialized, options.call_timeout)?;
    if let Some(set_level) = core.set_level_request(&server) {
        let reply = transport.request(&set_level, options.call_timeout, &mut |_| {})?;
        core::result_of("logging/setLevel", reply)?;
    }
    Ok(server)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{parse, to_string};
    use std::sync::{Arc, Mutex};

    /// What a scripted transport answers to one request.
    enum Step {
        Reply(&'static str),
        Fail(ClientError),
    }

    /// An in-memory transport: answers requests from a script and records everything sent.
    struct Scripted {
        script: std::collections::VecDeque<Step>,
        sent: Arc<Mutex<Vec<String>>>,
        notification_cancels: bool,
    }

    impl Transport for Scripted {
        fn request(
            &mut self,
            out: &Outgoing,
            _timeout: Duration,
            _on_event: &mut dyn FnMut(&Event),
        ) -> Result<Value, ClientError> {
            self.sent.lock().unwrap().push(to_string(&out.message));
            match self
                .script
                .pop_front()
                .expect("the script covers every request")
            {
                Step::Reply(text) => {
                    let mut reply = parse(text.as_bytes()).unwrap();
                    if let Value::Object(m) = &mut reply {
                        m.insert("id", out.id.clone().unwrap());
                    }
                    Ok(reply)
                }
                Step::Fail(e) => Err(e),
            }
        }
        fn notify(&mut self, out: &Outgoing, _timeout: Duration) -> Result<(), ClientError> {
            self.sent.lock().unwrap().push(to_string(&out.message));
            Ok(())
        }
        fn close(&mut self) -> Result<(), ClientError> {
            self.sent.lock().unwrap().push("close".into());
            Ok(())
        }
        fn reset_session(&mut self) {
            self.sent.lock().unwrap().push("reset".into());
        }
        fn cancels_with_notification(&self, _: &Outgoing) -> bool {
            self.notification_cancels
        }
    }

    const INIT: &str =
        r#"{"jsonrpc":"2.0","result":{"protocolVersion":"2025-06-18","capabilities":{}}}"#;
    const TOOLS: &str = r#"{"jsonrpc":"2.0","result":{"tools":[{"name":"t"}]}}"#;

    fn client(steps: Vec<Step>, notification_cancels: bool) -> (Client, Arc<Mutex<Vec<String>>>) {
        scripted(steps, notification_cancels, Answers::default())
    }

    /// A legacy-era client over a [`Scripted`] transport, answering with `answers`.
    fn scripted(
        steps: Vec<Step>,
        notification_cancels: bool,
        answers: Answers,
    ) -> (Client, Arc<Mutex<Vec<String>>>) {
        let sent = Arc::new(Mutex::new(Vec::new()));
        let transport = Scripted {
            script: steps.into(),
            sent: Arc::clone(&sent),
            notification_cancels,
        };
        let options = Options {
            era: EraChoice::Legacy,
            answers,
            ..Options::default()
        };
        (Client::connect(Box::new(transport), options).unwrap(), sent)
    }

    /// A scripted client whose options answer elicitations from schema defaults.
    fn answering_client(steps: Vec<Step>) -> (Client, Arc<Mutex<Vec<String>>>) {
        let answers = Answers {
            elicitation: Some(Vec::new()),
            roots: Vec::new(),
        };
        scripted(steps, false, answers)
    }

    const ASK_NAME: &str = r#"{"jsonrpc":"2.0","result":{"resultType":"input_required","requestState":"s1","inputRequests":{"elicitation-1":{"method":"elicitation/create","params":{"message":"Name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string","default":"Ada"}}}}}}}}"#;
    const DONE: &str =
        r#"{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"hi Ada"}]}}"#;

    #[test]
    fn an_input_required_result_is_answered_and_the_call_retried_with_its_state() {
        let (mut c, sent) = answering_client(vec![
            Step::Reply(INIT),
            Step::Reply(ASK_NAME),
            Step::Reply(DONE),
        ]);
        assert_eq!(c.call_tool("t", Map::new()).unwrap().text(), "hi Ada");
        let sent = sent.lock().unwrap().clone();
        let retry = parse(sent.last().unwrap().as_bytes()).unwrap();
        let params = retry.get("params").unwrap();
        assert_eq!(
            params.get("requestState").and_then(Value::as_str),
            Some("s1")
        );
        assert_eq!(
            to_string(params.get("inputResponses").unwrap()),
            r#"{"elicitation-1":{"action":"accept","content":{"name":"Ada"}}}"#
        );
    }

    #[test]
    fn input_rounds_are_bounded_and_unanswerable_or_malformed_requests_end_the_call() {
        let mut steps = vec![Step::Reply(INIT)];
        steps.extend((0..=MAX_INPUT_ROUNDS).map(|_| Step::Reply(ASK_NAME)));
        let (mut c, sent) = answering_client(steps);
        match c.call_tool("t", Map::new()) {
            Err(ClientError::Protocol(m)) => {
                assert!(m.contains("more than 8 times"), "{m}")
            }
            other => panic!("{other:?}"),
        }
        let calls = methods(&sent).iter().filter(|m| *m == "tools/call").count();
        assert_eq!(calls, MAX_INPUT_ROUNDS + 1);
        let ask_roots = r#"{"jsonrpc":"2.0","result":{"resultType":"input_required","requestState":"s","inputRequests":{"roots-1":{"method":"roots/list"}}}}"#;
        let (mut c, _) = answering_client(vec![Step::Reply(INIT), Step::Reply(ask_roots)]);
        match c.call_tool("t", Map::new()) {
            Err(ClientError::Unsupported(m)) => {
                assert!(m.contains("needs roots/list answered to finish t"), "{m}")
            }
            other => panic!("{other:?}"),
        }
        let many: String = (0..=MAX_INPUT_REQUESTS)
            .map(|i| format!(r#""r{i}":{{"method":"roots/list"}}"#))
            .collect::<Vec<_>>()
            .join(",");
        let too_many = format!(
            r#"{{"jsonrpc":"2.0","result":{{"resultType":"input_required","requestState":"s","inputRequests":{{{many}}}}}}}"#
        );
        let too_many: &'static str = Box::leak(too_many.into_boxed_str());
        for (malformed, why) in [
            (too_many, "more than 16 input requests"),
            (
                r#"{"jsonrpc":"2.0","result":{"resultType":"input_required","requestState":"s","inputRequests":[]}}"#,
                "inputRequests is not an object",
            ),
            (
                r#"{"jsonrpc":"2.0","result":{"resultType":"input_required","inputRequests":{}}}"#,
                "requestState is not a string",
            ),
            (
                r#"{"jsonrpc":"2.0","result":{"resultType":"input_required","requestState":"s","inputRequests":{"k":{}}}}"#,
                "has no method",
            ),
        ] {
            let (mut c, _) = answering_client(vec![Step::Reply(INIT), Step::Reply(malformed)]);
            match c.call_tool("t", Map::new()) {
                Err(ClientError::Protocol(m)) => assert!(m.contains(why), "{m}"),
                other => panic!("{other:?}"),
            }
        }
    }

    fn methods(sent: &Arc<Mutex<Vec<String>>>) -> Vec<String> {
        sent.lock()
            .unwrap()
            .iter()
            .map(|m| match parse(m.as_bytes()) {
                Ok(v) => v
                    .get("method")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned(),
                Err(_) => m.clone(),
            })
            .collect()
    }

    fn timeout() -> ClientError {
        ClientError::Timeout {
            method: "tools/list".into(),
            after: Duration::from_secs(1),
        }
    }

    #[test]
    fn a_timeout_is_followed_by_a_cancellation_naming_the_request() {
        let (mut c, sent) = client(vec![Step::Reply(INIT), Step::Fail(timeout())], true);
        assert!(matches!(c.list_tools(), Err(ClientError::Timeout { .. })));
        let last = sent.lock().unwrap().last().cloned().unwrap();
        assert_eq!(
            last,
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"timed out"}}"#
        );
        // A transport that cancels by closing the stream (modern HTTP) sends nothing more.
        let (mut c, sent) = client(vec![Step::Reply(INIT), Step::Fail(timeout())], false);
        assert!(c.list_tools().is_err());
        assert_eq!(
            methods(&sent),
            ["initialize", "notifications/initialized", "tools/list"]
        );
    }

    #[test]
    fn an_expired_session_is_replaced_once_and_the_request_replayed() {
        let steps = vec![
            Step::Reply(INIT),
            Step::Fail(ClientError::SessionExpired),
            Step::Reply(INIT),
            Step::Reply(TOOLS),
        ];
        let (mut c, sent) = client(steps, true);
        assert_eq!(c.list_tools().unwrap()[0].name, "t");
        assert_eq!(
            methods(&sent),
            [
                "initialize",
                "notifications/initialized",
                "tools/list",
                "reset",
                "initialize",
                "notifications/initialized",
                "tools/list"
            ]
        );
        let steps = vec![
            Step::Reply(INIT),
            Step::Fail(ClientError::SessionExpired),
            Step::Reply(INIT),
            Step::Fail(ClientError::SessionExpired),
        ];
        let (mut c, _) = client(steps, true);
        assert!(matches!(c.list_tools(), Err(ClientError::SessionExpired)));
        c.close().unwrap();
    }
}
