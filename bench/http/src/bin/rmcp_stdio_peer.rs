//! The official Rust SDK (rmcp) serving `test_simple_text` over stdio, with rmcp's defaults (the
//! multi-threaded runtime its examples use), for bench/stdio's driver.
use agentteams_mcp_bench_http::Simple;
use rmcp::{transport::stdio, ServiceExt};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let service = Simple::default().serve(stdio()).await?;
    service.waiting().await?;
    Ok(())
}
