//! The official Rust SDK (rmcp) serving `test_simple_text` over Streamable HTTP at /mcp, with
//! TCP_NODELAY on accepted sockets (as agentteams-mcp sets it; axum leaves Nagle on, and a reply
//! hyper writes in more than one piece then waits about 40 ms for the client's delayed ACK).
//!
//! Usage: rmcp-peer PORT [--stateless]
//! Without `--stateless`: rmcp's default sessions (`Mcp-Session-Id`, replies as SSE streams).
//! With it: rmcp's stateless mode with plain JSON replies (`legacy_session_mode` off,
//! `json_response` on), the counterpart of `agentteams-mcp --http --stateless`.
use agentteams_mcp_bench_http::Simple;
use axum::serve::ListenerExt;
use rmcp::transport::streamable_http_server::{
    session::local::LocalSessionManager, StreamableHttpServerConfig, StreamableHttpService,
};

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let port: u16 = std::env::args()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(8001);
    let stateless = std::env::args().any(|a| a == "--stateless");
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(!stateless)
        .with_json_response(stateless);
    let service = StreamableHttpService::new(
        || Ok(Simple::default()),
        LocalSessionManager::default().into(),
        config,
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    eprintln!("rmcp peer on http://127.0.0.1:{port}/mcp (stateless: {stateless})");
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    axum::serve(listener, router).await
}
