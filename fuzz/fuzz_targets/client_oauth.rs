//! What a hostile MCP server or authorization server controls in a login: the
//! `WWW-Authenticate` challenge, URLs in metadata and redirects, the authorization response's
//! query, and the PRM and authorization server metadata documents. None may panic; what parses
//! must keep its promises (a URL prints canonically and parses back to itself, a resource never
//! covers a server of another origin, accepted metadata names the issuer it was asked for).
#![no_main]

use agentteams_mcp::client::oauth::discovery::{AuthServerMetadata, Challenge, ResourceMetadata};
use agentteams_mcp::http1::form::{form_encode, parse_query};
use agentteams_mcp::http1::url::Url;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let challenge = Challenge::parse(text);
    let _ = challenge.insufficient_scope();
    let server = Url::parse_identifier("http://127.0.0.1:3000/mcp").unwrap();
    if let Ok(url) = Url::parse_identifier(text) {
        let printed = url.identifier();
        assert_eq!(Url::parse_identifier(&printed).as_ref(), Ok(&url), "{printed}");
        if url.covers(&server) {
            assert_eq!(url.origin(), server.origin());
        }
        let _ = url.well_known_inserted("oauth-authorization-server");
        let _ = url.well_known_appended("openid-configuration");
        let _ = url.with_query(&form_encode(&[("state", text)]));
    }
    if let Some(pairs) = parse_query(text) {
        let borrowed: Vec<(&str, &str)> = pairs
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(parse_query(&form_encode(&borrowed)), Some(pairs));
    }
    if let Ok(prm) = ResourceMetadata::parse(data, "fuzz", &server) {
        assert!(!prm.authorization_servers.is_empty());
        assert!(Url::parse_identifier(&prm.resource).unwrap().covers(&server));
    }
    if let Ok(meta) = AuthServerMetadata::parse(data, "fuzz", Some("http://as.example")) {
        assert_eq!(meta.issuer.trim_end_matches('/'), "http://as.example");
        let _ = meta.require_s256();
    }
});
