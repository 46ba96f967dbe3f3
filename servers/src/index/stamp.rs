//! The build stamp: what every index file of one build records about it (when, and for which
//! project and framework), made once per build and written by each file's writer.

/// What every index file records about its build: when, and for which project and framework.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stamp {
    pub built_at: String,
    pub project_name: String,
    pub framework: String,
}
