//! The trust policy for MCP servers this project connects to: which of a server's tools may be
//! registered and called, decided per server from its trust level.
//!
//! - `trusted`: every tool.
//! - `verified`: only the tools on the server's allowlist.
//! - `untrusted` (every server not in the file): every tool except those whose name has a word
//!   matching a sensitive pattern (by default words that write, delete, execute, send or pay).
//!
//! A tool on a server's deny list is refused at every level. The policy lives in
//! `.agentteams/mcp-trust.json` under the project:
//!
//! ```json
//! {
//!  "servers": {
//!   "http://127.0.0.1:8080/mcp": {"level": "verified", "allow": ["search"], "deny": []},
//!   "stdio:agentteams-mcp --serve-mcp gitread": {"level": "trusted"}
//!  },
//!  "sensitive": ["write*", "delete*"],
//!  "version": 1
//! }
//! ```
//!
//! `sensitive` is optional and replaces [`DEFAULT_SENSITIVE`]. A pattern is a lowercase word, or
//! a word prefix ending in `*`; tool names split into words at `_ - . /`, spaces and
//! lower-to-upper case changes (`writeFile` → `write`, `file`).

use crate::http1::url::Url;
use crate::json::{self, Map, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Where the policy lives, relative to the project root.
pub const POLICY_PATH: &str = ".agentteams/mcp-trust.json";

/// Largest policy file read.
pub const MAX_POLICY_BYTES: u64 = 1024 * 1024;

/// Most servers one policy holds.
pub const MAX_SERVERS: usize = 1024;

/// Most names in one allow or deny list, and most sensitive patterns.
pub const MAX_NAMES: usize = 4096;

/// Longest tool name or pattern accepted.
pub const MAX_NAME_CHARS: usize = 128;

/// Tool-name words an untrusted server may not offer: writing, deleting, executing, sending and
/// paying, and their usual synonyms.
pub const DEFAULT_SENSITIVE: &[&str] = &[
    "write*",
    "overwrite*",
    "edit*",
    "delete*",
    "del",
    "remove*",
    "rm",
    "rmdir",
    "erase*",
    "destroy*",
    "drop*",
    "purge*",
    "truncate*",
    "exec*",
    "run",
    "shell*",
    "spawn*",
    "eval*",
    "command*",
    "cmd",
    "kill*",
    "send*",
    "email*",
    "mail*",
    "publish*",
    "pay",
    "pays",
    "payment*",
    "payout*",
    "purchase*",
    "buy*",
    "charge*",
    "transfer*",
    "withdraw*",
    "deploy*",
    "push*",
];

/// A policy file that cannot be used, or a bad edit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustError(pub String);

one_line_error!(TrustError);

/// How far a server is trusted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Trusted,
    Verified,
    Untrusted,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Trusted => "trusted",
            Level::Verified => "verified",
            Level::Untrusted => "untrusted",
        }
    }

    pub fn parse(text: &str) -> Option<Level> {
        match text {
            "trusted" => Some(Level::Trusted),
            "verified" => Some(Level::Verified),
            "untrusted" => Some(Level::Untrusted),
            _ => None,
        }
    }
}

/// The key a server is filed under: its canonical http(s) URL, or `stdio:` and its command line.
pub fn server_key_for_url(url: &str) -> Result<String, TrustError> {
    Url::parse_client(url)
        .map(|u| u.to_string())
        .map_err(|e| TrustError(e.to_string()))
}

/// The key of a server started as a child process.
pub fn server_key_for_command(argv: &[String]) -> String {
    format!("stdio:{}", argv.join(" "))
}

/// One server's entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerPolicy {
    pub level: Level,
    pub allow: Vec<String>,
    pub deny: Vec<String>,
}

impl Default for ServerPolicy {
    fn default() -> Self {
        ServerPolicy {
            level: Level::Untrusted,
            allow: Vec::new(),
            deny: Vec::new(),
        }
    }
}

/// Whether a tool may be used, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    pub allowed: bool,
    pub reason: String,
}

/// The whole policy.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Policy {
    pub servers: BTreeMap<String, ServerPolicy>,
    /// `None`: [`DEFAULT_SENSITIVE`].
    pub sensitive: Option<Vec<String>>,
}

/// The policy path under `root`, refused if `.agentteams` or the file itself (where they exist)
/// resolves through a link to a place outside the project: the policy is read and written only
/// inside the project it belongs to.
fn confined(root: &Path) -> Result<PathBuf, TrustError> {
    crate::project_file::confined(root, POLICY_PATH).map_err(|e| TrustError(e.to_string()))
}

impl Policy {
    /// The policy file of the project at `root`.
    pub fn path(root: &Path) -> PathBuf {
        root.join(POLICY_PATH)
    }

    /// Loads the project's policy; a missing file is the empty policy (every server untrusted).
    ///
    /// The file is the project's, so it is read as any other file a project holds: only if it is
    /// a regular file inside the project (a FIFO would block the command, a link to `/dev/zero`
    /// would fill memory), and at most [`MAX_POLICY_BYTES`] of it.
    pub fn load(root: &Path) -> Result<Policy, TrustError> {
        let path = confined(root)?;
        let bytes = match crate::regular_file::read_at_most(&path, MAX_POLICY_BYTES) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Policy::default()),
            Err(e) => return Err(TrustError(format!("cannot read {}: {e}", path.display()))),
            Ok(None) => {
                return Err(TrustError(format!(
                    "{} is larger than {MAX_POLICY_BYTES} bytes",
                    path.display()
                )))
            }
            Ok(Some(bytes)) => bytes,
        };
        Policy::parse(&bytes).map_err(|e| TrustError(format!("{}: {e}", path.display())))
    }

    /// Parses policy JSON. Unknown keys are errors: a misspelt `"deny"` must not silently allow.
    pub fn parse(bytes: &[u8]) -> Result<Policy, TrustError> {
        let value = json::parse(bytes).map_err(|e| TrustError(format!("invalid JSON: {e}")))?;
        let Value::Object(top) = value else {
            return Err(TrustError("the policy must be a JSON object".into()));
        };
        let mut policy = Policy::default();
        for (key, value) in top.iter() {
            match key.as_str() {
                "version" if value.as_u64() == Some(1) => {}
                "version" => return Err(TrustError("\"version\" must be 1".into())),
                "sensitive" => policy.sensitive = Some(names(value, "sensitive", true)?),
                "servers" => {
                    let Value::Object(servers) = value else {
                        return Err(TrustError("\"servers\" must be an object".into()));
                    };
                    if servers.len() > MAX_SERVERS {
                        return Err(TrustError(format!(
                            "\"servers\" holds more than {MAX_SERVERS} entries"
                        )));
                    }
                    for (server, entry) in servers.iter() {
                        let parsed = server_entry(entry)
                            .map_err(|e| TrustError(format!("servers[{server:?}]: {e}")))?;
                        policy.servers.insert(server.to_string(), parsed);
                    }
                }
                other => {
                    return Err(TrustError(format!(
                        "unknown key {other:?}; expected version, servers, sensitive"
                    )))
                }
            }
        }
        Ok(policy)
    }

    /// The policy as pretty JSON (sorted keys), as [`Policy::save`] writes it.
    pub fn to_json(&self) -> String {
        let mut servers = Map::new();
        for (key, entry) in &self.servers {
            let list =
                |v: &[String]| Value::Array(v.iter().map(|s| Value::from(s.as_str())).collect());
            let mut m = Map::new();
            m.insert("level", Value::from(entry.level.as_str()));
            m.insert("allow", list(&entry.allow));
            m.insert("deny", list(&entry.deny));
            servers.insert(key.clone(), Value::Object(m));
        }
        let mut top = Map::new();
        top.insert("version", Value::from(1u64));
        top.insert("servers", Value::Object(servers));
        if let Some(s) = &self.sensitive {
            top.insert(
                "sensitive",
                Value::Array(s.iter().map(|p| Value::from(p.as_str())).collect()),
            );
        }
        let mut text = json::to_pretty_ascii_sorted(&Value::Object(top));
        text.push('\n');
        text
    }

    /// Writes the policy under `root` (creating `.agentteams/`), replacing the file atomically.
    ///
    /// Never through a link the project planted: `.agentteams` must stay inside the project, and
    /// the temporary file is unlinked and then created exclusively (`O_EXCL` does not follow a
    /// link), so a planted `mcp-trust.json.tmp<pid>` → `~/.bashrc` cannot redirect the write. A
    /// link at the policy's own name is replaced by the rename, not followed.
    pub fn save(&self, root: &Path) -> Result<(), TrustError> {
        let path = Policy::path(root);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| TrustError(format!("cannot write {}: {e}", path.display())))?;
        }
        let path = confined(root)?;
        crate::project_file::replace(&path, self.to_json().as_bytes(), None, MAX_POLICY_BYTES)
            .map_err(|e| TrustError(format!("cannot write {e}")))
    }

    /// The sensitive patterns in force.
    pub fn sensitive_patterns(&self) -> Vec<String> {
        match &self.sensitive {
            Some(s) => s.clone(),
            None => DEFAULT_SENSITIVE.iter().map(|s| (*s).to_owned()).collect(),
        }
    }

    /// The entry of `server`, or the untrusted default.
    pub fn server(&self, server: &str) -> ServerPolicy {
        self.servers.get(server).cloned().unwrap_or_default()
    }

    /// Whether `tool` of `server` may be registered and called.
    pub fn decide(&self, server: &str, tool: &str) -> Decision {
        let entry = self.server(server);
        let refused = |reason: String| Decision {
            allowed: false,
            reason,
        };
        let allowed = |reason: String| Decision {
            allowed: true,
            reason,
        };
        if entry.deny.iter().any(|d| d == tool) {
            return refused("on this server's deny list".into());
        }
        match entry.level {
            Level::Trusted => allowed("server is trusted".into()),
            Level::Verified if entry.allow.iter().any(|a| a == tool) => {
                allowed("on this verified server's allowlist".into())
            }
            Level::Verified => refused("server is verified and the tool is not on its allowlist".into()),
            Level::Untrusted => match sensitive_match(tool, &self.sensitive_patterns()) {
                Some((word, pattern)) => refused(format!(
                    "server is untrusted and the name's word {word:?} matches the sensitive pattern {pattern:?}"
                )),
                None => allowed("server is untrusted; the name matches no sensitive pattern".into()),
            },
        }
    }

    /// Sets the level of `server`. `tools` (for `allow`) are added to the allowlist and taken off
    /// the deny list; allowing named tools makes an untrusted server verified.
    pub fn allow(
        &mut self,
        server: &str,
        level: Option<Level>,
        tools: &[String],
    ) -> Result<(), TrustError> {
        check_names(tools)?;
        let entry = self.entry(server)?;
        for t in tools {
            entry.deny.retain(|d| d != t);
            if !entry.allow.contains(t) {
                entry.allow.push(t.clone());
            }
        }
        entry.level = match (level, tools.is_empty()) {
            (Some(l), _) => l,
            (None, true) => Level::Trusted,
            (None, false) if entry.level == Level::Untrusted => Level::Verified,
            (None, false) => entry.level,
        };
        Ok(())
    }

    /// With `tools`, puts them on the deny list (and off the allowlist); without, makes the server
    /// untrusted and clears its allowlist.
    pub fn deny(&mut self, server: &str, tools: &[String]) -> Result<(), TrustError> {
        check_names(tools)?;
        let entry = self.entry(server)?;
        if tools.is_empty() {
            entry.level = Level::Untrusted;
            entry.allow.clear();
        }
        for t in tools {
            entry.allow.retain(|a| a != t);
            if !entry.deny.contains(t) {
                entry.deny.push(t.clone());
            }
        }
        Ok(())
    }

    /// With `tools`, removes them from both lists; without, forgets the server (back to the
    /// untrusted default). Errors when there was nothing to revoke.
    pub fn revoke(&mut self, server: &str, tools: &[String]) -> Result<(), TrustError> {
        if tools.is_empty() {
            return match self.servers.remove(server) {
                Some(_) => Ok(()),
                None => Err(TrustError(format!("no policy entry for {server}"))),
            };
        }
        let Some(entry) = self.servers.get_mut(server) else {
            return Err(TrustError(format!("no policy entry for {server}")));
        };
        for t in tools {
            let before = entry.allow.len() + entry.deny.len();
            entry.allow.retain(|a| a != t);
            entry.deny.retain(|d| d != t);
            if entry.allow.len() + entry.deny.len() == before {
                return Err(TrustError(format!("{t} is on neither list of {server}")));
            }
        }
        Ok(())
    }

    /// Findings worth an operator's attention, one line each (empty when there are none).
    pub fn audit(&self) -> Vec<String> {
        let patterns = self.sensitive_patterns();
        let mut findings = Vec::new();
        if patterns.is_empty() {
            findings.push("no sensitive patterns: untrusted servers may offer any tool".into());
        }
        for (server, entry) in &self.servers {
            match entry.level {
                Level::Trusted => findings.push(format!(
                    "{server}: trusted, so every tool it offers is allowed, including ones that write, delete, execute, send or pay"
                )),
                Level::Verified if entry.allow.is_empty() => findings.push(format!(
                    "{server}: verified with an empty allowlist, so no tool is allowed"
                )),
                _ => {}
            }
            for t in &entry.allow {
                if let Some((_, pattern)) = sensitive_match(t, &patterns) {
                    findings.push(format!(
                        "{server}: allowlisted tool {t} matches the sensitive pattern {pattern:?}"
                    ));
                }
            }
            if entry.level == Level::Untrusted && !entry.allow.is_empty() {
                findings.push(format!(
                    "{server}: untrusted, so its allowlist ({}) has no effect",
                    entry.allow.join(", ")
                ));
            }
        }
        findings
    }

    fn entry(&mut self, server: &str) -> Result<&mut ServerPolicy, TrustError> {
        if !self.servers.contains_key(server) && self.servers.len() >= MAX_SERVERS {
            return Err(TrustError(format!(
                "the policy already holds {MAX_SERVERS} servers"
            )));
        }
        Ok(self.servers.entry(server.to_owned()).or_default())
    }
}

fn server_entry(value: &Value) -> Result<ServerPolicy, TrustError> {
    let Value::Object(m) = value else {
        return Err(TrustError("must be an object".into()));
    };
    let mut entry = ServerPolicy::default();
    for (key, v) in m.iter() {
        match key.as_str() {
            "level" => {
                entry.level = v.as_str().and_then(Level::parse).ok_or_else(|| {
                    TrustError(
                        "\"level\" must be \"trusted\", \"verified\" or \"untrusted\"".into(),
                    )
                })?
            }
            "allow" => entry.allow = names(v, "allow", false)?,
            "deny" => entry.deny = names(v, "deny", false)?,
            other => {
                return Err(TrustError(format!(
                    "unknown key {other:?}; expected level, allow, deny"
                )))
            }
        }
    }
    Ok(entry)
}

fn names(value: &Value, field: &str, patterns: bool) -> Result<Vec<String>, TrustError> {
    let Value::Array(items) = value else {
        return Err(TrustError(format!("{field:?} must be an array of strings")));
    };
    if items.len() > MAX_NAMES {
        return Err(TrustError(format!(
            "{field:?} holds more than {MAX_NAMES} entries"
        )));
    }
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let Some(s) = item.as_str() else {
            return Err(TrustError(format!("{field}[{i}] must be a string")));
        };
        if patterns {
            check_pattern(s).map_err(|e| TrustError(format!("{field}[{i}]: {e}")))?;
        } else {
            check_names(std::slice::from_ref(&s.to_owned()))
                .map_err(|e| TrustError(format!("{field}[{i}]: {e}")))?;
        }
        out.push(s.to_owned());
    }
    Ok(out)
}

fn check_names(tools: &[String]) -> Result<(), TrustError> {
    for t in tools {
        if t.is_empty() || t.chars().count() > MAX_NAME_CHARS || t.chars().any(char::is_control) {
            return Err(TrustError(format!(
                "tool name {t:?} must be 1 to {MAX_NAME_CHARS} characters without control characters"
            )));
        }
    }
    Ok(())
}

fn check_pattern(p: &str) -> Result<(), TrustError> {
    let word = p.strip_suffix('*').unwrap_or(p);
    if word.is_empty()
        || word.len() > MAX_NAME_CHARS
        || !word
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
    {
        return Err(TrustError(format!(
            "sensitive pattern {p:?} must be a lowercase word of letters and digits, optionally ending in *"
        )));
    }
    Ok(())
}

/// The words of a tool name, lowercased: split at `_ - . /`, spaces, and lower-to-upper changes.
pub fn name_words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if !c.is_alphanumeric() {
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower && !word.is_empty() {
            words.push(std::mem::take(&mut word));
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        word.extend(c.to_lowercase());
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// The first word of `tool` matching one of `patterns`, with that pattern.
pub fn sensitive_match(tool: &str, patterns: &[String]) -> Option<(String, String)> {
    let words = name_words(tool);
    for word in &words {
        for p in patterns {
            let hit = match p.strip_suffix('*') {
                Some(prefix) => word.starts_with(prefix),
                None => word == p,
            };
            if hit {
                return Some((word.clone(), p.clone()));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| (*x).to_owned()).collect()
    }

    #[test]
    fn names_split_into_words() {
        assert_eq!(name_words("git_log"), ["git", "log"]);
        assert_eq!(name_words("writeFile"), ["write", "file"]);
        assert_eq!(
            name_words("HTTPRequest-send.v2"),
            ["httprequest", "send", "v2"]
        );
        assert_eq!(name_words("__"), Vec::<String>::new());
    }

    #[test]
    fn untrusted_servers_lose_sensitive_tools_only() {
        let p = Policy::default();
        for tool in [
            "write_file",
            "deleteRepo",
            "run",
            "exec_command",
            "send_email",
            "pay_invoice",
            "git_push",
        ] {
            let d = p.decide("http://x:80/", tool);
            assert!(!d.allowed, "{tool}");
            assert!(d.reason.contains("sensitive pattern"), "{}", d.reason);
        }
        for tool in [
            "git_log",
            "query_index",
            "display",
            "runtime_info",
            "prune_list",
        ] {
            let d = p.decide("http://x:80/", tool);
            assert!(d.allowed, "{tool}: {}", d.reason);
        }
    }

    #[test]
    fn levels_allow_and_deny_lists() {
        let mut p = Policy::default();
        let key = "stdio:srv";
        p.allow(key, None, &s(&["search", "write_note"])).unwrap();
        assert_eq!(p.server(key).level, Level::Verified);
        assert!(p.decide(key, "write_note").allowed);
        assert!(!p.decide(key, "other").allowed);
        p.allow(key, None, &[]).unwrap();
        assert_eq!(p.server(key).level, Level::Trusted);
        assert!(p.decide(key, "rm").allowed);
        p.deny(key, &s(&["rm"])).unwrap();
        let d = p.decide(key, "rm");
        assert!(!d.allowed && d.reason.contains("deny list"));
        p.revoke(key, &s(&["rm"])).unwrap();
        assert!(p.decide(key, "rm").allowed);
        assert!(p.revoke(key, &s(&["rm"])).is_err());
        p.deny(key, &[]).unwrap();
        assert_eq!(p.server(key).level, Level::Untrusted);
        assert!(p.server(key).allow.is_empty());
        p.revoke(key, &[]).unwrap();
        assert!(p.servers.is_empty());
        assert!(p.revoke(key, &[]).is_err());
    }

    #[test]
    fn file_round_trips_and_rejects_unknown_keys() {
        let mut p = Policy::default();
        p.allow(
            "http://127.0.0.1:8080/mcp",
            Some(Level::Verified),
            &s(&["search"]),
        )
        .unwrap();
        p.sensitive = Some(s(&["nuke*"]));
        let text = p.to_json();
        assert_eq!(Policy::parse(text.as_bytes()).unwrap(), p);
        assert!(!p.decide("other", "nuke_it").allowed);
        assert!(p.decide("other", "write_file").allowed);
        for (bad, why) in [
            (
                r#"{"servers":{"a":{"level":"trusted","denny":[]}}}"#,
                "unknown key \"denny\"",
            ),
            (r#"{"server":{}}"#, "unknown key \"server\""),
            (r#"{"servers":{"a":{"level":"root"}}}"#, "\"level\" must be"),
            (r#"{"sensitive":["Write"]}"#, "lowercase word"),
            (
                r#"{"servers":{"a":{"allow":[1]}}}"#,
                "allow[0] must be a string",
            ),
            (r#"{"version":2}"#, "\"version\" must be 1"),
            ("[]", "must be a JSON object"),
        ] {
            let e = Policy::parse(bad.as_bytes()).unwrap_err().0;
            assert!(e.contains(why), "{bad}: {e}");
        }
    }

    #[test]
    fn save_never_writes_through_a_planted_temporary_link() {
        let root = std::env::temp_dir().join(format!("trust-unit-tmp-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join(".agentteams")).unwrap();
        let victim = root.join("victim");
        std::fs::write(&victim, "precious").unwrap();
        // The temporary name is predictable (it carries the pid): a project can plant it.
        let tmp = Policy::path(&root).with_extension(format!("json.tmp{}", std::process::id()));
        std::os::unix::fs::symlink(&victim, &tmp).unwrap();
        let mut p = Policy::default();
        p.allow("stdio:x", None, &[]).unwrap();
        p.save(&root).unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert_eq!(Policy::load(&root).unwrap(), p);
        assert!(std::fs::symlink_metadata(&tmp).is_err());
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn save_and_load_under_a_project() {
        let root = std::env::temp_dir().join(format!("trust-unit-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        assert_eq!(Policy::load(&root).unwrap(), Policy::default());
        let mut p = Policy::default();
        p.allow("stdio:x", None, &[]).unwrap();
        p.save(&root).unwrap();
        assert_eq!(Policy::load(&root).unwrap(), p);
        std::fs::write(Policy::path(&root), b"{").unwrap();
        assert!(Policy::load(&root).unwrap_err().0.contains("invalid JSON"));
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn audit_names_the_risky_entries() {
        let mut p = Policy::default();
        p.allow("a", None, &[]).unwrap();
        p.allow("b", Some(Level::Verified), &[]).unwrap();
        p.allow("c", Some(Level::Verified), &s(&["send_mail"]))
            .unwrap();
        let findings = p.audit().join("\n");
        assert!(findings.contains("a: trusted"), "{findings}");
        assert!(
            findings.contains("b: verified with an empty allowlist"),
            "{findings}"
        );
        assert!(
            findings.contains("c: allowlisted tool send_mail matches"),
            "{findings}"
        );
        assert!(Policy::default().audit().is_empty());
    }

    #[test]
    fn keys_are_canonical() {
        assert_eq!(
            server_key_for_url("http://LOCALHOST:8080/mcp").unwrap(),
            "http://localhost:8080/mcp"
        );
        assert_eq!(server_key_for_url("http://h/").unwrap(), "http://h:80/");
        assert_eq!(
            server_key_for_command(&s(&["agentteams-mcp", "--serve-mcp", "gitread"])),
            "stdio:agentteams-mcp --serve-mcp gitread"
        );
    }
}
