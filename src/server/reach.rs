//! What a request reaches: the declared items (tools, resources, templates, prompts) a method
//! uses, and the tools each of them reads through. It is the one input of every authorization
//! decision: the engine's governance (policy rules, permission mode, presets) decides on these
//! items and their tools, and the OAuth resource server (`crate::auth`) asks the scopes of the
//! same items and tools before the request runs. A resource or prompt that yields what a tool
//! reads is thus refused whenever the tool is, by whichever of the three refuses it.
//!
//! [`METHODS`] names every request method the engine answers with what it reaches; a method
//! missing from it reaches nothing and the engine answers it -32601. `tests/authorization.rs`
//! checks both directions (every method listed is served and decided; nothing unlisted is
//! served), so a new method cannot be added without a decision.
//!
//! Not for: deciding. This module only names what a request would use, from what the server
//! declares and what the request names; a name no declaration matches reaches the key alone (the
//! engine then answers "not found" without reading anything).

use super::resource::{Resource, ResourceSet, ResourceTemplate, MAX_SUBSCRIPTIONS_PER_SESSION};
use super::tool::ToolSet;
use super::uri::UriTemplate;
use crate::declared::Declared;
use crate::json::Value;

/// What a method reaches, by the kind of thing its params name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reads {
    /// Nothing of the repository or index: the lifecycle, ping, logging, unsubscribing.
    Nothing,
    /// What the server declares (names, templates, descriptions), each entry shown only when the
    /// governance would allow its use; no content. Scopes: the required ones.
    Declarations,
    /// The tool `params.name`.
    Tool,
    /// The resource `params.uri` (a declared resource or a template's match).
    Resource,
    /// The prompt `params.name`.
    Prompt,
    /// The prompt or resource template `params.ref` names (completing an argument reveals what
    /// the item reads: refs, file names, document ids).
    Completion,
    /// Every URI of `params.notifications.resourceSubscriptions` (their update notifications).
    Subscriptions,
}

/// Every request method the engine serves, with what it reaches (notifications and responses
/// reach nothing).
pub const METHODS: [(&str, Reads); 15] = [
    ("initialize", Reads::Nothing),
    ("ping", Reads::Nothing),
    ("server/discover", Reads::Nothing),
    ("logging/setLevel", Reads::Nothing),
    ("resources/unsubscribe", Reads::Nothing),
    ("tools/list", Reads::Declarations),
    ("resources/list", Reads::Declarations),
    ("resources/templates/list", Reads::Declarations),
    ("prompts/list", Reads::Declarations),
    ("tools/call", Reads::Tool),
    ("resources/read", Reads::Resource),
    ("resources/subscribe", Reads::Resource),
    ("prompts/get", Reads::Prompt),
    ("completion/complete", Reads::Completion),
    ("subscriptions/listen", Reads::Subscriptions),
];

/// What `method` reaches ([`Reads::Nothing`] for a method the engine does not serve).
pub fn reads_of(method: &str) -> Reads {
    METHODS
        .iter()
        .find(|(name, _)| *name == method)
        .map_or(Reads::Nothing, |(_, reads)| *reads)
}

/// The kind of a reached item: which of an operator's rule lists names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Tool,
    Resource,
    Prompt,
}

/// One item a request uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reached {
    pub kind: Kind,
    /// What the request names: a tool's or prompt's name, a resource's URI (for a completion, the
    /// template's text).
    pub key: String,
    /// The tools whose reads the item yields: a tool itself, a resource's or prompt's declared
    /// tools (none when no declaration matches the key).
    pub through: Vec<String>,
}

/// What one request reaches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reach {
    pub reads: Reads,
    /// The items its params name (empty for [`Reads::Nothing`] and [`Reads::Declarations`], and
    /// when the params name none: the engine then refuses the request as invalid).
    pub items: Vec<Reached>,
}

/// A resource a URI names: a declared resource, or a template and the values it matched with.
pub(crate) enum Found {
    Resource(Resource),
    Template(ResourceTemplate, Vec<(String, String)>),
}

impl Found {
    pub(crate) fn item(&self) -> &dyn Declared {
        match self {
            Found::Resource(r) => r,
            Found::Template(t, _) => t,
        }
    }
}

/// What `uri` (already checked by [`super::uri::check_uri`]) names in `set`: a declared
/// resource's URI first, then the first template that matches; `Ok(None)` when none does, `Err`
/// with why a template refused the URI's values. The engine reads and decides, and the scopes are
/// asked, on this one lookup.
pub(crate) fn find_resource(set: &dyn ResourceSet, uri: &str) -> Result<Option<Found>, String> {
    if let Some(r) = set.resources().into_iter().find(|r| r.uri == uri) {
        return Ok(Some(Found::Resource(r)));
    }
    for template in set.templates() {
        let Ok(parsed) = UriTemplate::parse(&template.uri_template) else {
            continue;
        };
        if let Some(values) = parsed.matches(uri).map_err(|e| e.to_string())? {
            return Ok(Some(Found::Template(template, values)));
        }
    }
    Ok(None)
}

/// What a request for `method` with `params`, sent to a server serving `set`, reaches.
pub fn reach(set: &dyn ToolSet, method: &str, params: Option<&Value>) -> Reach {
    let reads = reads_of(method);
    let text = |value: Option<&Value>, name: &str| {
        value
            .and_then(|v| v.get(name))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let items = match reads {
        Reads::Nothing | Reads::Declarations => Vec::new(),
        Reads::Tool => text(params, "name").map_or_else(Vec::new, |name| {
            vec![Reached {
                kind: Kind::Tool,
                through: vec![name.clone()],
                key: name,
            }]
        }),
        Reads::Resource => {
            text(params, "uri").map_or_else(Vec::new, |uri| vec![resource(set, uri)])
        }
        Reads::Prompt => text(params, "name").map_or_else(Vec::new, |name| vec![prompt(set, name)]),
        Reads::Completion => {
            let reference = params.and_then(|p| p.get("ref"));
            match text(reference, "type").as_deref() {
                Some("ref/prompt") => text(reference, "name").map(|name| prompt(set, name)),
                Some("ref/resource") => text(reference, "uri").map(|uri| template(set, uri)),
                _ => None,
            }
            .into_iter()
            .collect()
        }
        Reads::Subscriptions => {
            let uris = params
                .and_then(|p| p.get("notifications"))
                .and_then(|n| n.get("resourceSubscriptions"))
                .and_then(Value::as_array);
            match uris {
                // Longer lists are refused by the engine before anything is read.
                Some(uris) if uris.len() <= MAX_SUBSCRIPTIONS_PER_SESSION => uris
                    .iter()
                    .filter_map(Value::as_str)
                    .map(|uri| resource(set, uri.to_owned()))
                    .collect(),
                _ => Vec::new(),
            }
        }
    };
    Reach { reads, items }
}

fn through(item: &dyn Declared) -> Vec<String> {
    item.declared_reads_through().to_vec()
}

fn resource(set: &dyn ToolSet, uri: String) -> Reached {
    let found = set.resource_set().and_then(|resources| {
        super::uri::check_uri(&uri).ok()?;
        find_resource(resources, &uri).ok().flatten()
    });
    Reached {
        kind: Kind::Resource,
        through: found.as_ref().map_or_else(Vec::new, |f| through(f.item())),
        key: uri,
    }
}

fn template(set: &dyn ToolSet, text: String) -> Reached {
    let found = set.resource_set().and_then(|resources| {
        resources
            .templates()
            .into_iter()
            .find(|t| t.uri_template == text)
    });
    Reached {
        kind: Kind::Resource,
        through: found.as_ref().map_or_else(Vec::new, |t| through(t)),
        key: text,
    }
}

fn prompt(set: &dyn ToolSet, name: String) -> Reached {
    let found = set
        .prompt_set()
        .and_then(|prompts| prompts.prompts().into_iter().find(|p| p.name == name));
    Reached {
        kind: Kind::Prompt,
        through: found.as_ref().map_or_else(Vec::new, |p| through(p)),
        key: name,
    }
}
