//! Names of source files both sides need: the builder reads them, recall judges from their times
//! whether an index may be stale (`recall::staleness`).

/// The memory index's sources that are single files at the project's root, in the reference's
/// order (REFERENCE-BEHAVIOUR.md §6.1 item 2).
pub const TOP_LEVEL_SOURCES: [&str; 3] = ["CHANGELOG.md", "README.md", "build-team-plan.md"];

/// The manifests whose text enters the API partitions' dependency fingerprint, in the
/// reference's order (§7.4 item 6).
pub const DEPENDENCY_MANIFESTS: [&str; 6] = [
    "pyproject.toml",
    "requirements.txt",
    "requirements-dev.txt",
    "poetry.lock",
    "Pipfile.lock",
    "uv.lock",
];

/// The project's virtual environments whose `lib/python*/site-packages` the fingerprint reads
/// (unless the user names an interpreter), in that order.
pub const ENVIRONMENT_DIRS: [&str; 2] = [".venv", "venv"];
