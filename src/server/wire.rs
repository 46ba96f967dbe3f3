//! [`Wire`]: how much of the protocol an [`super::Engine`] puts on the wire, an option its builder
//! chooses (servers choose [`Wire::Minimal`] for hosts written against an early tools-only server).

use super::revision::Revision;
use crate::json::Value;

/// How much of the protocol an engine puts on the wire.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Wire {
    /// Everything the negotiated revision has (the default).
    #[default]
    Full,
    /// The tools-only wire of the first stdio MCP servers, for hosts written against one, whatever
    /// revision `initialize` negotiates: capabilities `{"tools": {}}` (with resources and prompts
    /// only when the served set has them), no `instructions` and no `title`; tools declared by
    /// name, description and input schema alone; results without `structuredContent`;
    /// `logging/setLevel` and the 2026-07-28 stateless requests are unknown methods; `params` and
    /// `arguments` that are falsy in Python's sense (`[]`, `0`, `false`, `""`) mean `{}`; a
    /// `tools/list` cursor is ignored; a reply to a message whose id is unknown says
    /// `"id": null`, and -32700 carries no `data`; a repeated `initialize` is answered (and
    /// negotiates again) instead of refused; the stdio transport answers in request order.
    Minimal,
}

impl Wire {
    /// The revision whose shape replies take in a session that negotiated `revision`: under
    /// [`Wire::Minimal`] the first one, which has no annotations, titles, output schemas or
    /// structured content.
    pub fn shape(self, revision: Revision) -> Revision {
        match self {
            Wire::Full => revision,
            Wire::Minimal => Revision::DEFAULT_LEGACY,
        }
    }

    /// Whether `value`, given as `params` or `arguments`, means `{}` (besides absent and `null`).
    pub fn means_empty(self, value: &Value) -> bool {
        self == Wire::Minimal && is_falsy(value)
    }

    /// Whether a transport that could answer a quick request before a slow one read earlier (stdio)
    /// must answer in request order instead.
    pub fn answers_in_order(self) -> bool {
        self == Wire::Minimal
    }
}

/// Python's falsiness for the JSON a non-object `params` may be (objects are taken as they are).
fn is_falsy(value: &Value) -> bool {
    match value {
        Value::Null | Value::Bool(false) => true,
        Value::Array(items) => items.is_empty(),
        Value::String(s) => s.is_empty(),
        Value::Number(n) => n.as_f64() == 0.0,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse;

    #[test]
    fn only_the_minimal_wire_takes_falsy_values_for_empty_params() {
        for falsy in ["[]", "0", "0.0", "-0", "false", "\"\"", "null"] {
            let value = parse(falsy.as_bytes()).unwrap();
            assert!(Wire::Minimal.means_empty(&value), "{falsy}");
            assert!(!Wire::Full.means_empty(&value), "{falsy}");
        }
        for truthy in ["[0]", "1", "0.5", "true", "\" \"", "{}"] {
            let value = parse(truthy.as_bytes()).unwrap();
            assert!(!Wire::Minimal.means_empty(&value), "{truthy}");
        }
    }

    #[test]
    fn the_minimal_wire_shapes_replies_as_the_first_revision() {
        for revision in Revision::ALL_NEWEST_FIRST {
            assert_eq!(Wire::Full.shape(revision), revision);
            assert_eq!(Wire::Minimal.shape(revision), Revision::DEFAULT_LEGACY);
        }
    }
}
