//! The OAuth resource server's untrusted inputs: arbitrary bytes as an `--auth-config` document
//! (`AuthConfig::from_json`), and as an `Authorization` header value through `authenticate` with
//! a fixed configuration (the RFC 7515 A.2 RSA key in a JWKS file, no introspection, so nothing
//! leaves the process). Neither panics, and no header is accepted: the fuzzer cannot sign.
#![no_main]

use agentteams_mcp::auth::config::AuthConfig;
use agentteams_mcp::auth::ResourceServer;
use agentteams_mcp::json;
use libfuzzer_sys::fuzz_target;
use std::path::Path;
use std::sync::OnceLock;

fn server() -> &'static ResourceServer {
    static SERVER: OnceLock<ResourceServer> = OnceLock::new();
    SERVER.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("fuzz-auth-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("jwks.json"),
            r#"{"keys":[{"kty":"RSA","kid":"k1","e":"AQAB","n":"ofgWCuLjybRlzo0tZWJjNiuSfb4p4fAkd_wWJcyQoTbji9k0l8W26mPddxHmfHQp-Vaw-4qPCJrcS2mJPMEzP1Pt0Bm4d4QlL-yRT-SFd2lZS-pCgNMsD1W_YpRPEwOWvG6b32690r2jZ47soMZo9wGzjb_7OMg0LOL-bSf63kpaSHSXndS5z5rexMdbBYUsLA9e-KXBdQOS-UTo7WTBEMa2R2CapHg665xsmtdVMTBQY4uDZlxvb3qCo5ZwKh9kG4LT6_I5IhlJH7aGhyxXFvUK-DWNmoudF8NAco9_h9iaGNj8q2ethFkMLs91kzk2PAcDTW9gb54h4FRWyuXpoQ"}]}"#,
        )
        .unwrap();
        let config = json::parse(
            br#"{"resource": "https://m.example/mcp", "authorization_servers": [{"issuer": "https://joe.example", "jwks_file": "jwks.json"}]}"#,
        )
        .unwrap();
        ResourceServer::new(AuthConfig::from_json(&config, &dir).expect("the fixed configuration"))
    })
}

fuzz_target!(|data: &[u8]| {
    if let Ok(value) = json::parse(data) {
        let _ = AuthConfig::from_json(&value, Path::new("/nonexistent-fuzz-dir"));
    }
    let grant = server().authenticate(Ok(Some(data)));
    assert!(
        grant.is_err(),
        "accepted {:?}",
        String::from_utf8_lossy(data)
    );
});
