//! Sealed sessions (`--session-key-file`) through the real binary: replicas sharing a key serve
//! each other's sessions, and forged, truncated, re-keyed, oversized and ended ids are refused.

mod common;

use common::{http_post, http_request, serve_http, session_id_of, HttpServer, TempDir};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const VERSION: &str = "2025-11-25";

/// Writes a key file of `hex` with `mode`.
fn key_file(dir: &Path, name: &str, hex: &str, mode: u32) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, format!("{hex}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
    path
}

fn replica(keys: &[(&str, &Path)]) -> (HttpServer, u16) {
    let args: Vec<&str> = keys
        .iter()
        .flat_map(|(option, path)| [*option, path.to_str().unwrap()])
        .collect();
    serve_http(&args, None, Stdio::null())
}

/// Initializes on `port`; returns the session id.
fn open_session(port: u16) -> String {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"{VERSION}","capabilities":{{"roots":{{}}}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#
    );
    let (status, reply) = http_post(port, "", &body);
    assert_eq!(status, 200, "{reply}");
    session_id_of(&reply)
}

/// A tool call in session `id` on `port`: the status and the response.
fn call(port: u16, id: &str) -> (u16, String) {
    let headers = format!("Mcp-Session-Id: {id}\r\nMCP-Protocol-Version: {VERSION}\r\n");
    let body =
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test_simple_text"}}"#;
    http_post(port, &headers, body)
}

fn delete(port: u16, id: &str) -> u16 {
    http_request(
        port,
        "DELETE",
        "/mcp",
        &format!("Mcp-Session-Id: {id}\r\n"),
        "",
    )
    .0
}

#[test]
fn replicas_sharing_a_key_serve_each_others_sessions() {
    let dir = TempDir::new("sealed-replicas");
    let key = key_file(dir.path(), "key", &"3c".repeat(32), 0o600);
    let (_a, a) = replica(&[("--session-key-file", &key)]);
    let (_b, b) = replica(&[("--session-key-file", &key)]);
    let id = open_session(a);
    assert_eq!(
        id.len(),
        agentteams_mcp::http::sealed::TOKEN_HEX_DIGITS,
        "{id}"
    );
    for port in [a, b, a, b] {
        let (status, reply) = call(port, &id);
        assert_eq!(status, 200, "{reply}");
        assert!(reply.contains("\"result\""), "{reply}");
    }
    // A replica restarted with the same key still knows the session.
    drop(_b);
    let (_b2, b2) = replica(&[("--session-key-file", &key)]);
    assert_eq!(call(b2, &id).0, 200);
}

#[test]
fn forged_truncated_rekeyed_and_oversized_ids_are_refused() {
    let dir = TempDir::new("sealed-attacks");
    let key = key_file(dir.path(), "key", &"3c".repeat(32), 0o600);
    let other = key_file(dir.path(), "other", &"5e".repeat(32), 0o600);
    let (_a, a) = replica(&[("--session-key-file", &key)]);
    let (_c, c) = replica(&[("--session-key-file", &other)]);
    let id = open_session(a);
    // Forged: one digit of the MAC changed, then one digit of the expiry changed.
    for at in [159, 60] {
        let mut forged = id.clone().into_bytes();
        forged[at] = if forged[at] == b'0' { b'1' } else { b'0' };
        let forged = String::from_utf8(forged).unwrap();
        let (status, reply) = call(a, &forged);
        assert_eq!(status, 404, "{reply}");
    }
    assert_eq!(call(a, &id[..150]).0, 404, "truncated");
    assert_eq!(
        call(a, "0123456789abcdef0123456789abcdef").0,
        404,
        "an old-style id"
    );
    // Sealed under another key (another deployment): refused there, and its tokens here.
    assert_eq!(call(c, &id).0, 404);
    let foreign = open_session(c);
    assert_eq!(call(a, &foreign).0, 404);
    // Oversized: refused before decoding, without echoing it.
    let (status, reply) = call(a, &"a".repeat(4000));
    assert_eq!(status, 400, "{reply}");
    assert!(!reply.contains("aaaa"), "{reply}");
    assert_eq!(call(a, &id).0, 200, "the real one still works");
}

/// A session id of the first token layout (version 1, no principal), sealed under `key` as
/// servers before issue 32 sealed them: 80 bytes, the last 32 an HMAC-SHA-256 of the rest.
fn version_1_token(key: &[u8]) -> String {
    use agentteams_mcp::{hmac::HmacSha256, sha256};
    let mut id = sha256::Sha256::new();
    id.update(b"agentteams-mcp session key id\0");
    id.update(key);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let mut body = vec![1u8];
    body.extend_from_slice(&id.finish()[..4]);
    body.extend_from_slice(&[0x42; 16]);
    body.extend_from_slice(&now.to_be_bytes());
    body.extend_from_slice(&(now + 3600).to_be_bytes());
    body.push(0);
    body.extend_from_slice(VERSION.as_bytes());
    let mac = HmacSha256::new(key).mac(&body);
    body.extend_from_slice(&mac);
    sha256::to_hex(&body)
}

/// Issue 32, finding 3: ids of the layout without a principal are not served any more; the client
/// is told to initialize again (404, as the specification asks for a session gone).
#[test]
fn an_id_of_the_earlier_layout_is_told_to_initialize_again() {
    let dir = TempDir::new("sealed-version-1");
    let key = key_file(dir.path(), "key", &"3c".repeat(32), 0o600);
    let (_a, a) = replica(&[("--session-key-file", &key)]);
    let old = version_1_token(&[0x3c; 32]);
    assert_eq!(old.len(), 160);
    let (status, reply) = call(a, &old);
    assert_eq!(status, 404, "{reply}");
    assert!(reply.contains("initialize again"), "{reply}");
    assert_eq!(delete(a, &old), 404);
    let fresh = open_session(a);
    assert_eq!(call(a, &fresh).0, 200);
}

#[test]
fn delete_ends_the_session_on_the_replica_that_receives_it() {
    let dir = TempDir::new("sealed-delete");
    let key = key_file(dir.path(), "key", &"3c".repeat(32), 0o600);
    let (_a, a) = replica(&[("--session-key-file", &key)]);
    let (_b, b) = replica(&[("--session-key-file", &key)]);
    let id = open_session(a);
    assert_eq!(call(a, &id).0, 200);
    assert_eq!(delete(a, &id), 200);
    assert_eq!(call(a, &id).0, 404, "replayed after DELETE");
    assert_eq!(delete(a, &id), 404);
    // Documented in SECURITY.md: another replica accepts it until it expires.
    assert_eq!(call(b, &id).0, 200);
}

#[test]
fn a_rotated_key_is_accepted_as_previous() {
    let dir = TempDir::new("sealed-rotation");
    let old = key_file(dir.path(), "old", &"3c".repeat(32), 0o600);
    let new = key_file(dir.path(), "new", &"7a".repeat(48), 0o600);
    let (_a, a) = replica(&[("--session-key-file", &old)]);
    let id = open_session(a);
    let (_r, rotated) = replica(&[
        ("--session-key-file", &new),
        ("--previous-session-key-file", &old),
    ]);
    assert_eq!(call(rotated, &id).0, 200);
    let fresh = open_session(rotated);
    assert_ne!(fresh[2..10], id[2..10], "a new key id");
    assert_eq!(call(a, &fresh).0, 404, "the old replica lacks the new key");
}

#[test]
fn unusable_key_files_stop_startup_with_one_line_and_exit_2() {
    let dir = TempDir::new("sealed-bad-keys");
    let good = key_file(dir.path(), "good", &"3c".repeat(32), 0o600);
    let cases: [(Vec<String>, &str); 6] = [
        (
            vec!["--session-key-file".into(), "/nonexistent/key".into()],
            "cannot read the session key",
        ),
        (
            vec![
                "--session-key-file".into(),
                key_file(dir.path(), "open", &"3c".repeat(32), 0o640)
                    .display()
                    .to_string(),
            ],
            "readable or writable by group or others (mode 640); run chmod 600",
        ),
        (
            vec![
                "--session-key-file".into(),
                key_file(dir.path(), "short", &"3c".repeat(16), 0o600)
                    .display()
                    .to_string(),
            ],
            "has 16 bytes, needs 32 to 64",
        ),
        (
            vec![
                "--session-key-file".into(),
                key_file(dir.path(), "bad", "not a key at all", 0o600)
                    .display()
                    .to_string(),
            ],
            "hex digits only",
        ),
        (
            vec![
                "--previous-session-key-file".into(),
                good.display().to_string(),
            ],
            "needs --session-key-file",
        ),
        (
            vec![
                "--session-key-file".into(),
                good.display().to_string(),
                "--stateless".into(),
            ],
            "--stateless keeps no sessions",
        ),
    ];
    for (args, message) in cases {
        let out = Command::new(common::fixtures())
            .args(["--serve-mcp", "conformance", "--http", "--port", "0"])
            .args(&args)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(message), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    }
}

/// docs/deploy.md's rotation, step by step: no session is refused while replicas of two adjacent
/// steps run side by side, and the old key's sessions end only when the previous key is dropped.
#[test]
fn the_documented_three_step_rotation_refuses_no_live_session() {
    let dir = TempDir::new("sealed-three-step");
    let old = key_file(dir.path(), "old", &"3c".repeat(32), 0o600);
    let new = key_file(dir.path(), "new", &"9d".repeat(32), 0o600);
    let (_s1, step1) = replica(&[("--session-key-file", &old)]);
    let (_s2, step2) = replica(&[
        ("--session-key-file", &old),
        ("--previous-session-key-file", &new),
    ]);
    let (_s3, step3) = replica(&[
        ("--session-key-file", &new),
        ("--previous-session-key-file", &old),
    ]);
    let (_s4, step4) = replica(&[("--session-key-file", &new)]);
    let (t1, t2, t3) = (
        open_session(step1),
        open_session(step2),
        open_session(step3),
    );
    // Steps 1 and 2 side by side, then 2 and 3: every session works on both.
    for (id, ports) in [
        (&t1, [step1, step2]),
        (&t2, [step1, step2]),
        (&t2, [step2, step3]),
    ] {
        for port in ports {
            assert_eq!(call(port, id).0, 200);
        }
    }
    for port in [step2, step3] {
        assert_eq!(
            call(port, &t3).0,
            200,
            "step 2 accepts the new key's sessions"
        );
    }
    // Step 4 (previous key dropped, after the lifetime): only the new key's sessions remain.
    assert_eq!(call(step4, &t3).0, 200);
    assert_eq!(call(step4, &t1).0, 404);
}
