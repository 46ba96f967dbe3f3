//! recall's two ways of loading an index file against each other: on arbitrary bytes, read as a
//! memory index and as a code-index file, the streaming path (`decode`, which falls back to the
//! tree path when it cannot prove the file valid) must give exactly what the tree path alone
//! (`decode_tree`: parse, validate, convert) gives, the same loaded contents or the same message.
//! Past `MAX_TREE_INDEX_BYTES` `decode` refuses what the stream declines, so larger inputs are
//! skipped.
#![no_main]

use agentteams_mcp_servers::recall::load::{decode, decode_tree, IndexKind, MAX_TREE_INDEX_BYTES};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() > MAX_TREE_INDEX_BYTES {
        return;
    }
    for kind in [IndexKind::Memory, IndexKind::Code] {
        let streamed = decode(data, kind, "f.json").map(|loaded| format!("{loaded:?}"));
        let tree = decode_tree(data, kind, "f.json").map(|loaded| format!("{loaded:?}"));
        assert_eq!(streamed, tree, "{kind:?}");
    }
});
