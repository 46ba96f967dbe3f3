//! Which OAuth scopes a request needs: the scopes every request needs, plus those the
//! configuration maps to the tool, resource or prompt the request uses.
//!
//! A rule's name is exact, or ends in `*` to match every name that starts with the rest (`*`
//! alone matches all). Every rule that matches adds its scopes: rules only ever ask for more.
//! Methods that use one item are checked: `tools/call` (its `name`), `resources/read` and
//! `resources/subscribe` (`uri`), `prompts/get` (`name`), and `completion/complete` (the prompt or
//! resource its `ref` names). List methods need only the required scopes and list everything, so
//! that a client can see a tool exists and step up to the scope a call to it asks for.

use crate::json::Value;

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
    pub fn new(pattern: &str, scopes: Vec<String>) -> Result<ScopeRule, String> {
        let (name, prefix) = match pattern.strip_suffix('*') {
            Some(stem) => (stem, true),
            None => (pattern, false),
        };
        if name.contains('*') {
            return Err("* may only end a name (a prefix match)".into());
        }
        if name.is_empty() && !prefix {
            return Err("an empty name matches nothing".into());
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

/// The scope requirements of one server.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScopeRules {
    /// Needed by every request (and asked for in the 401 challenge).
    pub required: Vec<String>,
    pub tools: Vec<ScopeRule>,
    pub resources: Vec<ScopeRule>,
    pub prompts: Vec<ScopeRule>,
}

/// The item a request uses, by kind: which rule list applies, and the name or URI.
fn item_of<'a>(
    rules: &'a ScopeRules,
    method: &str,
    params: Option<&'a Value>,
) -> Option<(&'a [ScopeRule], &'a str)> {
    let field = |name: &str| params.and_then(|p| p.get(name)).and_then(Value::as_str);
    match method {
        "tools/call" => Some((&rules.tools, field("name")?)),
        "prompts/get" => Some((&rules.prompts, field("name")?)),
        "resources/read" | "resources/subscribe" => Some((&rules.resources, field("uri")?)),
        "completion/complete" => {
            let reference = params.and_then(|p| p.get("ref"))?;
            let text = |name: &str| reference.get(name).and_then(Value::as_str);
            match text("type")? {
                "ref/prompt" => Some((&rules.prompts, text("name")?)),
                "ref/resource" => Some((&rules.resources, text("uri")?)),
                _ => None,
            }
        }
        _ => None,
    }
}

impl ScopeRules {
    /// Adds `other`'s requirements to these (rules only ever ask for more, so the union is what
    /// both sources ask); at most `config::MAX_SCOPE_ENTRIES` scope entries in all.
    pub fn extend(&mut self, other: ScopeRules) -> Result<(), String> {
        let entries = |r: &ScopeRules| {
            r.required.len()
                + [&r.tools, &r.resources, &r.prompts]
                    .iter()
                    .flat_map(|rules| rules.iter())
                    .map(|rule| rule.scopes.len())
                    .sum::<usize>()
        };
        let limit = super::config::MAX_SCOPE_ENTRIES;
        if entries(self) + entries(&other) > limit {
            return Err(format!(
                "more than {limit} scope entries in the auth configuration and the policy file together"
            ));
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

    /// The scopes a request for `method` with `params` needs, in configuration order, each once.
    pub fn needed<'a>(&'a self, method: &str, params: Option<&'a Value>) -> Vec<&'a str> {
        let mut needed: Vec<&str> = self.required.iter().map(String::as_str).collect();
        if let Some((rules, item)) = item_of(self, method, params) {
            for rule in rules.iter().filter(|r| r.matches(item)) {
                for scope in &rule.scopes {
                    if !needed.contains(&scope.as_str()) {
                        needed.push(scope);
                    }
                }
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
    use crate::json;

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

    fn needed(method: &str, params: &str) -> Vec<String> {
        let params = json::parse(params.as_bytes()).unwrap();
        let rules = rules();
        rules
            .needed(method, Some(&params))
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
            needed("resources/read", r#"{"uri":"secret://a"}"#),
            ["mcp", "secrets"]
        );
        assert_eq!(
            needed("resources/subscribe", r#"{"uri":"secret://"}"#),
            ["mcp", "secrets"]
        );
        assert_eq!(needed("resources/read", r#"{"uri":"file:///a"}"#), ["mcp"]);
        assert_eq!(needed("prompts/get", r#"{"name":"x"}"#), ["mcp", "prompts"]);
        assert_eq!(
            needed(
                "completion/complete",
                r#"{"ref":{"type":"ref/prompt","name":"x"}}"#
            ),
            ["mcp", "prompts"]
        );
        assert_eq!(
            needed(
                "completion/complete",
                r#"{"ref":{"type":"ref/resource","uri":"secret://t/{x}"}}"#
            ),
            ["mcp", "secrets"]
        );
    }

    #[test]
    fn lists_and_malformed_params_need_the_required_scopes_only() {
        assert_eq!(needed("tools/list", "{}"), ["mcp"]);
        assert_eq!(needed("tools/call", r#"{"name":7}"#), ["mcp"]);
        assert_eq!(needed("tools/call", "[]"), ["mcp"]);
        assert_eq!(needed("completion/complete", r#"{"ref":"x"}"#), ["mcp"]);
        assert_eq!(rules().needed("tools/call", None), ["mcp"]);
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
        let needed = |r: &ScopeRules| {
            r.needed(
                "tools/call",
                Some(&crate::json::parse(br#"{"name":"git_log"}"#).unwrap()),
            )
            .into_iter()
            .map(str::to_owned)
            .collect::<Vec<_>>()
        };
        assert!(needed(&both).contains(&"history".to_owned()));
        let many = ScopeRules {
            required: (0..super::super::config::MAX_SCOPE_ENTRIES)
                .map(|i| format!("s{i}"))
                .collect(),
            ..ScopeRules::default()
        };
        let err = rules().extend(many).unwrap_err();
        assert!(err.contains("scope entries"), "{err}");
    }
}
