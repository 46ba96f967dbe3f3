//! The official Rust SDK (rmcp) serving the conformance fixture's trivial tool
//! (`test_simple_text`), shared by the rmcp peers of the HTTP and stdio benchmarks.
use rmcp::{
    handler::server::router::tool::ToolRouter, model::*, tool, tool_handler, tool_router,
    ErrorData as McpError, ServerHandler,
};

/// The text `test_simple_text` answers with, the same as the fixture server's.
pub const SIMPLE_TEXT: &str = "This is a simple text response for testing.";

#[derive(Clone)]
pub struct Simple {
    #[allow(dead_code)] // read by the code #[tool_handler] generates
    tool_router: ToolRouter<Simple>,
}

impl Default for Simple {
    fn default() -> Self {
        Simple {
            tool_router: Self::tool_router(),
        }
    }
}

#[tool_router]
impl Simple {
    #[tool(description = "Returns one text block.")]
    async fn test_simple_text(&self) -> Result<CallToolResult, McpError> {
        Ok(CallToolResult::success(vec![ContentBlock::text(SIMPLE_TEXT)]))
    }
}

#[tool_handler]
impl ServerHandler for Simple {
    fn get_info(&self) -> ServerInfo {
        ServerInfo::new(ServerCapabilities::builder().enable_tools().build())
    }
}
