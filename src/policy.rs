//! Tool policy: which tools a client may see and call, decided from allow/deny glob rules.
//!
//! Rules come from the command line (`--allow-tool`, `--deny-tool`) and from a policy file; each
//! names a tool with a glob pattern (`*` any run of characters, `?` exactly one). A decision is made
//! only from what the *server* declares about a tool (its name and annotations): nothing a client
//! sends (hints, `_meta`, request ids) is an input, so nothing a client sends can grant a tool.
//!
//! The order of precedence, first match wins:
//! 1. a deny rule that matches the tool refuses it, whatever else matches (deny wins);
//! 2. a tool that may change something (annotation `destructive`, or not `read_only`) is allowed
//!    only by an allow rule naming it exactly, without wildcards; otherwise it is refused;
//! 3. a read-only tool is allowed by the first allow rule that matches it;
//! 4. when there are allow rules, the policy is an allowlist: a tool none of them matches is refused;
//! 5. with no allow rules, read-only tools are allowed.
//!
//! Every [`Decision`] names the rule that made it, so a refusal can tell the operator what to edit.
//!
//! Policy file (JSON, at most [`MAX_POLICY_FILE_BYTES`]):
//! ```json
//! {"comment": "free text", "allow": ["git_*", "recall_search"], "deny": ["git_blame"],
//!  "scopes": {"tools": {"git_*": ["repo:read"]}, "prompts": {"explain_commit": ["repo:read"]}}}
//! ```
//! Every key is optional; any other key is an error (a misspelt `"deny"` must not silently allow).
//! `scopes` maps tools, resources and prompts to the OAuth scopes a request for them needs; this
//! module only keeps it (an object), and the OAuth resource server (`auth`, `--auth-config`), which
//! owns that format, checks and applies it beside its own configuration's `scopes`.

use crate::declared::Annotations;
use crate::json;
use std::fmt;
use std::path::Path;

/// Longest pattern accepted, in characters (tool names are at most 64; 128 leaves room for globs).
pub const MAX_PATTERN_CHARS: usize = 128;
/// Most rules one policy holds (command line and file together).
pub const MAX_RULES: usize = 1024;
/// Largest policy file read.
pub const MAX_POLICY_FILE_BYTES: u64 = 1024 * 1024;

/// What a rule does to the tools it matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    Allow,
    Deny,
}

impl Effect {
    fn as_str(self) -> &'static str {
        match self {
            Effect::Allow => "allow",
            Effect::Deny => "deny",
        }
    }
}

/// Where a rule came from, for messages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// `--allow-tool` or `--deny-tool`.
    CommandLine,
    /// The policy file's `allow` or `deny` array, at this index.
    PolicyFile { index: usize },
}

/// A glob pattern over tool names: `*` matches any run of characters (also none), `?` exactly one,
/// every other character itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pattern {
    text: String,
    chars: Vec<char>,
}

impl Pattern {
    /// Parses `text`: 1 to [`MAX_PATTERN_CHARS`] characters of `A-Z a-z 0-9 _ . - /` and the
    /// wildcards `*` and `?` (the tool-name alphabet, so a typo like `git log` is an error, not a
    /// rule that silently matches nothing).
    pub fn parse(text: &str) -> Result<Pattern, PolicyError> {
        let count = text.chars().count();
        if count == 0 {
            return Err(PolicyError::new("pattern must not be empty"));
        }
        if count > MAX_PATTERN_CHARS {
            return Err(PolicyError::new(format!(
                "pattern is {count} characters long; the limit is {MAX_PATTERN_CHARS}"
            )));
        }
        if let Some((at, c)) = text.chars().enumerate().find(|(_, c)| !is_pattern_char(*c)) {
            return Err(PolicyError::new(format!(
                "pattern {text:?} has {c:?} at character {}; patterns use A-Z a-z 0-9 _ . - / and the wildcards * and ?",
                at + 1
            )));
        }
        let mut chars: Vec<char> = Vec::with_capacity(count);
        for c in text.chars() {
            // `**` means the same as `*`; collapsing keeps matching linear in practice.
            if !(c == '*' && chars.last() == Some(&'*')) {
                chars.push(c);
            }
        }
        Ok(Pattern {
            text: text.to_owned(),
            chars,
        })
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// True when the pattern has no wildcard, i.e. names exactly one tool.
    pub fn is_exact(&self) -> bool {
        !self.chars.iter().any(|&c| c == '*' || c == '?')
    }

    /// Whether `name` matches the whole pattern.
    ///
    /// Greedy matching that remembers only the last `*`: a mismatch retries from that star one
    /// character further on. Earlier stars never need revisiting (whatever they matched, the last
    /// star can absorb), so the cost is at most pattern length × name length, never exponential.
    pub fn matches(&self, name: &str) -> bool {
        let p = &self.chars;
        let s: Vec<char> = name.chars().collect();
        let (mut pi, mut si) = (0usize, 0usize);
        // (index in p just after the last star, index in s where that star's match ends)
        let mut last_star: Option<(usize, usize)> = None;
        while si < s.len() {
            match p.get(pi) {
                Some('*') => {
                    last_star = Some((pi + 1, si));
                    pi += 1;
                }
                Some(&c) if c == '?' || c == s[si] => {
                    pi += 1;
                    si += 1;
                }
                _ => match last_star {
                    Some((after_star, star_end)) => {
                        last_star = Some((after_star, star_end + 1));
                        pi = after_star;
                        si = star_end + 1;
                    }
                    None => return false,
                },
            }
        }
        p[pi..].iter().all(|&c| c == '*')
    }
}

fn is_pattern_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-' | '/' | '*' | '?')
}

/// One allow or deny rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    pub effect: Effect,
    pub pattern: Pattern,
    pub origin: Origin,
}

impl fmt::Display for Rule {
    /// `deny "git_*" (--deny-tool)` or `allow "git_log" (policy file allow[0])`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let effect = self.effect.as_str();
        write!(f, "{effect} {:?} ", self.pattern.as_str())?;
        match self.origin {
            Origin::CommandLine => write!(f, "(--{effect}-tool)"),
            Origin::PolicyFile { index } => write!(f, "(policy file {effect}[{index}])"),
        }
    }
}

/// Why a decision came out the way it did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reason {
    /// This rule matched and decided.
    Rule(Rule),
    /// No allow rules exist and the tool is read-only.
    DefaultReadOnly,
    /// Allow rules exist (an allowlist) and none matches the tool.
    NotAllowlisted,
    /// The tool may change something and no allow rule names it exactly. Holds the wildcard allow
    /// rule that matched it, if any, so the message can say why that rule was not enough.
    DestructiveNotNamed { wildcard_match: Option<Rule> },
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::Rule(rule) => write!(f, "rule {rule}"),
            Reason::DefaultReadOnly => {
                f.write_str("default rule: read-only tools are allowed when no allow rule is set")
            }
            Reason::NotAllowlisted => f.write_str(
                "default rule: with allow rules set, a tool no allow rule matches is refused",
            ),
            Reason::DestructiveNotNamed { wildcard_match } => {
                f.write_str("default rule: a tool that may change data needs an allow rule naming it exactly")?;
                if let Some(rule) = wildcard_match {
                    write!(f, " (wildcard rule {rule} is not enough)")?;
                }
                Ok(())
            }
        }
    }
}

/// The outcome of [`Policy::decide`]: allowed or not, and the rule that said so.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    pub allowed: bool,
    pub reason: Reason,
}

impl Decision {
    /// The message a refused call carries (JSON-RPC error -32001), naming the tool and the rule.
    pub fn refusal_message(&self, tool: &str) -> String {
        format!("tool {tool:?} is refused by policy: {}", self.reason)
    }
}

/// A set of allow and deny rules. The empty policy allows read-only tools and refuses any other.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Policy {
    rules: Vec<Rule>,
    /// The policy file's `scopes` object, for the OAuth resource server to read.
    oauth_scopes: Option<json::Value>,
}

impl Policy {
    pub fn new() -> Policy {
        Policy::default()
    }

    /// The policy file's `scopes` object (OAuth scopes per tool, resource and prompt), unchecked:
    /// the resource server reads it (`auth::config::policy_scopes`).
    pub fn oauth_scopes(&self) -> Option<&json::Value> {
        self.oauth_scopes.as_ref()
    }

    /// Adds a rule (from the command line unless `origin` says otherwise).
    pub fn add(
        &mut self,
        effect: Effect,
        pattern: &str,
        origin: Origin,
    ) -> Result<(), PolicyError> {
        if self.rules.len() >= MAX_RULES {
            return Err(PolicyError::new(format!(
                "too many rules; the limit is {MAX_RULES}"
            )));
        }
        let pattern = Pattern::parse(pattern)?;
        self.rules.push(Rule {
            effect,
            pattern,
            origin,
        });
        Ok(())
    }

    /// Adds `--allow-tool PATTERN`.
    pub fn allow(&mut self, pattern: &str) -> Result<(), PolicyError> {
        self.add(Effect::Allow, pattern, Origin::CommandLine)
            .map_err(|e| e.context("--allow-tool"))
    }

    /// Adds `--deny-tool PATTERN`.
    pub fn deny(&mut self, pattern: &str) -> Result<(), PolicyError> {
        self.add(Effect::Deny, pattern, Origin::CommandLine)
            .map_err(|e| e.context("--deny-tool"))
    }

    /// Adds the rules of a policy file's JSON text (see the module documentation for the format).
    pub fn add_json(&mut self, text: &[u8]) -> Result<(), PolicyError> {
        let value = json::parse(text)
            .map_err(|e| PolicyError::new(format!("policy file is not valid JSON: {e}")))?;
        let Some(object) = value.as_object() else {
            return Err(PolicyError::new(format!(
                "policy file must hold a JSON object, not {}",
                value.type_name()
            )));
        };
        let mut seen: Vec<&str> = Vec::new();
        for (key, value) in object.iter() {
            if seen.contains(&key.as_str()) {
                return Err(PolicyError::new(format!(
                    "policy file: key {key:?} appears twice"
                )));
            }
            seen.push(key);
            let effect = match key.as_str() {
                "allow" => Effect::Allow,
                "deny" => Effect::Deny,
                "comment" if value.as_str().is_some() => continue,
                "scopes" if value.as_object().is_some() => {
                    self.oauth_scopes = Some(value.clone());
                    continue;
                }
                "scopes" => {
                    return Err(PolicyError::new(
                        "policy file: \"scopes\" must be an object (tools, resources, prompts)",
                    ))
                }
                "comment" => {
                    return Err(PolicyError::new("policy file: \"comment\" must be a string"))
                }
                _ => {
                    return Err(PolicyError::new(format!(
                        "policy file: unknown key {key:?} (expected \"allow\", \"deny\", \"scopes\" or \"comment\")"
                    )))
                }
            };
            let Some(patterns) = value.as_array() else {
                return Err(PolicyError::new(format!(
                    "policy file: {key:?} must be an array of pattern strings, not {}",
                    value.type_name()
                )));
            };
            for (index, pattern) in patterns.iter().enumerate() {
                let field = format!("policy file {key}[{index}]");
                let Some(pattern) = pattern.as_str() else {
                    return Err(PolicyError::new(format!(
                        "{field} must be a string, not {}",
                        pattern.type_name()
                    )));
                };
                self.add(effect, pattern, Origin::PolicyFile { index })
                    .map_err(|e| e.context(&field))?;
            }
        }
        Ok(())
    }

    /// Reads a policy file (a regular file, never blocking on a FIFO; at most
    /// [`MAX_POLICY_FILE_BYTES`]) and adds its rules.
    pub fn add_file(&mut self, path: &Path) -> Result<(), PolicyError> {
        let fail = |why: String| PolicyError::new(format!("policy file {}: {why}", path.display()));
        let text = crate::regular_file::read_at_most(path, MAX_POLICY_FILE_BYTES)
            .map_err(|e| fail(e.to_string()))?
            .ok_or_else(|| {
                fail(format!(
                    "larger than the limit of {MAX_POLICY_FILE_BYTES} bytes"
                ))
            })?;
        self.add_json(&text)
    }

    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// Decides whether the tool `name`, with the annotations its server declares, may be listed
    /// and called.
    pub fn decide(&self, name: &str, annotations: &Annotations) -> Decision {
        let matching = |effect: Effect| {
            self.rules
                .iter()
                .filter(move |r| r.effect == effect && r.pattern.matches(name))
        };
        let decided = |allowed: bool, reason: Reason| Decision { allowed, reason };
        if let Some(rule) = matching(Effect::Deny).next() {
            return decided(false, Reason::Rule(rule.clone()));
        }
        if may_change_data(annotations) {
            return match matching(Effect::Allow).find(|r| r.pattern.is_exact()) {
                Some(rule) => decided(true, Reason::Rule(rule.clone())),
                None => decided(
                    false,
                    Reason::DestructiveNotNamed {
                        wildcard_match: matching(Effect::Allow).next().cloned(),
                    },
                ),
            };
        }
        if let Some(rule) = matching(Effect::Allow).next() {
            return decided(true, Reason::Rule(rule.clone()));
        }
        if self.rules.iter().any(|r| r.effect == Effect::Allow) {
            decided(false, Reason::NotAllowlisted)
        } else {
            decided(true, Reason::DefaultReadOnly)
        }
    }

    /// One line per rule, in order (for the audit log's `run_started` record and diagnostics).
    pub fn describe(&self) -> Vec<String> {
        self.rules.iter().map(Rule::to_string).collect()
    }
}

/// Whether a tool must be treated as able to change something. The MCP defaults are
/// `readOnlyHint: false` and `destructiveHint: true`, so anything not declared read-only counts.
pub fn may_change_data(annotations: &Annotations) -> bool {
    annotations.destructive || !annotations.read_only
}

/// A rule or policy file that cannot be used, with the field and the reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicyError {
    message: String,
}

impl PolicyError {
    fn new(message: impl Into<String>) -> PolicyError {
        PolicyError {
            message: message.into(),
        }
    }

    fn context(self, field: &str) -> PolicyError {
        PolicyError::new(format!("{field}: {}", self.message))
    }
}

impl fmt::Display for PolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for PolicyError {}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(pattern: &str, name: &str) -> bool {
        Pattern::parse(pattern).unwrap().matches(name)
    }

    #[test]
    fn glob_semantics() {
        assert!(matches("git_log", "git_log"));
        assert!(!matches("git_log", "git_logs"));
        assert!(!matches("git_log", "git_lo"));
        assert!(matches("*", ""));
        assert!(matches("*", "anything"));
        assert!(matches("git_*", "git_"));
        assert!(matches("git_*", "git_show"));
        assert!(!matches("git_*", "gitshow"));
        assert!(matches("*_search", "recall_search"));
        assert!(matches("g?t_*", "got_x"));
        assert!(!matches("g?t_*", "gt_x"));
        assert!(matches("???", "abc"));
        assert!(!matches("???", "ab"));
        assert!(!matches("???", "abcd"));
        assert!(matches("a*b*c", "aXXbYYc"));
        assert!(matches("a*b*c", "abc"));
        assert!(!matches("a*b*c", "aXXbYY"));
        assert!(matches("*a", "aaaa"));
        assert!(matches("a**b", "ab"));
        assert!(matches("*?", "x"));
        assert!(!matches("*?", ""));
        // Retry after a partial match past the star.
        assert!(matches("*ab", "aab"));
        assert!(matches("*aab", "aaab"));
    }

    #[test]
    fn glob_worst_case_is_not_exponential() {
        // Backtracking over every star would take ~ C(100, 20) steps here; the last-star matcher
        // takes at most 128 * 100.
        let pattern = format!("{}b", "a*".repeat(MAX_PATTERN_CHARS / 2 - 1));
        assert_eq!(pattern.chars().count(), MAX_PATTERN_CHARS - 1);
        let name = "a".repeat(100);
        assert!(!matches(&pattern, &name));
        assert!(matches(&pattern, &format!("{name}b")));
    }

    #[test]
    fn pattern_limits_and_alphabet() {
        assert!(Pattern::parse(&"a".repeat(MAX_PATTERN_CHARS)).is_ok());
        let err = Pattern::parse(&"a".repeat(MAX_PATTERN_CHARS + 1)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "pattern is 129 characters long; the limit is 128"
        );
        assert_eq!(
            Pattern::parse("").unwrap_err().to_string(),
            "pattern must not be empty"
        );
        let err = Pattern::parse("git log").unwrap_err().to_string();
        assert!(err.contains("' ' at character 4"), "{err}");
        assert!(Pattern::parse("[ab]").is_err());
        assert!(Pattern::parse("ns/tool.v1-x_?*").is_ok());
        assert!(Pattern::parse("git_log").unwrap().is_exact());
        assert!(!Pattern::parse("git_lo?").unwrap().is_exact());
    }

    #[test]
    fn rule_count_limit() {
        let mut p = Policy::new();
        for i in 0..MAX_RULES {
            p.deny(&format!("t{i}")).unwrap();
        }
        let err = p.allow("x").unwrap_err().to_string();
        assert_eq!(err, "--allow-tool: too many rules; the limit is 1024");
    }

    const DESTRUCTIVE: Annotations = Annotations {
        read_only: false,
        destructive: true,
        idempotent: false,
        open_world: false,
    };

    #[test]
    fn empty_policy_allows_read_only_and_refuses_the_rest() {
        let p = Policy::new();
        let d = p.decide("git_log", &Annotations::READ_ONLY);
        assert!(d.allowed);
        assert_eq!(d.reason, Reason::DefaultReadOnly);
        let d = p.decide("fs_write", &DESTRUCTIVE);
        assert!(!d.allowed);
        assert_eq!(
            d.refusal_message("fs_write"),
            "tool \"fs_write\" is refused by policy: default rule: a tool that may change data needs an allow rule naming it exactly"
        );
        // Not read-only but declared non-destructive (e.g. an additive write) still counts.
        let additive = Annotations {
            destructive: false,
            ..DESTRUCTIVE
        };
        assert!(!p.decide("fs_append", &additive).allowed);
    }

    #[test]
    fn deny_wins_over_any_allow() {
        let mut p = Policy::new();
        p.allow("git_blame").unwrap();
        p.allow("git_*").unwrap();
        p.deny("git_b*").unwrap();
        let d = p.decide("git_blame", &Annotations::READ_ONLY);
        assert!(!d.allowed);
        assert_eq!(
            d.refusal_message("git_blame"),
            "tool \"git_blame\" is refused by policy: rule deny \"git_b*\" (--deny-tool)"
        );
        let d = p.decide("git_log", &Annotations::READ_ONLY);
        assert!(d.allowed);
        assert_eq!(d.reason.to_string(), "rule allow \"git_*\" (--allow-tool)");
    }

    #[test]
    fn allow_rules_make_an_allowlist() {
        let mut p = Policy::new();
        p.allow("recall_*").unwrap();
        assert!(p.decide("recall_search", &Annotations::READ_ONLY).allowed);
        let d = p.decide("git_log", &Annotations::READ_ONLY);
        assert!(!d.allowed);
        assert_eq!(d.reason, Reason::NotAllowlisted);
    }

    #[test]
    fn destructive_tools_need_an_exact_allow_rule() {
        let mut p = Policy::new();
        p.allow("*").unwrap();
        let d = p.decide("fs_write", &DESTRUCTIVE);
        assert!(!d.allowed);
        assert!(d
            .reason
            .to_string()
            .ends_with("(wildcard rule allow \"*\" (--allow-tool) is not enough)"));
        p.allow("fs_write").unwrap();
        let d = p.decide("fs_write", &DESTRUCTIVE);
        assert!(d.allowed);
        assert_eq!(
            d.reason.to_string(),
            "rule allow \"fs_write\" (--allow-tool)"
        );
        p.deny("fs_*").unwrap();
        assert!(!p.decide("fs_write", &DESTRUCTIVE).allowed);
    }

    #[test]
    fn policy_file_rules_name_their_place() {
        let mut p = Policy::new();
        p.add_json(br#"{"comment": "ops", "allow": ["git_*"], "deny": ["x", "git_show"]}"#)
            .unwrap();
        let d = p.decide("git_show", &Annotations::READ_ONLY);
        assert_eq!(
            d.reason.to_string(),
            "rule deny \"git_show\" (policy file deny[1])"
        );
        assert_eq!(
            p.describe(),
            [
                "allow \"git_*\" (policy file allow[0])",
                "deny \"x\" (policy file deny[0])",
                "deny \"git_show\" (policy file deny[1])"
            ]
        );
    }

    #[test]
    fn policy_file_errors_name_the_field() {
        let err = |text: &str| {
            Policy::new()
                .add_json(text.as_bytes())
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            err(r#"{"denny": ["x"]}"#),
            "policy file: unknown key \"denny\" (expected \"allow\", \"deny\", \"scopes\" or \"comment\")"
        );
        assert_eq!(
            err(r#"{"scopes": ["s"]}"#),
            "policy file: \"scopes\" must be an object (tools, resources, prompts)"
        );
        let mut kept = Policy::new();
        kept.add_json(br#"{"scopes": {"tools": {"x": ["s"]}}}"#)
            .unwrap();
        assert_eq!(
            kept.oauth_scopes().map(json::to_string).as_deref(),
            Some(r#"{"tools":{"x":["s"]}}"#)
        );
        assert_eq!(
            err(r#"{"deny": "x"}"#),
            "policy file: \"deny\" must be an array of pattern strings, not string"
        );
        assert_eq!(
            err(r#"{"allow": ["ok", 3]}"#),
            "policy file allow[1] must be a string, not integer"
        );
        assert!(err(r#"{"allow": ["a b"]}"#).starts_with("policy file allow[0]: pattern \"a b\""));
        assert_eq!(err("[]"), "policy file must hold a JSON object, not array");
        assert!(err("{").starts_with("policy file is not valid JSON: "));
        assert_eq!(
            err(r#"{"deny": [], "deny": ["x"]}"#),
            "policy file: key \"deny\" appears twice"
        );
        assert_eq!(
            err(r#"{"comment": 1}"#),
            "policy file: \"comment\" must be a string"
        );
        assert!(Policy::new().add_json(b"{}").is_ok());
    }

    #[test]
    fn policy_file_size_limit() {
        let dir = std::env::temp_dir().join(format!("agentteams-policy-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("policy.json");
        // Exactly at the limit: a valid object padded with spaces.
        let mut text = br#"{"deny": ["x"]}"#.to_vec();
        text.resize(MAX_POLICY_FILE_BYTES as usize, b' ');
        std::fs::write(&path, &text).unwrap();
        let mut p = Policy::new();
        p.add_file(&path).unwrap();
        assert_eq!(p.rules().len(), 1);
        text.push(b' ');
        std::fs::write(&path, &text).unwrap();
        let err = Policy::new().add_file(&path).unwrap_err().to_string();
        assert!(
            err.ends_with("larger than the limit of 1048576 bytes"),
            "{err}"
        );
        let err = Policy::new()
            .add_file(&dir.join("missing.json"))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("policy file "), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
