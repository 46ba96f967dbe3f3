//! The token store: a JSON file readable by its owner alone (created 0600 in a 0700 folder),
//! holding one entry per MCP server and authorization server (the client registration and the
//! tokens issued to it). Tokens are never printed; `Debug` shows them redacted.

use crate::json::{self, Map, Value};
use std::fmt;
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Largest token store read (a file larger than this is refused, not truncated).
pub const MAX_STORE_BYTES: usize = 1024 * 1024;

/// Most entries kept; past it the least recently saved is dropped.
pub const MAX_STORE_ENTRIES: usize = 256;

/// The environment variable that moves the store (the command's `--token-store` wins over it).
pub const STORE_ENV: &str = "AGENTTEAMS_MCP_TOKEN_STORE";

/// One login: the server it is for, who issued it, the client registration and the tokens.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Entry {
    /// The MCP server URL, canonical.
    pub server: String,
    pub issuer: String,
    pub token_endpoint: String,
    /// The `resource` the token was asked for.
    pub resource: Option<String>,
    pub client_id: String,
    pub client_secret: Option<String>,
    /// How the client authenticates at the token endpoint.
    pub auth_method: String,
    pub access_token: String,
    pub refresh_token: Option<String>,
    /// Seconds since the Unix epoch.
    pub expires_at: Option<u64>,
    pub scope: Option<String>,
}

impl fmt::Debug for Entry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Entry")
            .field("server", &self.server)
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "[redacted]"),
            )
            .field("access_token", &"[redacted]")
            .field(
                "refresh_token",
                &self.refresh_token.as_ref().map(|_| "[redacted]"),
            )
            .field("expires_at", &self.expires_at)
            .field("scope", &self.scope)
            .finish()
    }
}

impl Entry {
    fn to_json(&self) -> Value {
        let mut m = Map::new();
        let mut put = |k: &str, v: Option<&String>| {
            if let Some(v) = v {
                m.insert(k, Value::from(v.as_str()));
            }
        };
        put("server", Some(&self.server));
        put("issuer", Some(&self.issuer));
        put("token_endpoint", Some(&self.token_endpoint));
        put("resource", self.resource.as_ref());
        put("client_id", Some(&self.client_id));
        put("client_secret", self.client_secret.as_ref());
        put("auth_method", Some(&self.auth_method));
        put("access_token", Some(&self.access_token));
        put("refresh_token", self.refresh_token.as_ref());
        put("scope", self.scope.as_ref());
        if let Some(t) = self.expires_at {
            m.insert("expires_at", Value::from(t));
        }
        Value::Object(m)
    }

    fn from_json(v: &Value) -> Option<Entry> {
        let s = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
        Some(Entry {
            server: s("server")?,
            issuer: s("issuer")?,
            token_endpoint: s("token_endpoint")?,
            resource: s("resource"),
            client_id: s("client_id")?,
            client_secret: s("client_secret"),
            auth_method: s("auth_method")?,
            access_token: s("access_token")?,
            refresh_token: s("refresh_token"),
            expires_at: v.get("expires_at").and_then(Value::as_u64),
            scope: s("scope"),
        })
    }
}

/// The store file.
#[derive(Clone, Debug)]
pub struct Store {
    path: PathBuf,
}

impl Store {
    pub fn at(path: impl Into<PathBuf>) -> Store {
        Store { path: path.into() }
    }

    /// `$AGENTTEAMS_MCP_TOKEN_STORE`, else `$XDG_CONFIG_HOME/agentteams-mcp/tokens.json`, else
    /// `$HOME/.config/agentteams-mcp/tokens.json`.
    pub fn default_path() -> Option<PathBuf> {
        let nonempty = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
        if let Some(p) = nonempty(STORE_ENV) {
            return Some(PathBuf::from(p));
        }
        let config = nonempty("XDG_CONFIG_HOME")
            .map(PathBuf::from)
            .or_else(|| nonempty("HOME").map(|h| Path::new(&h).join(".config")))?;
        Some(config.join("agentteams-mcp").join("tokens.json"))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every entry. A missing file is an empty store; a file others can read, one over
    /// [`MAX_STORE_BYTES`], or one that is not a token store is an error naming the file.
    pub fn load(&self) -> Result<Vec<Entry>, String> {
        let shown = self.path.display();
        let meta = match fs::symlink_metadata(&self.path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(format!("token store {shown}: {e}")),
        };
        if !meta.is_file() {
            return Err(format!("token store {shown} is not a regular file"));
        }
        let mode = meta.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            return Err(format!(
                "token store {shown} can be read by other users (mode {mode:03o}); run chmod 600 on it"
            ));
        }
        if meta.len() > MAX_STORE_BYTES as u64 {
            return Err(format!(
                "token store {shown} is larger than {MAX_STORE_BYTES} bytes"
            ));
        }
        let bytes = fs::read(&self.path).map_err(|e| format!("token store {shown}: {e}"))?;
        let doc = json::parse(&bytes)
            .map_err(|e| format!("token store {shown} is not valid JSON: {e}"))?;
        let entries = doc
            .get("entries")
            .and_then(Value::as_array)
            .filter(|_| doc.get("version").and_then(Value::as_u64) == Some(1))
            .ok_or_else(|| {
                format!("token store {shown} is not an agentteams-mcp token store (version 1)")
            })?;
        entries
            .iter()
            .map(|e| {
                Entry::from_json(e)
                    .ok_or_else(|| format!("token store {shown} holds a malformed entry"))
            })
            .collect()
    }

    /// The most recently saved entry for `server` (a server that moved to another
    /// authorization server has one entry per issuer; the newest login wins).
    pub fn find(&self, server: &str) -> Result<Option<Entry>, String> {
        Ok(self.load()?.into_iter().rev().find(|e| e.server == server))
    }

    /// Saves `entry`, replacing the one for the same server and issuer.
    pub fn save(&self, entry: &Entry) -> Result<(), String> {
        let mut entries = self.load()?;
        entries.retain(|e| !(e.server == entry.server && e.issuer == entry.issuer));
        entries.push(entry.clone());
        if entries.len() > MAX_STORE_ENTRIES {
            entries.drain(..entries.len() - MAX_STORE_ENTRIES);
        }
        self.write(&entries)
    }

    /// Forgets every entry for `server`; returns how many there were.
    pub fn remove(&self, server: &str) -> Result<usize, String> {
        let mut entries = self.load()?;
        let before = entries.len();
        entries.retain(|e| e.server != server);
        let removed = before - entries.len();
        if removed > 0 {
            self.write(&entries)?;
        }
        Ok(removed)
    }

    /// Writes the whole store: a temporary file created 0600 beside it, then renamed over it, so
    /// a reader never sees half a file and the tokens are never readable by others.
    fn write(&self, entries: &[Entry]) -> Result<(), String> {
        let shown = self.path.display();
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            if !dir.exists() {
                fs::DirBuilder::new()
                    .recursive(true)
                    .mode(0o700)
                    .create(dir)
                    .map_err(|e| format!("token store folder {}: {e}", dir.display()))?;
            }
        }
        let mut doc = Map::new();
        doc.insert("version", Value::from(1u64));
        doc.insert(
            "entries",
            Value::Array(entries.iter().map(Entry::to_json).collect()),
        );
        let text = json::to_string(&Value::Object(doc));
        let tmp = self
            .path
            .with_extension(format!("tmp{}", std::process::id()));
        let _ = fs::remove_file(&tmp);
        let written = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)
            .and_then(|mut f| f.write_all(text.as_bytes()).and_then(|_| f.sync_all()))
            .and_then(|_| fs::rename(&tmp, &self.path));
        if let Err(e) = written {
            let _ = fs::remove_file(&tmp);
            return Err(format!("token store {shown}: {e}"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("oauth-store-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        dir
    }

    fn entry(server: &str) -> Entry {
        Entry {
            server: server.into(),
            issuer: "http://as".into(),
            token_endpoint: "http://as/token".into(),
            client_id: "c".into(),
            auth_method: "none".into(),
            access_token: "secret-access".into(),
            refresh_token: Some("secret-refresh".into()),
            expires_at: Some(10),
            ..Entry::default()
        }
    }

    #[test]
    fn the_store_is_created_owner_only_and_round_trips() {
        let dir = temp_dir("perm");
        let store = Store::at(dir.join("sub").join("tokens.json"));
        assert!(store.load().unwrap().is_empty());
        store.save(&entry("http://a/mcp")).unwrap();
        store.save(&entry("http://b/mcp")).unwrap();
        let mode = fs::metadata(store.path()).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let dir_mode = fs::metadata(dir.join("sub")).unwrap().permissions().mode() & 0o777;
        assert_eq!(dir_mode, 0o700);
        assert_eq!(
            store.find("http://b/mcp").unwrap(),
            Some(entry("http://b/mcp"))
        );
        let moved = Entry {
            issuer: "http://other-as".into(),
            ..entry("http://b/mcp")
        };
        store.save(&moved).unwrap();
        assert_eq!(store.find("http://b/mcp").unwrap(), Some(moved));
        assert_eq!(store.remove("http://b/mcp").unwrap(), 2);
        store.save(&entry("http://b/mcp")).unwrap();
        assert_eq!(store.remove("http://a/mcp").unwrap(), 1);
        assert_eq!(store.remove("http://a/mcp").unwrap(), 0);
        assert_eq!(store.load().unwrap().len(), 1);
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_store_others_can_read_or_that_is_not_a_store_is_refused() {
        let dir = temp_dir("bad");
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("tokens.json");
        fs::write(&path, r#"{"version":1,"entries":[]}"#).unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
        assert!(Store::at(&path).load().unwrap_err().contains("chmod 600"));
        fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
        assert!(Store::at(&path).load().unwrap().is_empty());
        for bad in [
            &b"{}"[..],
            b"[",
            br#"{"version":1,"entries":[{"server":1}]}"#,
        ] {
            fs::write(&path, bad).unwrap();
            assert!(Store::at(&path).load().is_err());
        }
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn debug_output_redacts_every_secret() {
        let mut e = entry("http://a/mcp");
        e.client_secret = Some("secret-client".into());
        let shown = format!("{e:?}");
        assert!(!shown.contains("secret-"), "{shown}");
        assert!(shown.contains("[redacted]"));
    }
}
