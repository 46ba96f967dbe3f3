//! The code-lookup sidecar's reader on arbitrary bytes: `Lookup::parse` refuses or accepts, never
//! panics, and what it accepts answers every lookup inside its own tables and its files' lengths.
#![no_main]

use agentteams_mcp_servers::corpus::lookup::Lookup;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(lookup) = Lookup::parse(data.to_vec()) else {
        return;
    };
    for d in 0..lookup.document_count() {
        let entry = lookup.document(d);
        assert!(entry.local.0 < entry.local.1 && entry.local.1 <= lookup.local.len);
        assert!(entry.outline == (0, 0) || entry.outline.1 <= lookup.outline.len);
        let _ = lookup.path(d);
    }
    let mut previous: Option<&str> = None;
    for entry in lookup.with_prefix("") {
        assert!(previous.is_none_or(|p| p < entry.term));
        assert!(entry.postings.1 <= lookup.local.len && entry.documents > 0);
        assert_eq!(lookup.term(entry.term), Some(entry));
        previous = Some(entry.term);
    }
});
