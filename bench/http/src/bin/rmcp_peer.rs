//! The official Rust SDK (rmcp) serving the same trivial tool as the fixture server
//! (`test_simple_text`) over Streamable HTTP at /mcp, with rmcp's default configuration
//! (stateful sessions). Usage: rmcp-peer PORT [--nodelay]
//!
//! `--nodelay` sets TCP_NODELAY on accepted sockets (axum's default leaves Nagle on, which with a
//! client's delayed ACK costs about 40 ms per reply that hyper writes in more than one piece).
use rmcp::{
    handler::server::router::tool::ToolRouter,
    model::*,
    tool, tool_handler, tool_router,
    transport::streamable_http_server::{
        session::local::LocalSessionManager, StreamableHttpServerConfig, StreamableHttpService,
    },
    ErrorData as McpError, ServerHandler,
};

#[derive(Clone)]
struct Simple {
    #[allow(dead_code)] // read by the code #[tool_handler] generates
    tool_router: ToolRouter<Simple>,
}

#[tool_router]
impl Simple {
    fn new() -> Self {
        Simple {
            tool_router: Self::tool_router(),
        }
    }

    #[tool(description = "Returns one text block.")]
    async fn test_simple_text(&self) -> Result<CallToolResult, McpError> {
        Ok(CallToolResult::success(vec![ContentBlock::text(
            "This is a simple text response for testing.",
        )]))
    }
}

#[tool_handler]
impl ServerHandler for Simple {
    fn get_info(&self) -> ServerInfo {
        ServerInfo::new(ServerCapabilities::builder().enable_tools().build())
    }
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let port: u16 = std::env::args()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(8001);
    let service = StreamableHttpService::new(
        || Ok(Simple::new()),
        LocalSessionManager::default().into(),
        StreamableHttpServerConfig::default(),
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    let nodelay = std::env::args().any(|a| a == "--nodelay");
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    eprintln!("rmcp peer on http://127.0.0.1:{port}/mcp (nodelay: {nodelay})");
    if nodelay {
        use axum::serve::ListenerExt;
        let listener = listener.tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
        axum::serve(listener, router).await
    } else {
        axum::serve(listener, router).await
    }
}
