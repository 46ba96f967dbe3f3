//! The engine's resources, prompts and completion methods: lookup, validation, paging and result
//! envelopes around a server's [`ResourceSet`] and [`PromptSet`], under the same governance and
//! audit as tool calls (see [`Session::governed`]).

use super::limits::{MAX_COMPLETION_VALUES, MAX_READ_BYTES, PAGE_SIZE};
use super::{Admission, RequestScope, Session};
use crate::declared::Declared;
use crate::governance::decision::{Basis, Subject, Verdict};
use crate::json::{obj, Map, Value};
use crate::jsonrpc::{self, RpcError};
use crate::server::prompt::{
    self, Prompt, PromptSet, MAX_PROMPT_ARGUMENTS, MAX_PROMPT_ARGUMENT_BYTES,
};
use crate::server::reach::{self, Found};
use crate::server::resource::{ReadRequest, Resource, ResourceSet, ResourceTemplate};
use crate::server::uri::{self, UriTemplate};

/// Longest cursor accepted, in bytes (an offset needs at most 20 digits).
const MAX_CURSOR_BYTES: usize = 20;
/// Longest partial value a completion request may carry, in bytes.
const MAX_COMPLETION_INPUT_BYTES: usize = 4096;

fn string_param<'p>(params: &'p Map, key: &str, what: &str) -> Result<&'p str, RpcError> {
    params
        .get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| RpcError::invalid_params(format!("{what} must be a string")))
}

/// One page of `items` from the cursor in `params`, and the cursor of the next page.
fn page<T>(mut items: Vec<T>, params: &Map) -> Result<(Vec<T>, Option<String>), RpcError> {
    let start = match params.get("cursor") {
        None | Some(Value::Null) => 0,
        Some(Value::String(c))
            if !c.is_empty()
                && c.len() <= MAX_CURSOR_BYTES
                && c.bytes().all(|b| b.is_ascii_digit()) =>
        {
            c.parse::<usize>()
                .ok()
                .filter(|&n| n <= items.len())
                .ok_or_else(|| RpcError::invalid_params("invalid cursor"))?
        }
        Some(_) => return Err(RpcError::invalid_params("invalid cursor")),
    };
    let end = items.len().min(start + PAGE_SIZE);
    let next = (end < items.len()).then(|| end.to_string());
    items.truncate(end);
    items.drain(..start);
    Ok((items, next))
}

/// `{name, title?, description?, mimeType?}` members shared by resources and templates.
fn describe(
    m: &mut Map,
    name: &str,
    title: &Option<String>,
    description: &Option<String>,
    mime_type: &Option<String>,
    scope: &RequestScope<'_>,
) {
    m.insert("name", Value::from(name));
    if let (Some(title), true) = (title, scope.revision.has_structured_output()) {
        m.insert("title", Value::from(title.as_str()));
    }
    if let Some(d) = description {
        m.insert("description", Value::from(d.as_str()));
    }
    if let Some(mime) = mime_type {
        m.insert("mimeType", Value::from(mime.as_str()));
    }
}

impl Session {
    fn resource_set(&self) -> &dyn ResourceSet {
        self.engine
            .toolset
            .resource_set()
            .expect("dispatched only when the server has resources")
    }

    fn prompt_set(&self) -> &dyn PromptSet {
        self.engine
            .toolset
            .prompt_set()
            .expect("dispatched only when the server has prompts")
    }

    fn listed(&self, item: &dyn Declared) -> bool {
        self.verdict(item, Subject::Listing).allowed
    }

    /// The governance's decision about `item`: its own, and then that of every tool it reads
    /// through ([`Declared::declared_reads_through`]; the first refusal wins, naming the tool),
    /// so that a resource or prompt shows and serves only what its tools may. A tool the server
    /// does not declare refuses: nothing may read through what no policy could name.
    pub(super) fn verdict(&self, item: &dyn Declared, subject: Subject<'_>) -> Verdict {
        let governance = &self.engine.governance;
        let own = governance.decide(item, subject);
        if !own.allowed {
            return own;
        }
        for name in item.declared_reads_through() {
            let Some(tool) = self.engine.find_tool(name) else {
                return Verdict {
                    allowed: false,
                    basis: Basis::Default,
                    reason: format!(
                        "it reads through {name:?}, which this server does not declare"
                    ),
                    ..own
                };
            };
            let verdict = governance.decide(tool, Subject::Listing);
            if !verdict.allowed {
                return Verdict {
                    reason: format!(
                        "it reads through tool {name:?}, which is refused: {}",
                        verdict.reason
                    ),
                    ..verdict
                };
            }
        }
        own
    }

    /// A list result: of `items`, those the governance lists and `servable` accepts, paged from
    /// the cursor in `params`, each as `to_value` makes it, under `key`; `nextCursor` when there is
    /// more, and the modern era's cache members.
    fn list<T: Declared>(
        &self,
        (key, items): (&str, Vec<T>),
        servable: impl Fn(&T) -> bool,
        params: &Map,
        scope: &RequestScope<'_>,
        to_value: impl Fn(&T) -> Value,
    ) -> Result<Value, RpcError> {
        let listed: Vec<T> = (items.into_iter())
            .filter(|item| self.listed(item) && servable(item))
            .collect();
        let (items, next) = page(listed, params)?;
        let values: Vec<Value> = items.iter().map(to_value).collect();
        let mut m = Map::with_capacity(4);
        m.insert(key, Value::from(values));
        if let Some(next) = next {
            m.insert("nextCursor", Value::from(next));
        }
        if scope.modern {
            // Resource and prompt lists may change while the server runs: private, no caching.
            m.insert("ttlMs", Value::from(0u64));
            m.insert("cacheScope", Value::from("private"));
        }
        Ok(Value::Object(m))
    }

    pub(super) fn resources_list(
        &self,
        params: &Map,
        scope: &RequestScope<'_>,
    ) -> Result<Value, RpcError> {
        let items = ("resources", self.resource_set().resources());
        let servable = |r: &Resource| uri::check_uri(&r.uri).is_ok();
        self.list(items, servable, params, scope, |r| {
            let mut m = Map::with_capacity(5);
            m.insert("uri", Value::from(r.uri.as_str()));
            let (t, d, mime) = (&r.title, &r.description, &r.mime_type);
            describe(&mut m, &r.name, t, d, mime, scope);
            Value::Object(m)
        })
    }

    pub(super) fn templates_list(
        &self,
        params: &Map,
        scope: &RequestScope<'_>,
    ) -> Result<Value, RpcError> {
        let items = ("resourceTemplates", self.resource_set().templates());
        let servable = |t: &ResourceTemplate| UriTemplate::parse(&t.uri_template).is_ok();
        self.list(items, servable, params, scope, |t| {
            let mut m = Map::with_capacity(5);
            m.insert("uriTemplate", Value::from(t.uri_template.as_str()));
            let (ti, d, mime) = (&t.title, &t.description, &t.mime_type);
            describe(&mut m, &t.name, ti, d, mime, scope);
            Value::Object(m)
        })
    }

    /// What `uri` names: checked, then looked up as the scopes look it up ([`reach`]).
    pub(super) fn find_resource(&self, uri: &str) -> Result<Found, RpcError> {
        uri::check_uri(uri).map_err(|e| RpcError::invalid_params(e.to_string()))?;
        match reach::find_resource(self.resource_set(), uri) {
            Ok(Some(found)) => Ok(found),
            Ok(None) => Err(RpcError::invalid_params(format!(
                "resource not found: {}",
                uri::quote(uri)
            ))),
            Err(e) => Err(RpcError::invalid_params(e)),
        }
    }

    /// Admits a use of `found` under the governance.
    pub(super) fn admit_resource(
        &self,
        uri: &str,
        found: Found,
        arguments: Option<&Map>,
    ) -> Admission<Found> {
        let verdict = self.verdict(found.item(), Subject::Call(arguments));
        Admission::new(verdict, "resource", uri, found)
    }

    pub(super) fn resources_read(
        &self,
        params: Map,
        scope: &RequestScope<'_>,
    ) -> Result<Value, RpcError> {
        let ctx = self.call_context(scope, &params);
        let uri = params
            .get("uri")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let lookup = |params: Map| {
            string_param(&params, "uri", "resource uri")?;
            let found = self.find_resource(&uri)?;
            Ok(self.admit_resource(&uri, found, Some(&params)))
        };
        let run = |found: Found| {
            let (template, variables) = match &found {
                Found::Resource(_) => (None, &[][..]),
                Found::Template(t, v) => (Some(t), &v[..]),
            };
            let request = ReadRequest {
                uri: &uri,
                template,
                variables,
            };
            let contents = self
                .resource_set()
                .read(&request, &ctx)
                .map_err(|e| e.to_rpc())?;
            let bytes: usize = contents.iter().map(|c| c.wire_bytes()).sum();
            if bytes > MAX_READ_BYTES {
                return Err(RpcError::new(
                    jsonrpc::code::INTERNAL_ERROR,
                    format!(
                        "resource {} is larger than the {MAX_READ_BYTES} bytes this server sends",
                        uri::quote(&uri)
                    ),
                ));
            }
            let values: Vec<Value> = contents.iter().map(|c| c.to_value()).collect();
            Ok(obj([("contents", Value::from(values))]))
        };
        self.governed(
            scope,
            "resources/read",
            params,
            whole,
            lookup,
            &mut None,
            run,
        )
    }

    pub(super) fn resources_subscribe(
        &self,
        params: &Map,
        subscribe: bool,
    ) -> Result<Value, RpcError> {
        let uri = string_param(params, "uri", "resource uri")?;
        let notifier = self.engine.notifier.as_ref().expect("resources are served");
        if !subscribe {
            uri::check_uri(uri).map_err(|e| RpcError::invalid_params(e.to_string()))?;
            notifier.unsubscribe(self.hub_session, uri);
            return Ok(Value::Object(Map::new()));
        }
        let found = self.find_resource(uri)?;
        let admission = self.admit_resource(uri, found, Some(params));
        if !admission.verdict.allowed {
            return Err(admission.refusal());
        }
        if !notifier.subscribe(self.hub_session, uri) {
            return Err(RpcError::invalid_params(format!(
                "a session holds at most {} subscriptions",
                crate::server::resource::MAX_SUBSCRIPTIONS_PER_SESSION
            )));
        }
        Ok(Value::Object(Map::new()))
    }

    pub(super) fn prompts_list(
        &self,
        params: &Map,
        scope: &RequestScope<'_>,
    ) -> Result<Value, RpcError> {
        let titles = scope.revision.has_structured_output();
        let items = ("prompts", self.prompt_set().prompts());
        self.list(
            items,
            |p| self.listed(p),
            params,
            scope,
            |p| {
                let mut m = Map::with_capacity(4);
                describe(&mut m, &p.name, &p.title, &p.description, &None, scope);
                let arguments: Vec<Value> = p
                    .arguments
                    .iter()
                    .map(|a| {
                        let mut am = Map::with_capacity(4);
                        am.insert("name", Value::from(a.name.as_str()));
                        if let (Some(t), true) = (&a.title, titles) {
                            am.insert("title", Value::from(t.as_str()));
                        }
                        if let Some(d) = &a.description {
                            am.insert("description", Value::from(d.as_str()));
                        }
                        am.insert("required", Value::from(a.required));
                        Value::Object(am)
                    })
                    .collect();
                m.insert("arguments", Value::from(arguments));
                Value::Object(m)
            },
        )
    }

    fn find_prompt(&self, name: &str) -> Result<Prompt, RpcError> {
        self.prompt_set()
            .prompts()
            .into_iter()
            .find(|p| p.name == name)
            .ok_or_else(|| {
                RpcError::invalid_params(format!(
                    "unknown prompt {}",
                    jsonrpc::py_repr(&Value::from(uri::quote(name).trim_matches('"')))
                ))
            })
    }

    pub(super) fn prompts_get(
        &self,
        params: Map,
        scope: &RequestScope<'_>,
    ) -> Result<Value, RpcError> {
        let ctx = self.call_context(scope, &params);
        let lookup = |params: Map| {
            let name = string_param(&params, "name", "prompt name")?;
            let prompt = self.find_prompt(name)?;
            let arguments = prompt::check_arguments(&prompt, params.get("arguments"))
                .map_err(RpcError::invalid_params)?;
            let arguments_map = params.get("arguments").and_then(Value::as_object);
            let verdict = self.verdict(&prompt, Subject::Call(arguments_map));
            Ok(Admission::new(verdict, "prompt", name, (prompt, arguments)))
        };
        let run = |(prompt, arguments): (Prompt, Vec<(String, String)>)| {
            let output = self
                .prompt_set()
                .get(&prompt.name, &arguments, &ctx)
                .map_err(|e| e.to_rpc())?;
            Ok(output.to_value())
        };
        self.governed(scope, "prompts/get", params, whole, lookup, &mut None, run)
    }

    pub(super) fn complete(
        &self,
        params: Map,
        scope: &RequestScope<'_>,
    ) -> Result<Value, RpcError> {
        let lookup = |params: Map| {
            let reference = params
                .get("ref")
                .and_then(Value::as_object)
                .ok_or_else(|| RpcError::invalid_params("ref must be an object"))?;
            let argument = params
                .get("argument")
                .and_then(Value::as_object)
                .ok_or_else(|| RpcError::invalid_params("argument must be an object"))?;
            let name = string_param(argument, "name", "argument name")?.to_owned();
            let value = string_param(argument, "value", "argument value")?.to_owned();
            if value.len() > MAX_COMPLETION_INPUT_BYTES {
                return Err(RpcError::invalid_params(format!(
                    "argument value is longer than {MAX_COMPLETION_INPUT_BYTES} bytes"
                )));
            }
            let context = context_arguments(params.get("context"))?;
            let target = match reference.get("type").and_then(Value::as_str) {
                Some("ref/prompt") if self.engine.toolset.prompt_set().is_some() => {
                    let prompt = self.find_prompt(string_param(reference, "name", "ref name")?)?;
                    if !prompt.arguments.iter().any(|a| a.name == name) {
                        return Err(RpcError::invalid_params(format!(
                            "prompt {:?} has no argument {}",
                            prompt.name,
                            uri::quote(&name)
                        )));
                    }
                    Target::Prompt(prompt)
                }
                Some("ref/resource") if self.engine.toolset.resource_set().is_some() => {
                    let text = string_param(reference, "uri", "ref uri")?;
                    let template = (self.resource_set().templates().into_iter())
                        .find(|t| t.uri_template == text)
                        .ok_or_else(|| {
                            RpcError::invalid_params(format!(
                                "unknown resource template {}",
                                uri::quote(text)
                            ))
                        })?;
                    let declares = UriTemplate::parse(&template.uri_template)
                        .is_ok_and(|t| t.variables().any(|v| v == name));
                    if !declares {
                        return Err(RpcError::invalid_params(format!(
                            "resource template {:?} has no variable {}",
                            template.uri_template,
                            uri::quote(&name)
                        )));
                    }
                    Target::Template(template)
                }
                _ => return Err(RpcError::invalid_params(
                    "ref.type must be ref/prompt or ref/resource, for a kind this server offers",
                )),
            };
            let (kind, item_name) = match &target {
                Target::Prompt(p) => ("prompt", p.name.clone()),
                Target::Template(t) => ("resource template", t.name.clone()),
            };
            let item: &dyn Declared = match &target {
                Target::Prompt(p) => p,
                Target::Template(t) => t,
            };
            let verdict = self.verdict(item, Subject::Listing);
            Ok(Admission::new(
                verdict,
                kind,
                &item_name,
                (target, name, value, context),
            ))
        };
        let run =
            |(target, name, value, context): (Target, String, String, Vec<(String, String)>)| {
                let mut values = match &target {
                    Target::Prompt(p) => self.prompt_set().complete(p, &name, &value, &context),
                    Target::Template(t) => self.resource_set().complete(t, &name, &value, &context),
                };
                let total = values.len();
                values.truncate(MAX_COMPLETION_VALUES);
                let values: Vec<Value> = values.into_iter().map(Value::from).collect();
                Ok(obj([(
                    "completion",
                    obj([
                        ("values", Value::from(values)),
                        ("total", Value::from(total)),
                        ("hasMore", Value::from(total > MAX_COMPLETION_VALUES)),
                    ]),
                )]))
            };
        self.governed(
            scope,
            "completion/complete",
            params,
            whole,
            lookup,
            &mut None,
            run,
        )
    }
}

/// What the audit log records of a resource, prompt or completion request: all its params.
fn whole(params: &Map) -> Value {
    Value::Object(params.clone())
}

/// What a completion completes an argument of.
enum Target {
    Prompt(Prompt),
    Template(ResourceTemplate),
}

/// `context.arguments` of a completion request: strings only, within the prompt-argument limits.
fn context_arguments(context: Option<&Value>) -> Result<Vec<(String, String)>, RpcError> {
    let bad = |m: String| Err(RpcError::invalid_params(m));
    let arguments = match context.and_then(|c| c.get("arguments")) {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Object(m)) => m,
        Some(_) => return bad("context.arguments must be an object of strings".to_owned()),
    };
    if arguments.len() > MAX_PROMPT_ARGUMENTS {
        return bad(format!(
            "context.arguments holds at most {MAX_PROMPT_ARGUMENTS} entries"
        ));
    }
    let mut out = Vec::with_capacity(arguments.len());
    for (k, v) in arguments.iter() {
        match v {
            Value::String(s) if s.len() <= MAX_PROMPT_ARGUMENT_BYTES => {
                out.push((k.to_string(), s.to_string()))
            }
            _ => {
                return bad(format!(
                "context argument {} must be a string of at most {MAX_PROMPT_ARGUMENT_BYTES} bytes",
                uri::quote(k)
            ))
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cursor(c: &str) -> Map {
        let mut m = Map::new();
        m.insert("cursor", crate::json::parse(c.as_bytes()).unwrap());
        m
    }

    #[test]
    fn pages_and_cursors() {
        let items: Vec<usize> = (0..250).collect();
        let (first, next) = page(items.clone(), &Map::new()).unwrap();
        assert_eq!((first.len(), next.as_deref()), (PAGE_SIZE, Some("100")));
        let (last, next) = page(items.clone(), &cursor(r#""200""#)).unwrap();
        assert_eq!((last, next), ((200..250).collect(), None));
        let (empty, next) = page(items.clone(), &cursor(r#""250""#)).unwrap();
        assert!(empty.is_empty() && next.is_none());
        for bad in [
            r#""251""#,
            r#""""#,
            r#""-1""#,
            r#""1e2""#,
            "5",
            r#""99999999999999999999999""#,
            "{}",
        ] {
            assert!(page(items.clone(), &cursor(bad)).is_err(), "{bad}");
        }
    }
}
