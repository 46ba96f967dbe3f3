//! The index formats as one place states them, for the two sides that must agree on them: recall
//! (which reads indexes) and the index builder (which writes them). Neither side's logic lives
//! here, and nothing here imports `recall` or `index`.
//!
//! Module map: [`built_at`] (the build stamp, and whether a file time is later), [`teamdir`] (where a team's indexes live, and the containment rule for every path
//! either side opens), [`schema`] (the index files' shapes, validated), [`tokenize`] (the
//! tokenizers both sides run), [`locator`] (the line locators the sidecars store), [`sidecars`]
//! (our two files beside the reference's indexes), [`sources`] (source file names both sides
//! need), [`text`] (how both sides cut, split and order
//! text).

pub mod built_at;
pub mod locator;
pub mod lookup;
pub mod schema;
pub mod sidecars;
pub mod sources;
pub mod teamdir;
pub mod text;
pub mod tokenize;
