//! Which OAuth scopes a request needs: the scopes every request needs, plus those the
//! configuration maps to the items the request reaches and the tools they read through.
//!
//! A rule's name is exact, or ends in `*` to match every name that starts with the rest (`*`
//! alone matches all). Every rule that matches adds its scopes: rules only ever ask for more.
//! What a request reaches comes from the engine ([`crate::server::reach`]), the same input the
//! governance decides on: a tool call needs its tool's scopes; a resource read, subscription or
//! listen needs the resource rules matching each URI and the tool rules of the tools the
//! resource reads through; a prompt needs its prompt rules and its tools' rules; a completion
//! those of the prompt or template it completes. So `"tools": {"git_*": ["repo:read"]}` guards
//! every way to the repository, not only `tools/call`. List methods need only the required scopes
//! and list every declaration, so that a client can see an item exists and step up to the scope
//! a use of it asks for.

use crate::server::reach::{Kind, Reach};
use std::fmt;

/// The most scope entries (required scopes, and per tool, resource and prompt lists together),
/// of one configuration or of the configuration and the policy file together.
pub const MAX_SCOPE_ENTRIES: usize = 1024;

/// Scopes for the items whose names a rule matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScopeRule {
    /// The name, or the prefix when `prefix`.
    name: String,
    prefix: bool,
    pub scopes: Vec<String>,
}

impl ScopeRule {
    /// A rule for `pattern` (a name, or a prefix followed by `*`); the error says why a pattern
    /// is refused.
    pub fn new(pattern: &str, scopes: Vec<String>) -> Result<ScopeRule, ScopeError> {
        let (name, prefix) = match pattern.strip_suffix('*') {
            Some(stem) => (stem, true),
            None => (pattern, false),
        };
        if name.contains('*') {
            return Err(ScopeError::StarInside);
        }
        if name.is_empty() && !prefix {
            return Err(ScopeError::EmptyName);
        }
        Ok(ScopeRule {
            name: name.to_owned(),
            prefix,
            scopes,
        })
    }

    pub fn matches(&self, item: &str) -> bool {
        if self.prefix {
            item.starts_with(&self.name)
        } else {
            item == self.name
        }
    }
}

/// Why a scope rule, or a union of rules, was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScopeError {
    /// A `*` before the end of a name.
    StarInside,
    /// An empty name without `*`.
    EmptyName,
    /// More than [`MAX_SCOPE_ENTRIES`] scope entries from both sources together.
    TooManyEntries,
}

impl fmt::Display for ScopeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScopeError::StarInside => f.write_str("* may only end a name (a prefix match)"),
            ScopeError::EmptyName => f.write_str("an empty name matches nothing"),
            ScopeError::TooManyEntries => write!(
                f,
                "more than {MAX_SCOPE_ENTRIES} scope entries in the auth configuration and the policy file together"
            ),
        }
    }
}

impl std::error::Error for ScopeError {}

/// The scope requirements of one server.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScopeRules {
    /// Needed by every request (and asked for in the 401 challenge).
    pub required: Vec<String>,
    pub tools: Vec<ScopeRule>,
    pub resources: Vec<ScopeRule>,
    pub prompts: Vec<ScopeRule>,
}

impl ScopeRules {
    /// Adds `other`'s requirements to these (rules only ever ask for more, so the union is what
    /// both sources ask); at most [`MAX_SCOPE_ENTRIES`] scope entries in all.
    pub fn extend(&mut self, other: ScopeRules) -> Result<(), ScopeError> {
        let entries = |r: &ScopeRules| {
            r.required.len()
                + [&r.tools, &r.resources, &r.prompts]
                    .iter()
                    .flat_map(|rules| rules.iter())
                    .map(|rule| rule.scopes.len())
                    .sum::<usize>()
        };
        if entries(self) + entries(&other) > MAX_SCOPE_ENTRIES {
            return Err(ScopeError::TooManyEntries);
        }
        for scope in other.required {
            if !self.required.contains(&scope) {
                self.required.push(scope);
            }
        }
        self.tools.extend(other.tools);
        self.resources.extend(other.resources);
        self.prompts.extend(other.prompts);
        Ok(())
    }

    /// The scopes a request that reaches `reach` needs, in configuration order, each once.
    pub fn needed<'a>(&'a self, reach: &Reach) -> Vec<&'a str> {
        let mut needed: Vec<&str> = self.required.iter().map(String::as_str).collect();
        let mut add = |rules: &'a [ScopeRule], name: &str| {
            for rule in rules.iter().filter(|r| r.matches(name)) {
                for scope in &rule.scopes {
                    if !needed.contains(&scope.as_str()) {
                        needed.push(scope);
                    }
                }
            }
        };
        for item in &reach.items {
            let own = match item.kind {
                Kind::Tool => &self.tools,
                Kind::Resource => &self.resources,
                Kind::Prompt => &self.prompts,
            };
            add(own, &item.key);
            for tool in &item.through {
                add(&self.tools, tool);
            }
        }
        needed
    }

    /// Every scope the configuration names: the metadata's `scopes_supported`.
    pub fn all(&self) -> Vec<String> {
        let mut all: Vec<String> = Vec::new();
        let mapped = self
            .tools
            .iter()
            .chain(&self.resources)
            .chain(&self.prompts)
            .flat_map(|r| r.scopes.iter());
        for scope in self.required.iter().chain(mapped) {
            if !all.contains(scope) {
                all.push(scope.clone());
            }
        }
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{self, Map};
    use crate::server::{
        reach, CallContext, Prompt, PromptOutput, PromptSet, ReadRequest, RequestError,
        ResourceContents, ResourceSet, ResourceTemplate, Tool, ToolError, ToolOutput, ToolSet,
    };

    fn rules() -> ScopeRules {
        let rule = |name: &str, scopes: &[&str]| {
            ScopeRule::new(name, scopes.iter().map(|s| s.to_string()).collect()).unwrap()
        };
        ScopeRules {
            required: vec!["mcp".into()],
            tools: vec![
                rule("git_*", &["repo"]),
                rule("git_log", &["history", "repo"]),
            ],
            resources: vec![rule("secret://*", &["secrets"])],
            prompts: vec![rule("*", &["prompts"])],
        }
    }

    /// A server whose template `secret://t/{x}` reads through `git_log` and whose prompt `pr`
    /// reads through `git_show`; `other` reads through nothing.
    struct Fixture;
    impl ToolSet for Fixture {
        fn server_name(&self) -> &str {
            "fixture"
        }
        fn tools(&self) -> Vec<Tool> {
            Vec::new()
        }
        fn call(&self, _: &str, _: &Map, _: &CallContext<'_>) -> Result<ToolOutput, ToolError> {
            Err(ToolError::new("no tools"))
        }
        fn resource_set(&self) -> Option<&dyn ResourceSet> {
            Some(self)
        }
        fn prompt_set(&self) -> Option<&dyn PromptSet> {
            Some(self)
        }
    }
    impl ResourceSet for Fixture {
        fn resources(&self) -> Vec<crate::server::Resource> {
            Vec::new()
        }
        fn templates(&self) -> Vec<ResourceTemplate> {
            vec![
                ResourceTemplate::new("secret://t/{x}", "t").reads_through("git_log"),
                ResourceTemplate::new("file:///{x}", "f"),
            ]
        }
        fn read(
            &self,
            _: &ReadRequest<'_>,
            _: &CallContext<'_>,
        ) -> Result<Vec<ResourceContents>, RequestError> {
            Ok(Vec::new())
        }
    }
    impl PromptSet for Fixture {
        fn prompts(&self) -> Vec<Prompt> {
            vec![
                Prompt::new("pr", "p").reads_through("git_show"),
                Prompt::new("other", "o"),
            ]
        }
        fn get(
            &self,
            _: &str,
            _: &[(String, String)],
            _: &CallContext<'_>,
        ) -> Result<PromptOutput, RequestError> {
            Err(RequestError::invalid("no"))
        }
    }

    fn needed(method: &str, params: &str) -> Vec<String> {
        let params = json::parse(params.as_bytes()).unwrap();
        let reach = reach::reach(&Fixture, method, Some(&params));
        rules()
            .needed(&reach)
            .into_iter()
            .map(str::to_owned)
            .collect()
    }

    #[test]
    fn every_matching_rule_adds_its_scopes_once() {
        assert_eq!(
            needed("tools/call", r#"{"name":"git_log"}"#),
            ["mcp", "repo", "history"]
        );
        assert_eq!(
            needed("tools/call", r#"{"name":"git_show"}"#),
            ["mcp", "repo"]
        );
        assert_eq!(needed("tools/call", r#"{"name":"gi"}"#), ["mcp"]);
        assert_eq!(
            needed("resources/subscribe", r#"{"uri":"secret://"}"#),
            ["mcp", "secrets"]
        );
        assert_eq!(needed("resources/read", r#"{"uri":"file:///a"}"#), ["mcp"]);
        assert_eq!(
            needed("prompts/get", r#"{"name":"other"}"#),
            ["mcp", "prompts"]
        );
    }

    #[test]
    fn items_need_the_scopes_of_the_tools_they_read_through() {
        let history = ["mcp", "secrets", "repo", "history"];
        assert_eq!(
            needed("resources/read", r#"{"uri":"secret://t/a"}"#),
            history
        );
        assert_eq!(
            needed("resources/subscribe", r#"{"uri":"secret://t/a"}"#),
            history
        );
        assert_eq!(
            needed("prompts/get", r#"{"name":"pr"}"#),
            ["mcp", "prompts", "repo"]
        );
        assert_eq!(
            needed(
                "completion/complete",
                r#"{"ref":{"type":"ref/prompt","name":"pr"}}"#
            ),
            ["mcp", "prompts", "repo"]
        );
        assert_eq!(
            needed(
                "completion/complete",
                r#"{"ref":{"type":"ref/resource","uri":"secret://t/{x}"}}"#
            ),
            history
        );
        // A listen needs what every URI it names needs.
        assert_eq!(
            needed(
                "subscriptions/listen",
                r#"{"notifications":{"resourceSubscriptions":["file:///a","secret://t/b"]}}"#
            ),
            history
        );
    }

    #[test]
    fn lists_and_malformed_params_need_the_required_scopes_only() {
        assert_eq!(needed("tools/list", "{}"), ["mcp"]);
        assert_eq!(needed("resources/templates/list", "{}"), ["mcp"]);
        assert_eq!(needed("tools/call", r#"{"name":7}"#), ["mcp"]);
        assert_eq!(needed("tools/call", "[]"), ["mcp"]);
        assert_eq!(needed("completion/complete", r#"{"ref":"x"}"#), ["mcp"]);
        let none = reach::reach(&Fixture, "tools/call", None);
        assert_eq!(rules().needed(&none), ["mcp"]);
    }

    #[test]
    fn all_scopes_are_listed_once_and_patterns_are_checked() {
        assert_eq!(
            rules().all(),
            ["mcp", "repo", "history", "secrets", "prompts"]
        );
        assert!(ScopeRule::new("a*b", vec![]).is_err());
        assert!(ScopeRule::new("", vec![]).is_err());
        assert!(ScopeRule::new("*", vec![]).unwrap().matches(""));
    }

    #[test]
    fn rules_from_two_sources_add_up_within_the_entry_bound() {
        let mut both = rules();
        let policy = ScopeRules {
            required: vec!["mcp".into(), "audit".into()],
            tools: vec![ScopeRule::new("git_log", vec!["history".into()]).unwrap()],
            ..ScopeRules::default()
        };
        both.extend(policy).unwrap();
        assert_eq!(both.required, ["mcp", "audit"]);
        let call = json::parse(br#"{"name":"git_log"}"#).unwrap();
        let reach = reach::reach(&Fixture, "tools/call", Some(&call));
        assert!(both.needed(&reach).contains(&"history"));
        let many = ScopeRules {
            required: (0..MAX_SCOPE_ENTRIES).map(|i| format!("s{i}")).collect(),
            ..ScopeRules::default()
        };
        let err = rules().extend(many).unwrap_err();
        assert_eq!(err, ScopeError::TooManyEntries);
        assert!(err.to_string().contains("scope entries"), "{err}");
    }
}
