//! The API partitions' `dependency_fingerprint`, computed the reference's way
//! (REFERENCE-BEHAVIOUR.md §7.4 item 6) from files alone, so the reference CLI finds the API
//! partitions fresh: the project's dependency manifests, the external top-level imports of its
//! Python files, and the distributions those resolve to in the project's environment, read from
//! `*.dist-info` / `*.egg-info` metadata. Nothing of the project is ever run (a `.venv/bin/python`
//! in a hostile checkout is a program); every file read is a regular file inside the project,
//! bounded in size, and all of them together by the build's [`ReadBudget`].

use super::budget::{ReadBudget, MAX_ENVIRONMENT_BYTES};
use crate::corpus::teamdir::confine;
use agentteams_mcp::json::{self, Value};
use agentteams_mcp::sha256::{self, Sha256};
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

pub use crate::corpus::sources::DEPENDENCY_MANIFESTS;

/// Largest manifest hashed; a larger one (or one that is a link out of the project, a FIFO or
/// a device) makes the fingerprint unknown (`null`, as the reference writes when collection
/// fails) rather than be read whole.
pub const MAX_MANIFEST_BYTES: u64 = 16 * 1024 * 1024;

/// Most memory the tree of one JSON manifest (`package.json`, `direct_url.json`) may take: a real
/// one needs a few KiB; a hostile `[0,0,...]` as long as a manifest may be stops here instead of
/// taking 32 bytes a value.
pub const MAX_MANIFEST_TREE_BYTES: usize = 64 * 1024 * 1024;

/// `text` as a JSON object, its tree at most [`MAX_MANIFEST_TREE_BYTES`]; `None` for anything else.
pub fn json_manifest(text: &str) -> Option<Value> {
    let limits = json::Limits {
        max_tree_bytes: MAX_MANIFEST_TREE_BYTES,
        ..json::Limits::default()
    };
    json::parse_with_limits(text.as_bytes(), limits)
        .ok()
        .filter(|value| value.as_object().is_some())
}

/// Largest `METADATA`/`PKG-INFO`, `top_level.txt` or `RECORD` read from a distribution; a larger
/// file is treated as absent.
pub const MAX_METADATA_BYTES: u64 = 4 * 1024 * 1024;

/// Distributions read from one environment; a planted site-packages of millions of entries
/// cannot make the build run away.
pub const MAX_DISTRIBUTIONS: usize = 10_000;

/// Python 3.11's `sys.stdlib_module_names` (the names starting with `_` left out: the reference
/// drops those anyway). The reference asks its running interpreter; other versions differ in a
/// handful of removed modules (`imp`, `distutils`, `asyncore` in 3.12, ...).
pub const PYTHON_STDLIB_MODULES: &[&str] = &[
    "abc",
    "aifc",
    "antigravity",
    "argparse",
    "array",
    "ast",
    "asynchat",
    "asyncio",
    "asyncore",
    "atexit",
    "audioop",
    "base64",
    "bdb",
    "binascii",
    "bisect",
    "builtins",
    "bz2",
    "cProfile",
    "calendar",
    "cgi",
    "cgitb",
    "chunk",
    "cmath",
    "cmd",
    "code",
    "codecs",
    "codeop",
    "collections",
    "colorsys",
    "compileall",
    "concurrent",
    "configparser",
    "contextlib",
    "contextvars",
    "copy",
    "copyreg",
    "crypt",
    "csv",
    "ctypes",
    "curses",
    "dataclasses",
    "datetime",
    "dbm",
    "decimal",
    "difflib",
    "dis",
    "distutils",
    "doctest",
    "email",
    "encodings",
    "ensurepip",
    "enum",
    "errno",
    "faulthandler",
    "fcntl",
    "filecmp",
    "fileinput",
    "fnmatch",
    "fractions",
    "ftplib",
    "functools",
    "gc",
    "genericpath",
    "getopt",
    "getpass",
    "gettext",
    "glob",
    "graphlib",
    "grp",
    "gzip",
    "hashlib",
    "heapq",
    "hmac",
    "html",
    "http",
    "idlelib",
    "imaplib",
    "imghdr",
    "imp",
    "importlib",
    "inspect",
    "io",
    "ipaddress",
    "itertools",
    "json",
    "keyword",
    "lib2to3",
    "linecache",
    "locale",
    "logging",
    "lzma",
    "mailbox",
    "mailcap",
    "marshal",
    "math",
    "mimetypes",
    "mmap",
    "modulefinder",
    "msilib",
    "msvcrt",
    "multiprocessing",
    "netrc",
    "nis",
    "nntplib",
    "nt",
    "ntpath",
    "nturl2path",
    "numbers",
    "opcode",
    "operator",
    "optparse",
    "os",
    "ossaudiodev",
    "pathlib",
    "pdb",
    "pickle",
    "pickletools",
    "pipes",
    "pkgutil",
    "platform",
    "plistlib",
    "poplib",
    "posix",
    "posixpath",
    "pprint",
    "profile",
    "pstats",
    "pty",
    "pwd",
    "py_compile",
    "pyclbr",
    "pydoc",
    "pydoc_data",
    "pyexpat",
    "queue",
    "quopri",
    "random",
    "re",
    "readline",
    "reprlib",
    "resource",
    "rlcompleter",
    "runpy",
    "sched",
    "secrets",
    "select",
    "selectors",
    "shelve",
    "shlex",
    "shutil",
    "signal",
    "site",
    "smtpd",
    "smtplib",
    "sndhdr",
    "socket",
    "socketserver",
    "spwd",
    "sqlite3",
    "sre_compile",
    "sre_constants",
    "sre_parse",
    "ssl",
    "stat",
    "statistics",
    "string",
    "stringprep",
    "struct",
    "subprocess",
    "sunau",
    "symtable",
    "sys",
    "sysconfig",
    "syslog",
    "tabnanny",
    "tarfile",
    "telnetlib",
    "tempfile",
    "termios",
    "textwrap",
    "this",
    "threading",
    "time",
    "timeit",
    "tkinter",
    "token",
    "tokenize",
    "tomllib",
    "trace",
    "traceback",
    "tracemalloc",
    "tty",
    "turtle",
    "turtledemo",
    "types",
    "typing",
    "unicodedata",
    "unittest",
    "urllib",
    "uu",
    "uuid",
    "venv",
    "warnings",
    "wave",
    "weakref",
    "webbrowser",
    "winreg",
    "winsound",
    "wsgiref",
    "xdrlib",
    "xml",
    "xmlrpc",
    "zipapp",
    "zipfile",
    "zipimport",
    "zlib",
    "zoneinfo",
];

/// One installed distribution as `importlib.metadata` sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Distribution {
    /// `Name` of its metadata.
    pub name: String,
    /// `Version` of its metadata (`""` when absent).
    pub version: String,
    /// The top-level import names it provides: `top_level.txt`, else inferred from `RECORD`.
    pub top_level: Vec<String>,
    /// The `.py` files its `RECORD` lists, relative to `site`, in order.
    pub record_py: Vec<String>,
    /// The site-packages folder it is installed in.
    pub site: PathBuf,
    /// The tree its recorded files must resolve inside ([`Environment::confined_to`]).
    confined_to: PathBuf,
    /// The source folder of an editable install (PEP 610 `direct_url.json` with
    /// `dir_info.editable`), when it is a `file:` URL resolving where the environment allows
    /// ([`Environment::editable_anywhere`]); its files are read in place of `RECORD`'s.
    pub editable: Option<PathBuf>,
    /// The metadata folder's name before its version, normalised: what `version(name)` matches.
    normalized: String,
    /// What the reference's `api-doc` unit holds: `Name`, `Summary` and the long description
    /// (the body after the headers, else the `Description` header), at most [`MAX_DOC_CHARS`].
    pub doc_text: String,
}

/// Characters of a distribution's description kept in its `api-doc` document (the reference's
/// `_MAX_DOC_CHARS`).
pub const MAX_DOC_CHARS: usize = 8000;

/// One `api-doc` unit: a distribution the project imports, and its description.
#[derive(Debug, PartialEq, Eq)]
pub struct ApiDoc {
    pub distribution: String,
    /// `None` when the metadata has no `Version`.
    pub version: Option<String>,
    pub text: String,
}

/// Source files read per imported distribution for its `api-module` units (the reference's
/// `_MAX_API_MODULE_FILES`).
pub const MAX_API_FILES: usize = 6;

/// Largest source file read for `api-module` units (`_MAX_BYTES_PER_API_FILE`); larger ones are
/// skipped.
pub const MAX_API_FILE_BYTES: u64 = 200_000;

/// Public top-level definitions kept per file (`_MAX_API_SYMBOLS_PER_MODULE`).
pub const MAX_API_SYMBOLS: usize = 40;

/// `.py` files of a distribution's `RECORD` kept (a planted `RECORD` of millions of lines cannot
/// make the build run away).
pub const MAX_RECORD_FILES: usize = 100_000;

/// A unit's `provenance`, in the reference's shapes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Provenance {
    /// `{distribution, version}`: an `api-doc` unit.
    Doc {
        distribution: String,
        version: Option<String>,
    },
    /// `{distribution, version, resolved_from, editable: null}`: a definition read from a file.
    Source {
        distribution: String,
        version: Option<String>,
        resolved_from: String,
    },
    /// `{distribution, version, declared_only: true}`: an import without readable source.
    Declared {
        distribution: String,
        version: Option<String>,
    },
}

/// One `api-module` unit: a public definition of an imported distribution, or the import alone.
#[derive(Debug, PartialEq, Eq)]
pub struct ApiModule {
    /// The import name (a definition) or the distribution (declared only).
    pub path: String,
    pub symbol: Option<String>,
    pub signature: Option<String>,
    pub text: String,
    /// The unit's one passage when it is already made (other ecosystems' definitions); else the
    /// passages are made from `text` in `language`.
    pub passage: Option<String>,
    pub language: Option<&'static str>,
    pub provenance: Provenance,
}

/// Why the fingerprint could not be computed (it is then written `null`).
#[derive(Debug, PartialEq, Eq)]
pub enum FingerprintError {
    /// A manifest exists but cannot be read as the reference would read it.
    Manifest { name: &'static str, reason: String },
    /// A manifest or a distribution was left unread: the build's [`ReadBudget`] was spent.
    Unread,
}

impl std::fmt::Display for FingerprintError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FingerprintError::Manifest { name, reason } => {
                write!(f, "dependency manifest {name}: {reason}")
            }
            FingerprintError::Unread => write!(
                f,
                "the project's environment and dependency manifests hold more than \
                 MAX_ENVIRONMENT_BYTES ({MAX_ENVIRONMENT_BYTES} bytes) to read"
            ),
        }
    }
}

/// A folder of installed distributions, and the tree every file read through it must stay in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Environment {
    /// The folder holding the `*.dist-info` / `*.egg-info` metadata folders.
    pub site: PathBuf,
    /// Metadata and recorded source files are read only when they resolve inside it: the project
    /// for its own virtual environments (a checkout can plant links anywhere); the folder itself
    /// for one a user-named interpreter reports.
    pub confined_to: PathBuf,
    /// Where an editable install's sources may be, beyond the project: nowhere for the project's
    /// own environments (a planted `direct_url.json` could name any folder of the machine);
    /// anywhere for a user-named interpreter's, whose environment the user vouched for.
    pub editable_anywhere: bool,
}

/// The `site-packages` folders of the project's virtual environments (`.venv`, `venv`), in
/// that order, confined to the project.
pub fn environment_dirs(root: &Path) -> Vec<Environment> {
    let mut out = Vec::new();
    for venv in crate::corpus::sources::ENVIRONMENT_DIRS {
        let lib = root.join(venv).join("lib");
        let Ok(entries) = std::fs::read_dir(&lib) else {
            continue;
        };
        let mut pythons: Vec<PathBuf> = entries
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("python"))
            .map(|e| e.path().join("site-packages"))
            .collect();
        pythons.sort();
        for dir in pythons {
            if let Ok(dir) = confine(root, &dir) {
                if dir.is_dir() {
                    out.push(Environment {
                        site: dir,
                        confined_to: root.to_path_buf(),
                        editable_anywhere: false,
                    });
                }
            }
        }
    }
    out
}

/// The distributions installed in `environments` (metadata folders in name order, at most
/// [`MAX_DISTRIBUTIONS`] in all, and those read before `budget` is spent); folders and files
/// resolving outside an environment's confinement are skipped. `root`: the project, where
/// editable sources may always be.
pub fn distributions(
    root: &Path,
    environments: &[Environment],
    budget: &ReadBudget,
) -> Vec<Distribution> {
    let mut out = Vec::new();
    for env in environments {
        let Ok(entries) = std::fs::read_dir(&env.site) else {
            continue;
        };
        let mut names: Vec<String> = entries
            .flatten()
            .take(MAX_DISTRIBUTIONS * 4)
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| n.ends_with(".dist-info") || n.ends_with(".egg-info"))
            .collect();
        names.sort();
        for name in names {
            if out.len() >= MAX_DISTRIBUTIONS {
                return out;
            }
            let Ok(meta_dir) = confine(&env.confined_to, &env.site.join(&name)) else {
                continue;
            };
            let dist = read_distribution(root, env, &meta_dir, &name, budget);
            if budget.spent() {
                // Partly read: left out, as every distribution after it.
                return out;
            }
            out.extend(dist);
        }
    }
    out
}

/// A file of a metadata folder, if it is a regular file inside the project within the limit.
fn metadata_file(root: &Path, dir: &Path, name: &str, budget: &ReadBudget) -> Option<String> {
    let path = confine(root, &dir.join(name)).ok()?;
    let bytes = budget.read_at_most(&path, MAX_METADATA_BYTES).ok()??;
    String::from_utf8(bytes).ok()
}

/// What a distribution's `METADATA` (or `PKG-INFO`) says: the headers up to the first blank line
/// (universal newlines), the body after it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Metadata {
    /// `Name` (trimmed; the first such header).
    pub name: String,
    /// `Version` (`""` when absent).
    pub version: String,
    /// `Name`, `Summary` and the long description (the body, else the `Description` header),
    /// at most [`MAX_DOC_CHARS`] characters.
    pub doc_text: String,
}

/// Reads a `METADATA`/`PKG-INFO` text; `None` without a `Name` header. Public for the
/// `index_manifests` fuzz target.
pub fn parse_metadata(text: &str) -> Option<Metadata> {
    let metadata = text.replace("\r\n", "\n").replace('\r', "\n");
    let (headers, body) = metadata.split_once("\n\n").unwrap_or((&metadata, ""));
    let name = header_value(headers, "Name")?.trim().to_owned();
    let version = header_value(headers, "Version")
        .map(|v| v.trim().to_owned())
        .unwrap_or_default();
    // The reference's text, value for value: headers as `importlib.metadata` gives them, the
    // body as it stands (trailing newlines and spaces kept, so both tools hash the same text).
    let parts: Vec<String> = ["Name", "Summary"]
        .iter()
        .filter_map(|k| header_value(headers, k).filter(|v| !v.is_empty()))
        .collect();
    let body = match body {
        "" => header_value(headers, "Description").unwrap_or_default(),
        text => text.to_owned(),
    };
    let mut doc_text = parts.join("\n");
    if !body.is_empty() {
        doc_text = format!("{doc_text}\n{body}");
    }
    let doc_text = crate::corpus::text::cut_chars(&doc_text, MAX_DOC_CHARS).to_owned();
    Some(Metadata {
        name,
        version,
        doc_text,
    })
}

/// Header `key` (matched without regard to ASCII case; the first one) as `importlib.metadata`
/// gives it: the text after the colon with its leading spaces and tabs removed, continuation
/// lines joined with newlines, and a folded value re-indented as its `Message` does
/// (`textwrap.dedent` of eight spaces and the value).
fn header_value(headers: &str, key: &str) -> Option<String> {
    let mut lines = headers.split('\n');
    let first = loop {
        let line = lines.next()?;
        if let Some((k, v)) = line.split_once(':') {
            if k.eq_ignore_ascii_case(key) {
                break v;
            }
        }
    };
    let mut value = first.trim_start_matches([' ', '\t']).to_owned();
    for line in lines.take_while(|l| l.starts_with([' ', '\t'])) {
        value.push('\n');
        value.push_str(line);
    }
    let value = value.trim_end_matches(['\r', '\n']);
    if !value.contains('\n') {
        return Some(value.to_owned());
    }
    Some(dedent(&format!("        {value}")))
}

/// `textwrap.dedent`: lines of only spaces and tabs emptied, then the longest run of leading
/// spaces and tabs common to the other lines removed from each.
fn dedent(text: &str) -> String {
    let lines: Vec<&str> = text
        .split('\n')
        .map(|l| {
            if l.trim_matches([' ', '\t']).is_empty() {
                ""
            } else {
                l
            }
        })
        .collect();
    fn indent(line: &str) -> &str {
        &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
    }
    let mut margin: Option<&str> = None;
    for line in lines.iter().filter(|l| !l.is_empty()) {
        let this = indent(line);
        margin = Some(match margin {
            None => this,
            Some(m) => {
                let common = m
                    .bytes()
                    .zip(this.bytes())
                    .take_while(|(a, b)| a == b)
                    .count();
                &m[..common]
            }
        });
    }
    let margin = margin.unwrap_or("");
    let cut: Vec<&str> = lines
        .iter()
        .map(|l| l.strip_prefix(margin).unwrap_or(l))
        .collect();
    cut.join("\n")
}

/// The import names a `top_level.txt` declares (whitespace-separated). Public for the
/// `index_manifests` fuzz target.
pub fn top_level_names(text: &str) -> Vec<String> {
    text.split_whitespace().map(str::to_owned).collect()
}

fn read_distribution(
    root: &Path,
    env: &Environment,
    dir: &Path,
    folder: &str,
    budget: &ReadBudget,
) -> Option<Distribution> {
    let base = &env.confined_to;
    let metadata_file = |name: &str| metadata_file(base, dir, name, budget);
    let Metadata {
        name,
        version,
        doc_text,
    } = metadata_file("METADATA")
        .or_else(|| metadata_file("PKG-INFO"))
        .and_then(|text| parse_metadata(&text))?;
    let declared: Vec<String> = metadata_file("top_level.txt")
        .map(|t| top_level_names(&t))
        .unwrap_or_default();
    let record_py = metadata_file("RECORD")
        .map(|record| record_py_paths(&record))
        .unwrap_or_default();
    let top_level = if declared.is_empty() {
        inferred_top_level(&record_py)
    } else {
        declared
    };
    let stem = folder
        .trim_end_matches(".dist-info")
        .trim_end_matches(".egg-info");
    let stem = stem.split('-').next().unwrap_or(stem);
    Some(Distribution {
        name,
        version,
        top_level,
        record_py,
        site: dir.parent().map_or_else(PathBuf::new, Path::to_path_buf),
        confined_to: base.clone(),
        editable: metadata_file("direct_url.json")
            .and_then(|text| editable_source(&text))
            .and_then(|source| {
                let confined_to = if env.editable_anywhere {
                    Path::new("/")
                } else {
                    root
                };
                confine(confined_to, &source).ok()
            }),
        normalized: normalize(stem),
        doc_text,
    })
}

/// The `.py` files a `RECORD` lists (its first CSV field, quoted or not), at most
/// [`MAX_RECORD_FILES`]. Public for the `index_manifests` fuzz target.
pub fn record_py_paths(record: &str) -> Vec<String> {
    record
        .lines()
        .map(|line| match line.strip_prefix('"') {
            Some(quoted) => quoted.split('"').next().unwrap_or(""),
            None => line.split(',').next().unwrap_or(""),
        })
        .filter(|path| path.ends_with(".py") && path.rsplit('/').next() != Some(".py"))
        .take(MAX_RECORD_FILES)
        .map(str::to_owned)
        .collect()
}

/// `importlib.metadata`'s `_top_level_inferred`: for each `.py` file `RECORD` lists, its first
/// path part, or its stem when it has one part. Public for the `index_manifests` fuzz target.
pub fn inferred_top_level(record_py: &[String]) -> Vec<String> {
    let mut names = BTreeSet::new();
    for path in record_py {
        match path.split_once('/') {
            Some((first, _)) => names.insert(first.to_owned()),
            None => names.insert(path.trim_end_matches(".py").to_owned()),
        };
    }
    names.into_iter().collect()
}

/// A distribution name as `importlib.metadata` compares them: runs of `-_.` as one `_`, lowercase.
/// Public for the `index_manifests` fuzz target.
pub fn normalize(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut in_run = false;
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            if !in_run {
                out.push('_');
            }
            in_run = true;
        } else {
            out.push(c.to_ascii_lowercase());
            in_run = false;
        }
    }
    out
}

/// Top-level module and package names local to the project: packages (folders with
/// `__init__.py`) and `.py` files directly under the root.
pub fn local_top_names(root: &Path) -> BTreeSet<String> {
    let mut local = BTreeSet::new();
    let Ok(entries) = std::fs::read_dir(root) else {
        return local;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
            continue;
        };
        if path.is_dir() && path.join("__init__.py").exists() {
            local.insert(name);
        } else if path.is_file() {
            if let Some(stem) = name.strip_suffix(".py") {
                local.insert(stem.to_owned());
            }
        }
    }
    local
}

/// The external import names: not the standard library's, not the project's, not `_`-prefixed.
pub fn external_imports(imports: &BTreeSet<String>, root: &Path) -> Vec<String> {
    let local = local_top_names(root);
    imports
        .iter()
        .filter(|n| {
            !n.is_empty()
                && !n.starts_with('_')
                && PYTHON_STDLIB_MODULES.binary_search(&n.as_str()).is_err()
                && !local.contains(*n)
        })
        .cloned()
        .collect()
}

/// One import resolved against `dists` ([`Installed::resolve`]), for tests: code resolving many
/// imports builds [`Installed`] once.
#[cfg(test)]
fn resolve(import: &str, dists: &[Distribution]) -> Option<(String, String)> {
    Installed::new(dists).resolve(import)
}

/// The installed distributions, found by import name and by normalised name in one lookup each.
/// Built once per call of [`api_docs`], [`api_modules`] and [`fingerprint`]: scanning every
/// distribution for every import made the work imports × distributions, both of which a
/// repository chooses (300,000 imports in one 4.5 MB source over 10,000 dist-infos: 38.5 s).
struct Installed<'a> {
    /// For each top-level import name, the smallest name of a distribution providing it.
    provider: HashMap<&'a str, &'a str>,
    /// For each normalised name, the first distribution (in the given order) with it.
    by_normalized: HashMap<&'a str, &'a Distribution>,
}

impl<'a> Installed<'a> {
    fn new(dists: &'a [Distribution]) -> Installed<'a> {
        let mut installed = Installed {
            provider: HashMap::new(),
            by_normalized: HashMap::with_capacity(dists.len()),
        };
        for dist in dists {
            installed
                .by_normalized
                .entry(dist.normalized.as_str())
                .or_insert(dist);
            for top in &dist.top_level {
                installed
                    .provider
                    .entry(top.as_str())
                    .and_modify(|name| *name = (*name).min(dist.name.as_str()))
                    .or_insert(dist.name.as_str());
            }
        }
        installed
    }

    /// The distribution an import name resolves to and its version, as the reference's
    /// `_import_to_distribution` and `_distribution_version` find them: the least name among the
    /// distributions providing it, else a distribution named like it; `None` when neither is
    /// installed.
    fn resolve(&self, import: &str) -> Option<(String, String)> {
        let dist = match self.provider.get(import) {
            Some(name) => (*name).to_owned(),
            None => {
                self.by_name(import)?;
                import.to_owned()
            }
        };
        let version = self
            .by_name(&dist)
            .map_or_else(String::new, |d| d.version.clone());
        Some((dist, version))
    }

    fn by_name(&self, name: &str) -> Option<&'a Distribution> {
        self.by_normalized.get(normalize(name).as_str()).copied()
    }
}

/// The reference's `api-doc` units: for each external import (in name order) that resolves to an
/// installed distribution with a description, that distribution's description.
pub fn api_docs(root: &Path, imports: &BTreeSet<String>, dists: &[Distribution]) -> Vec<ApiDoc> {
    let installed = Installed::new(dists);
    let mut out = Vec::new();
    for name in external_imports(imports, root) {
        let Some((dist, version)) = installed.resolve(&name) else {
            continue;
        };
        let Some(found) = installed.by_name(&dist) else {
            continue;
        };
        if found.doc_text.trim().is_empty() {
            continue;
        }
        out.push(ApiDoc {
            distribution: dist,
            version: (!version.is_empty()).then_some(version),
            text: found.doc_text.clone(),
        });
    }
    out
}

/// The reference's `api-module` units: for each external import (in name order), the public
/// top-level definitions of up to [`MAX_API_FILES`] of its distribution's `.py` files whose
/// first path part is the import (`RECORD` order), else one declared-only unit; none more once
/// `budget` is spent.
pub fn api_modules(
    root: &Path,
    imports: &BTreeSet<String>,
    dists: &[Distribution],
    budget: &ReadBudget,
) -> Vec<ApiModule> {
    let installed = Installed::new(dists);
    // Each distribution's recorded files by first path part, made when an import first resolves
    // to it: scanning all of them for each import made the work imports × files (20,000 imports
    // of one distribution whose `RECORD` lists 100,000 others' took 24 s, 1 MB read in all).
    let mut recorded: HashMap<&str, HashMap<&str, Vec<usize>>> = HashMap::new();
    // Entries of editable source folders examined, for all imports together.
    let mut examined = 0;
    let mut out = Vec::new();
    for name in external_imports(imports, root) {
        if budget.spent() {
            break;
        }
        let Some((dist, version)) = installed.resolve(&name) else {
            out.push(ApiModule {
                path: name.clone(),
                symbol: None,
                signature: None,
                text: name.clone(),
                passage: None,
                language: None,
                provenance: Provenance::Declared {
                    distribution: name,
                    version: None,
                },
            });
            continue;
        };
        let version = (!version.is_empty()).then_some(version);
        let files = installed.by_name(&dist).map_or_else(Vec::new, |d| {
            let by_top = recorded
                .entry(d.normalized.as_str())
                .or_insert_with(|| recorded_by_top(d));
            source_files(d, &name, by_top, &mut examined)
        });
        if files.is_empty() {
            let text = format!("{dist} {}", version.as_deref().unwrap_or(""))
                .trim()
                .to_owned();
            out.push(ApiModule {
                path: dist.clone(),
                symbol: None,
                signature: None,
                text,
                passage: None,
                language: None,
                provenance: Provenance::Declared {
                    distribution: dist,
                    version,
                },
            });
            continue;
        }
        for file in files {
            let Some(text) = budget.read_text_at_most(&file, MAX_API_FILE_BYTES) else {
                continue;
            };
            let definitions =
                super::passages::python_definitions(&text, usize::MAX).unwrap_or_default();
            let public = definitions.into_iter().filter(|(signature, _)| {
                crate::corpus::text::definition_name(signature).is_some_and(|n| !n.starts_with('_'))
            });
            for (signature, doc) in public.take(MAX_API_SYMBOLS) {
                let symbol = crate::corpus::text::definition_name(&signature).map(str::to_owned);
                out.push(ApiModule {
                    path: name.clone(),
                    symbol,
                    // The reference hashes what `ast.get_docstring` gives: cleaned.
                    text: format!("{signature}\n{}", super::passages::cleandoc(&doc))
                        .trim_matches(crate::corpus::text::is_python_whitespace)
                        .to_owned(),
                    signature: Some(signature),
                    passage: None,
                    language: Some("python"),
                    provenance: Provenance::Source {
                        distribution: dist.clone(),
                        version: version.clone(),
                        resolved_from: file.to_string_lossy().into_owned(),
                    },
                });
            }
        }
    }
    out
}

/// The positions in `dist.record_py` of the files under each first path part.
fn recorded_by_top(dist: &Distribution) -> HashMap<&str, Vec<usize>> {
    let mut by_top: HashMap<&str, Vec<usize>> = HashMap::new();
    for (at, rel) in dist.record_py.iter().enumerate() {
        let top = rel.split('/').next().unwrap_or("");
        by_top.entry(top).or_default().push(at);
    }
    by_top
}

/// Up to [`MAX_API_FILES`] `.py` files of `dist` under `import` (`import/...` or `import.py`),
/// each a regular file inside the distribution's confinement: those `RECORD` lists (`by_top`:
/// [`recorded_by_top`]), in its order, or for an editable install those of its source folder
/// (`import` there or under `src/`; `examined`: [`package_files`]').
fn source_files(
    dist: &Distribution,
    import: &str,
    by_top: &HashMap<&str, Vec<usize>>,
    examined: &mut usize,
) -> Vec<PathBuf> {
    if let Some(source) = &dist.editable {
        return editable_files(source, import, examined);
    }
    let module = format!("{import}.py");
    let mut positions: Vec<usize> = [import, module.as_str()]
        .iter()
        .filter_map(|top| by_top.get(top))
        .flatten()
        .copied()
        .collect();
    positions.sort_unstable();
    positions.dedup();
    let mut out = Vec::new();
    for rel in positions.into_iter().map(|at| &dist.record_py[at]) {
        let Ok(path) = confine(&dist.confined_to, &dist.site.join(rel)) else {
            continue;
        };
        if std::fs::metadata(&path).is_ok_and(|m| m.is_file()) {
            out.push(path);
        }
        if out.len() >= MAX_API_FILES {
            break;
        }
    }
    out
}

/// Entries of an editable install's source folder examined for one import, in all: a source
/// folder of millions of files cannot make the build run away.
pub const MAX_EDITABLE_ENTRIES: usize = 10_000;

/// Entries of editable installs' source folders examined per build, for all imports together:
/// a planted `top_level.txt` naming 500 imports, each a link to one folder of 10,000 entries,
/// took 16 s (30 ms an import, and 4 MiB of names is 500,000 imports).
pub const MAX_EDITABLE_ENTRIES_IN_ALL: usize = 100_000;

/// Folder depth below the import's package examined in an editable source folder.
pub const MAX_EDITABLE_DEPTH: usize = 8;

/// The source folder a PEP 610 `direct_url.json` names for an editable install: its `url` when
/// `dir_info.editable` is true and the URL is `file://` with an absolute, percent-decoded path.
/// The path may still climb (`/a/../..`): its caller confines it. Public for the
/// `index_manifests` fuzz target.
pub fn editable_source(text: &str) -> Option<PathBuf> {
    let value = json_manifest(text)?;
    let editable = value.get("dir_info")?.get("editable")?.as_bool()?;
    let url = value.get("url")?.as_str()?;
    let path = url.strip_prefix("file://")?;
    // `file://localhost/p` names the same file as `file:///p`; another host is not this machine.
    let path = path.strip_prefix("localhost").unwrap_or(path);
    let decoded = agentteams_mcp::server::uri::percent_decode(path)?;
    let decoded = String::from_utf8(decoded).ok()?;
    (editable && decoded.starts_with('/') && !decoded.contains('\0'))
        .then(|| PathBuf::from(decoded))
}

/// The `.py` files of `import` in an editable install's `source` folder (`source/import.py` or
/// the package folder `source/import/`, else the same under `source/src/`), in path order, at
/// most [`MAX_API_FILES`]; each a regular file inside `source` (links out skipped).
fn editable_files(source: &Path, import: &str, examined: &mut usize) -> Vec<PathBuf> {
    for base in [source.to_path_buf(), source.join("src")] {
        let Ok(base) = confine(source, &base) else {
            continue;
        };
        let module = base.join(format!("{import}.py"));
        if confine(source, &module).is_ok_and(|m| regular(&m)) {
            return vec![module];
        }
        let package = base.join(import);
        let Ok(package) = confine(source, &package) else {
            continue;
        };
        if package.is_dir() {
            let files = package_files(source, &package, examined);
            if !files.is_empty() {
                return files;
            }
        }
    }
    Vec::new()
}

fn regular(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_file())
}

/// [`editable_files`]' walk of one package folder: breadth by sorted name, bounded by
/// [`MAX_EDITABLE_ENTRIES`] and [`MAX_EDITABLE_DEPTH`], and by [`MAX_EDITABLE_ENTRIES_IN_ALL`]
/// with the walks before it (`in_all`, counted on).
fn package_files(source: &Path, package: &Path, in_all: &mut usize) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut folders = vec![(package.to_path_buf(), 0usize)];
    let mut examined = 0usize;
    let past = |examined: usize, in_all: usize| {
        examined > MAX_EDITABLE_ENTRIES || in_all > MAX_EDITABLE_ENTRIES_IN_ALL
    };
    let mut at = 0;
    while at < folders.len() && files.len() < MAX_API_FILES {
        let (folder, depth) = folders[at].clone();
        at += 1;
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        let mut names: Vec<std::ffi::OsString> = Vec::new();
        for entry in entries.flatten() {
            examined += 1;
            *in_all += 1;
            if past(examined, *in_all) {
                break;
            }
            names.push(entry.file_name());
        }
        names.sort();
        for name in names {
            let path = folder.join(&name);
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            if meta.is_dir() && depth < MAX_EDITABLE_DEPTH {
                folders.push((path, depth + 1));
            } else if meta.file_type().is_file()
                && path.extension().is_some_and(|e| e == "py")
                && confine(source, &path).is_ok()
                && files.len() < MAX_API_FILES
            {
                files.push(path);
            }
        }
        if past(examined, *in_all) {
            break;
        }
    }
    files
}

/// The reference's `dependency_fingerprint(manifest_texts, external, dist_versions)`: SHA-256
/// over `M\0` + each manifest's text, `I\0` + each external import name, `D\0` +
/// `dist==version` for each resolved distribution (names and pairs sorted, without repeats).
/// [`FingerprintError::Unread`] when `budget` is spent (`dists` may then lack some), or is by
/// a manifest.
pub fn fingerprint(
    root: &Path,
    imports: &BTreeSet<String>,
    dists: &[Distribution],
    budget: &ReadBudget,
) -> Result<String, FingerprintError> {
    if budget.spent() {
        return Err(FingerprintError::Unread);
    }
    let mut hash = Sha256::new();
    for name in DEPENDENCY_MANIFESTS {
        let path = root.join(name);
        if std::fs::symlink_metadata(&path).is_err() {
            continue;
        }
        let text = manifest_text(root, &path, budget).map_err(|reason| {
            if budget.spent() {
                FingerprintError::Unread
            } else {
                FingerprintError::Manifest { name, reason }
            }
        })?;
        if let Some(text) = text {
            hash.update(b"M\0");
            hash.update(text.as_bytes());
        }
    }
    let external = external_imports(imports, root);
    let installed = Installed::new(dists);
    let mut pairs = BTreeSet::new();
    for name in &external {
        hash.update(b"I\0");
        hash.update(name.as_bytes());
        if let Some(pair) = installed.resolve(name) {
            pairs.insert(pair);
        }
    }
    for (dist, version) in pairs {
        hash.update(b"D\0");
        hash.update(format!("{dist}=={version}").as_bytes());
    }
    Ok(sha256::to_hex(&hash.finish()))
}

/// A manifest's text as the reference reads it (`read_text`: strict UTF-8, universal newlines;
/// `None`, skipped, when it is not UTF-8). An error for what the reference would read but this
/// builder refuses to: a link out of the project, a FIFO or device, a file over the limit.
fn manifest_text(root: &Path, path: &Path, budget: &ReadBudget) -> Result<Option<String>, String> {
    let inside = confine(root, path)?;
    let bytes = budget
        .read_at_most(&inside, MAX_MANIFEST_BYTES)
        .map_err(|e| format!("cannot read it: {e}"))?
        .ok_or_else(|| format!("larger than {MAX_MANIFEST_BYTES} bytes (MAX_MANIFEST_BYTES)"))?;
    let Ok(text) = String::from_utf8(bytes) else {
        return Ok(None);
    };
    Ok(Some(text.replace("\r\n", "\n").replace('\r', "\n")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manifest_is_an_object_and_its_tree_is_bounded() {
        let object = json_manifest(r#"{"url": "file:///src", "a": {"b": 1}}"#).unwrap();
        assert_eq!(
            object.get("url").and_then(Value::as_str),
            Some("file:///src")
        );
        for not_an_object in ["[1]", "\"x\"", "3", "", "{", "nonsense"] {
            assert!(json_manifest(not_an_object).is_none(), "{not_an_object}");
        }
        // As long as a manifest may be, every value the smallest: its tree would take 32 bytes a
        // value, 16 times the text, so the parse stops at the limit instead.
        let flood = format!(
            "{{\"a\": [{}0]}}",
            "0,".repeat(MAX_MANIFEST_BYTES as usize / 2 - 8)
        );
        let limits = json::Limits {
            max_tree_bytes: MAX_MANIFEST_TREE_BYTES,
            ..json::Limits::default()
        };
        let error = json::parse_with_limits(flood.as_bytes(), limits).unwrap_err();
        assert!(error.is_memory_limit(), "{error}");
        assert!(json_manifest(&flood).is_none());
    }
    use std::fs;

    /// The text and `source_hash` the reference (CPython 3.11: `f"{sig}\n{ast.get_docstring(node)
    /// or ''}".strip()`, and `importlib.metadata`'s Name, Summary and payload) gives, computed by
    /// CPython and pinned here, so a refresh by either tool leaves the other's API partitions as
    /// they are.
    #[test]
    fn api_texts_and_hashes_are_the_references() {
        let source = "\ndef plain():\n    \"\"\"One line.\"\"\"\n\ndef indented(a, b=1):\n    \"\"\"Summary line.\n\n        Indented more.\n    Back to the margin.\n\tTab-indented line.\n\n    \"\"\"\n\nclass Tabs:\n\t\"\"\"First.\n\tSecond with\tinner tab.\n\t\tDeeper.\n\t\"\"\"\n\ndef blank_lines():\n    \"\"\"\n\n    Starts after blank lines.\n\n\n    \"\"\"\n\ndef none_at_all(x):\n    return x\n";
        let expected = [
            ("def plain()\nOne line.", "bc854c92cc4611984510616f8e4aaf8c8cd8052f2b973dcb5a4c3de18ac97226"),
            (
                "def indented(a, b=1)\nSummary line.\n\n    Indented more.\nBack to the margin.\n    Tab-indented line.",
                "7a7da320925568dc30e42385e048d7e84be897deb3fb7c4b4d34b0c41b72f019",
            ),
            (
                "class Tabs\nFirst.\nSecond with     inner tab.\n        Deeper.",
                "e3f6966d5493768adc6152bfe0966a6accafa5a3b9a9c7edba4b4d374c6f3b26",
            ),
            (
                "def blank_lines()\nStarts after blank lines.",
                "5a92e3a525b2de0ac36e871cae573b0825ae173b16affd7142ecf51b253468ae",
            ),
            ("def none_at_all(x)", "eb7d05d71ecbdd87e5b0849f1c8eaa9d5960813a2affe32992783ac72927a8f2"),
        ];
        let definitions = super::super::passages::python_definitions(source, usize::MAX).unwrap();
        assert_eq!(definitions.len(), expected.len());
        for ((signature, doc), (text, hash)) in definitions.iter().zip(expected) {
            let ours = format!("{signature}\n{}", super::super::passages::cleandoc(doc));
            let ours = ours.trim_matches(crate::corpus::text::is_python_whitespace);
            assert_eq!(ours, text);
            assert_eq!(agentteams_mcp::sha256::hex_digest(ours.as_bytes()), hash);
        }
        let metadata = "Metadata-Version: 2.1\nName: Demo \nVersion: 1.0\nSummary:   A folded\n  summary line  \nAuthor: x\n\nLong text.  \n\n  indented\n\n";
        let parsed = parse_metadata(metadata).unwrap();
        assert_eq!(
            parsed.doc_text,
            "Demo \n      A folded\nsummary line  \nLong text.  \n\n  indented\n\n"
        );
        assert_eq!(
            agentteams_mcp::sha256::hex_digest(parsed.doc_text.as_bytes()),
            "700f2c5578663bb516d678d4ee3be0e63edb231f5a568515b7541351949d62b7"
        );
        assert_eq!(
            (parsed.name.as_str(), parsed.version.as_str()),
            ("Demo", "1.0")
        );
    }

    /// The budget of one build.
    fn one_build() -> ReadBudget {
        ReadBudget::new(MAX_ENVIRONMENT_BYTES)
    }

    /// A project directory under the temp dir, canonicalised, removed by the caller.
    fn project(tag: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("deps-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        fs::canonicalize(&dir).unwrap()
    }

    fn write(path: &Path, text: &str) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    /// Writes each `(path under base, text)`.
    fn write_files(base: &Path, files: &[(&str, &str)]) {
        for (path, text) in files {
            write(&base.join(path), text);
        }
    }

    /// The installed PyYAML 6.0.1 several tests resolve `yaml` to.
    fn install_pyyaml(site: &Path) {
        write_files(
            site,
            &[
                (
                    "PyYAML-6.0.1.dist-info/METADATA",
                    "Name: PyYAML\nVersion: 6.0.1\n",
                ),
                ("PyYAML-6.0.1.dist-info/top_level.txt", "yaml\n"),
            ],
        );
    }

    fn set(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    /// A distribution of `name` (its folder stem `stem`) providing `top_level`, for lookups.
    fn installed(name: &str, stem: &str, version: &str, top_level: &[&str]) -> Distribution {
        Distribution {
            name: name.into(),
            version: version.into(),
            top_level: top_level.iter().map(|t| t.to_string()).collect(),
            record_py: Vec::new(),
            site: PathBuf::new(),
            confined_to: PathBuf::new(),
            editable: None,
            normalized: normalize(stem),
            doc_text: String::new(),
        }
    }

    #[test]
    fn lookups_by_import_and_by_name_agree_with_a_scan_of_every_distribution() {
        // Providers overlapping in any order, names equal once normalised, an import that only
        // names a distribution, and repeats: each answer as a scan of the list gives it (the
        // smallest-named provider; the first distribution with a normalised name).
        let dists = [
            installed("Zeta", "zeta", "1", &["shared", "z"]),
            installed("alpha", "alpha", "2", &["shared"]),
            installed("Beta_Pkg", "Beta_Pkg", "3", &["beta"]),
            installed("beta-pkg", "beta-pkg", "4", &["beta2"]),
            installed("Alpha", "Alpha", "5", &["shared"]),
            installed("solo", "solo", "", &[]),
        ];
        let scan = |import: &str| -> Option<(String, String)> {
            let by_name = |name: &str| dists.iter().find(|d| d.normalized == normalize(name));
            let providers: BTreeSet<&str> = (dists.iter())
                .filter(|d| d.top_level.iter().any(|t| t == import))
                .map(|d| d.name.as_str())
                .collect();
            let dist = match providers.first() {
                Some(name) => name.to_string(),
                None => by_name(import).map(|_| import.to_string())?,
            };
            let version = by_name(&dist).map_or_else(String::new, |d| d.version.clone());
            Some((dist, version))
        };
        for import in [
            "shared", "z", "beta", "beta2", "Beta_Pkg", "beta.pkg", "BETA-PKG", "solo", "zeta",
            "alpha", "absent", "",
        ] {
            assert_eq!(resolve(import, &dists), scan(import), "{import}");
        }
        // The version is the first distribution's named like the provider, once normalised.
        assert_eq!(
            resolve("shared", &dists),
            Some(("Alpha".into(), "2".into()))
        );
        assert_eq!(
            resolve("beta.pkg", &dists),
            Some(("beta.pkg".into(), "3".into()))
        );
    }

    #[test]
    fn many_imports_over_many_distributions_are_resolved_in_linear_time() {
        // What a repository chooses on both sides: 300,000 imports (one 4.5 MB source) and
        // 10,000 dist-infos (MAX_DISTRIBUTIONS). Scanning every distribution per import took
        // 38.5 s in a release build; a lookup each is well under the bound in a debug one.
        let root = std::env::temp_dir().join(format!("deps-many-imports-{}", std::process::id()));
        fs::create_dir_all(&root).unwrap();
        let dists: Vec<Distribution> = (0..10_000)
            .map(|i| {
                let name = format!("dist{i}");
                installed(&name, &name, "1", &[&format!("top{i}")])
            })
            .collect();
        let imports: BTreeSet<String> = (0..300_000).map(|i| format!("top{}", i * 7)).collect();
        let (send, receive) = std::sync::mpsc::channel();
        std::thread::spawn({
            let root = root.clone();
            move || {
                let _ = send.send(fingerprint(&root, &imports, &dists, &one_build()).is_ok());
            }
        });
        let done = receive.recv_timeout(std::time::Duration::from_secs(30));
        fs::remove_dir_all(&root).unwrap();
        assert_eq!(
            done,
            Ok(true),
            "the fingerprint of 300,000 imports did not finish"
        );
    }

    #[test]
    fn many_imports_of_one_distribution_find_their_files_in_linear_time() {
        // One distribution naming 200,000 top-level names (a 1.6 MB top_level.txt) and recording
        // 100,000 files of none of them (a 2 MB RECORD), all imported: scanning every recorded
        // file per import was 2 x 10^10 comparisons (20,000 imports took 24 s in a release build).
        let root = project("many-recorded");
        let site = root.join("site");
        for (rel, def) in [("t0/b.py", "b"), ("t0.py", "m"), ("t0/a.py", "a")] {
            write(&site.join(rel), &format!("def from_{def}():\n    pass\n"));
        }
        let tops: Vec<String> = (0..200_000).map(|i| format!("t{i}")).collect();
        let mut dist = installed("big", "big", "1", &[]);
        dist.top_level = tops.clone();
        dist.record_py = vec!["t0/b.py".to_owned()];
        dist.record_py
            .extend((0..100_000).map(|i| format!("zz/m{i}.py")));
        dist.record_py
            .extend(["t0.py".to_owned(), "t0/a.py".to_owned()]);
        (dist.site, dist.confined_to) = (site, root.clone());
        let imports: BTreeSet<String> = tops.into_iter().collect();
        let (send, receive) = std::sync::mpsc::channel();
        std::thread::spawn({
            let root = root.clone();
            move || {
                let units = api_modules(&root, &imports, &[dist], &one_build());
                let _ = send.send(summary(&units[..4]));
            }
        });
        let done = receive.recv_timeout(std::time::Duration::from_secs(30));
        fs::remove_dir_all(&root).unwrap();
        let first = done.expect("the files of 200,000 imports were not found in time");
        // The recorded files of `t0`, in RECORD order; the next import is declared only.
        let t0 = |symbol: &str| ("t0".to_owned(), Some(symbol.to_owned()));
        assert_eq!(
            first,
            [
                t0("from_b"),
                t0("from_m"),
                t0("from_a"),
                ("big".to_owned(), None)
            ]
        );
    }

    #[test]
    fn the_stdlib_list_is_sorted_for_binary_search() {
        assert!(PYTHON_STDLIB_MODULES.windows(2).all(|w| w[0] < w[1]));
        assert!(PYTHON_STDLIB_MODULES.contains(&"os"));
    }

    #[test]
    fn external_imports_leave_out_the_stdlib_the_project_and_private_names() {
        let root = project("external");
        write(&root.join("mine/__init__.py"), "");
        write(&root.join("helper.py"), "");
        write(&root.join("notpkg/x.py"), "");
        let imports = set(&["os", "mine", "helper", "_private", "yaml", "notpkg", "json"]);
        assert_eq!(external_imports(&imports, &root), ["notpkg", "yaml"]);
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn distributions_resolve_by_top_level_record_or_name() {
        let root = project("resolve");
        let site = root.join(".venv/lib/python3.11/site-packages");
        write_files(
            &site,
            &[
                (
                    "PyYAML-6.0.1.dist-info/METADATA",
                    "Metadata-Version: 2.1\nName: PyYAML\nVersion: 6.0.1\n\nlong text\nName: not this\n",
                ),
                ("PyYAML-6.0.1.dist-info/top_level.txt", "_yaml\nyaml\n"),
                (
                    "requests-2.31.0.dist-info/METADATA",
                    "Name: requests\nVersion: 2.31.0\n",
                ),
                (
                    "requests-2.31.0.dist-info/RECORD",
                    "requests/__init__.py,sha256=x,1\n\"requests/a,b.py\",,\nsix.py,,\nrequests-2.31.0.dist-info/METADATA,,\n",
                ),
                (
                    "typing_extensions-4.0.dist-info/METADATA",
                    "Name: typing_extensions\nVersion: 4.0\n",
                ),
            ],
        );
        let sites: Vec<PathBuf> = environment_dirs(&root)
            .into_iter()
            .map(|e| e.site)
            .collect();
        assert_eq!(sites, std::slice::from_ref(&site));
        let dists = distributions(&root, &environment_dirs(&root), &one_build());
        assert_eq!(dists.len(), 3);
        assert_eq!(dists[1].top_level, ["requests", "six"]);
        let got = |name: &str| resolve(name, &dists);
        assert_eq!(got("yaml"), Some(("PyYAML".into(), "6.0.1".into())));
        assert_eq!(got("six"), Some(("requests".into(), "2.31.0".into())));
        // No provider: a distribution named like the import (names compared normalised).
        assert_eq!(
            got("typing_extensions"),
            Some(("typing_extensions".into(), "4.0".into()))
        );
        assert_eq!(got("absent"), None);
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn api_docs_are_the_descriptions_of_the_imported_distributions() {
        let root = project("api-docs");
        let site = root.join(".venv/lib/python3.11/site-packages");
        write(
            &site.join("PyYAML-6.0.1.dist-info/METADATA"),
            "Name: PyYAML\r\nVersion: 6.0.1\r\nSummary: YAML parser and emitter\r\n\r\nLong text.\r\n",
        );
        write(&site.join("PyYAML-6.0.1.dist-info/top_level.txt"), "yaml\n");
        let long = "x".repeat(MAX_DOC_CHARS + 10);
        write(
            &site.join("old-1.0.egg-info/PKG-INFO"),
            &format!("Name: old\nDescription: {long}\n"),
        );
        write(&site.join("bare-2.dist-info/METADATA"), "Name: bare\n");
        let dists = distributions(&root, &environment_dirs(&root), &one_build());
        let docs = api_docs(
            &root,
            &set(&["yaml", "old", "bare", "missing", "os"]),
            &dists,
        );
        let summary: Vec<(&str, Option<&str>, usize)> = docs
            .iter()
            .map(|d| {
                (
                    d.distribution.as_str(),
                    d.version.as_deref(),
                    d.text.chars().count(),
                )
            })
            .collect();
        // Name order of the imports; `bare` has only its name; the description is cut; PyYAML's
        // body keeps its final newline, as the reference's does.
        assert_eq!(
            summary,
            [
                ("bare", None, 4),
                ("old", None, MAX_DOC_CHARS),
                ("PyYAML", Some("6.0.1"), 42)
            ]
        );
        assert_eq!(
            docs[2].text,
            "PyYAML\nYAML parser and emitter\nLong text.\n"
        );
        fs::remove_dir_all(&root).unwrap();
    }

    /// A PEP 660 editable install: `RECORD` lists only the `.pth` hook, `direct_url.json` names
    /// the source folder.
    fn editable(site: &Path, dist: &str, url: &str) {
        let info = site.join(format!("{dist}-1.0.dist-info"));
        write(
            &info.join("METADATA"),
            &format!("Name: {dist}\nVersion: 1.0\n"),
        );
        write(
            &info.join("RECORD"),
            &format!("__editable__.{dist}-1.0.pth,,\n__editable___{dist}_finder.py,,\n"),
        );
        write(
            &info.join("direct_url.json"),
            &format!("{{\"dir_info\": {{\"editable\": true}}, \"url\": \"{url}\"}}"),
        );
    }

    fn summary(units: &[ApiModule]) -> Vec<(String, Option<String>)> {
        units
            .iter()
            .map(|u| (u.path.clone(), u.symbol.clone()))
            .collect()
    }

    #[test]
    fn editable_installs_are_read_from_their_source_folder_inside_the_project() {
        let root = project("editable");
        let site = root.join(".venv/lib/python3.11/site-packages");
        // A src layout, a flat layout, and a space percent-encoded in the URL.
        editable(
            &site,
            "gears",
            &format!("file://{}/libs/gears", root.display()),
        );
        write(
            &root.join("libs/gears/src/gears/__init__.py"),
            "def turn(n):\n    \"\"\"Turn n times.\"\"\"\n",
        );
        write(
            &root.join("libs/gears/src/gears/teeth/cut.py"),
            "def cut():\n    pass\n",
        );
        editable(
            &site,
            "cogs",
            &format!("file://{}/libs/my%20cogs", root.display()),
        );
        write(&root.join("libs/my cogs/cogs.py"), "class Cog:\n    pass\n");
        let dists = distributions(&root, &environment_dirs(&root), &one_build());
        let units = api_modules(&root, &set(&["gears", "cogs"]), &dists, &one_build());
        assert_eq!(
            summary(&units),
            [
                ("cogs".to_owned(), Some("Cog".to_owned())),
                ("gears".to_owned(), Some("turn".to_owned())),
                ("gears".to_owned(), Some("cut".to_owned())),
            ]
        );
        let Provenance::Source { resolved_from, .. } = &units[2].provenance else {
            panic!("{:?}", units[2].provenance);
        };
        assert!(resolved_from.ends_with("libs/gears/src/gears/teeth/cut.py"));
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn editable_installs_naming_folders_outside_the_project_or_malformed_are_declared_only() {
        let root = project("editable-hostile");
        let outside = project("editable-hostile-outside");
        write(
            &outside.join("secret/__init__.py"),
            "def stolen():\n    pass\n",
        );
        write(&outside.join("linked.py"), "def stolen_too():\n    pass\n");
        let site = root.join(".venv/lib/python3.11/site-packages");
        // A planted direct_url.json naming a folder of the machine outside the checkout.
        editable(&site, "secret", &format!("file://{}", outside.display()));
        // Inside the project, but the package is a link out of it.
        editable(&site, "linked", &format!("file://{}/src", root.display()));
        fs::create_dir_all(root.join("src")).unwrap();
        std::os::unix::fs::symlink(outside.join("linked.py"), root.join("src/linked.py")).unwrap();
        // Malformed: not editable, another host, bad escapes, not JSON.
        for (dist, body) in [
            (
                "plain",
                "{\"dir_info\": {}, \"url\": \"file:///\"}".to_owned(),
            ),
            (
                "remote",
                "{\"dir_info\": {\"editable\": true}, \"url\": \"file://host/x\"}".to_owned(),
            ),
            (
                "escape",
                "{\"dir_info\": {\"editable\": true}, \"url\": \"file:///%zz\"}".to_owned(),
            ),
            ("garbage", "{".to_owned()),
        ] {
            editable(&site, dist, "file:///");
            write(
                &site.join(format!("{dist}-1.0.dist-info/direct_url.json")),
                &body,
            );
        }
        let dists = distributions(&root, &environment_dirs(&root), &one_build());
        assert!(dists
            .iter()
            .all(|d| d.editable.is_none() || d.name == "linked"));
        let units = api_modules(
            &root,
            &set(&["secret", "linked", "plain", "remote", "escape", "garbage"]),
            &dists,
            &one_build(),
        );
        assert!(
            units
                .iter()
                .all(|u| matches!(u.provenance, Provenance::Declared { .. })),
            "{:?}",
            summary(&units)
        );
        fs::remove_dir_all(&root).unwrap();
        fs::remove_dir_all(&outside).unwrap();
    }

    #[test]
    fn an_editable_source_folder_is_walked_within_its_bounds() {
        let root = project("editable-bounds");
        let site = root.join(".venv/lib/python3.11/site-packages");
        editable(&site, "wide", &format!("file://{}/wide", root.display()));
        for i in 0..(MAX_API_FILES + 3) {
            write(
                &root.join(format!("wide/wide/m{i:02}.py")),
                &format!("def f{i}():\n    pass\n"),
            );
        }
        // Deeper than the depth bound: never reached.
        let mut deep = root.join("wide/wide/z");
        for _ in 0..MAX_EDITABLE_DEPTH + 1 {
            deep = deep.join("d");
        }
        write(&deep.join("deep.py"), "def too_deep():\n    pass\n");
        // A package whose only file is just within the depth bound, one just beyond it.
        editable(&site, "fits", &format!("file://{}/fits", root.display()));
        editable(&site, "sunk", &format!("file://{}/sunk", root.display()));
        let (mut fits, mut sunk) = (root.join("fits/fits"), root.join("sunk/sunk"));
        for _ in 0..MAX_EDITABLE_DEPTH {
            fits = fits.join("d");
            sunk = sunk.join("d");
        }
        write(&fits.join("at_bound.py"), "def at_bound():\n    pass\n");
        write(&sunk.join("d/too_deep.py"), "def too_deep():\n    pass\n");
        let dists = distributions(&root, &environment_dirs(&root), &one_build());
        let units = api_modules(&root, &set(&["wide", "fits", "sunk"]), &dists, &one_build());
        let symbols: Vec<String> = units.iter().filter_map(|u| u.symbol.clone()).collect();
        assert_eq!(symbols, ["at_bound", "f0", "f1", "f2", "f3", "f4", "f5"]);
        let sunk: Vec<&ApiModule> = units.iter().filter(|u| u.path == "sunk").collect();
        assert_eq!(sunk.len(), 1);
        assert!(matches!(sunk[0].provenance, Provenance::Declared { .. }));
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn editable_source_folders_are_walked_within_one_bound_for_all_imports() {
        // 60 imports, each a link to one folder of 2,000 entries whose one `.py` file sorts last:
        // each walk finds it within MAX_EDITABLE_ENTRIES, but only 50 walks fit in
        // MAX_EDITABLE_ENTRIES_IN_ALL (the limit is met exactly, not passed, by the 50th).
        assert_eq!(MAX_EDITABLE_ENTRIES_IN_ALL, 50 * 2_000);
        let root = project("editable-in-all");
        let site = root.join(".venv/lib/python3.11/site-packages");
        editable(&site, "ed", &format!("file://{}/lib", root.display()));
        let names: Vec<String> = (0..60).map(|i| format!("t{i:02}")).collect();
        write(
            &site.join("ed-1.0.dist-info/top_level.txt"),
            &names.join("\n"),
        );
        for i in 0..1_999 {
            write(&root.join(format!("lib/big/f{i:04}.txt")), "");
        }
        write(&root.join("lib/big/zz.py"), "def found():\n    pass\n");
        for name in &names {
            std::os::unix::fs::symlink("big", root.join("lib").join(name)).unwrap();
        }
        let dists = distributions(&root, &environment_dirs(&root), &one_build());
        let imports: BTreeSet<String> = names.iter().cloned().collect();
        let units = api_modules(&root, &imports, &dists, &one_build());
        fs::remove_dir_all(&root).unwrap();
        let found: Vec<&str> = units
            .iter()
            .filter(|u| u.symbol.as_deref() == Some("found"))
            .map(|u| u.path.as_str())
            .collect();
        assert_eq!(found, names[..50]);
        assert_eq!(units.len(), 60);
    }

    #[test]
    fn api_modules_are_public_definitions_read_from_recorded_files_inside_the_project() {
        let root = project("api-modules");
        let outside = project("api-modules-outside");
        write(
            &outside.join("evil.py"),
            "def stolen():\n    \"\"\"Secret.\"\"\"\n",
        );
        let site = root.join(".venv/lib/python3.11/site-packages");
        write(
            &site.join("requests-2.31.0.dist-info/METADATA"),
            "Name: requests\nVersion: 2.31.0\n",
        );
        let escape = format!(
            "requests/../../../../../../../..{}/evil.py",
            outside.display()
        );
        write(
            &site.join("requests-2.31.0.dist-info/RECORD"),
            &format!(
                "requests/__init__.py,,\nrequests/big.py,,\nrequests/fifo.py,,\n{escape},,\nrequests/linked.py,,\n"
            ),
        );
        write(
            &site.join("requests/__init__.py"),
            "def get(url):\n    \"\"\"Send a GET.\"\"\"\n\ndef _private():\n    pass\n\nclass Session:\n    pass\n",
        );
        write(&site.join("requests/big.py"), &"# x\n".repeat(60_000));
        assert!(std::process::Command::new("mkfifo")
            .arg(site.join("requests/fifo.py"))
            .status()
            .unwrap()
            .success());
        std::os::unix::fs::symlink(outside.join("evil.py"), site.join("requests/linked.py"))
            .unwrap();
        install_pyyaml(&site);
        let dists = distributions(&root, &environment_dirs(&root), &one_build());
        let units = api_modules(
            &root,
            &set(&["requests", "yaml", "attrs"]),
            &dists,
            &one_build(),
        );
        let summary: Vec<(&str, Option<&str>, &str)> = units
            .iter()
            .map(|u| (u.path.as_str(), u.symbol.as_deref(), u.text.as_str()))
            .collect();
        // Links out, FIFOs and files over the limit are never read; private names are skipped.
        assert_eq!(
            summary,
            [
                ("attrs", None, "attrs"),
                ("requests", Some("get"), "def get(url)\nSend a GET."),
                ("requests", Some("Session"), "class Session"),
                ("PyYAML", None, "PyYAML 6.0.1"),
            ]
        );
        assert_eq!(
            units[1].provenance,
            Provenance::Source {
                distribution: "requests".into(),
                version: Some("2.31.0".into()),
                resolved_from: site
                    .join("requests/__init__.py")
                    .to_string_lossy()
                    .into_owned(),
            }
        );
        fs::remove_dir_all(&root).unwrap();
        fs::remove_dir_all(&outside).unwrap();
    }

    #[test]
    fn the_fingerprint_follows_the_references_recipe() {
        let root = project("recipe");
        write(&root.join("requirements.txt"), "pyyaml\r\nrequests\n");
        write(&root.join("pyproject.toml"), "[project]\nname = 'x'\n");
        let site = root.join(".venv/lib/python3.11/site-packages");
        install_pyyaml(&site);
        let dists = distributions(&root, &environment_dirs(&root), &one_build());
        let imports = set(&["os", "yaml", "requests"]);
        // pyproject.toml before requirements.txt; newlines translated; `requests` unresolved.
        let expected = sha256::hex_digest(
            b"M\0[project]\nname = 'x'\nM\0pyyaml\nrequests\n\
              I\0requestsI\0yamlD\0PyYAML==6.0.1",
        );
        assert_eq!(
            fingerprint(&root, &imports, &dists, &one_build()),
            Ok(expected)
        );
        // Nothing at all: the digest of nothing, never null.
        let empty = project("recipe-empty");
        assert_eq!(
            fingerprint(&empty, &BTreeSet::new(), &[], &one_build()),
            Ok(sha256::hex_digest(b""))
        );
        fs::remove_dir_all(&root).unwrap();
        fs::remove_dir_all(&empty).unwrap();
    }

    #[test]
    fn hostile_manifests_and_metadata_are_refused_or_skipped_without_blocking() {
        let root = project("hostile");
        let outside = project("hostile-outside");
        write(&outside.join("METADATA"), "Name: secret\nVersion: 1\n");
        write(&outside.join("pyproject.toml"), "secret");
        // A manifest linked out of the project: refused (the reference would read it).
        std::os::unix::fs::symlink(outside.join("pyproject.toml"), root.join("pyproject.toml"))
            .unwrap();
        let err = fingerprint(&root, &BTreeSet::new(), &[], &one_build()).unwrap_err();
        assert!(err.to_string().contains("outside the project"), "{err}");
        fs::remove_file(root.join("pyproject.toml")).unwrap();
        // A FIFO manifest: refused at once, never opened for a blocking read.
        let fifo = root.join("requirements.txt");
        assert!(std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success());
        let err = fingerprint(&root, &BTreeSet::new(), &[], &one_build()).unwrap_err();
        assert!(err.to_string().contains("requirements.txt"), "{err}");
        fs::remove_file(&fifo).unwrap();
        // A manifest over the limit.
        let big = fs::File::create(root.join("uv.lock")).unwrap();
        big.set_len(MAX_MANIFEST_BYTES + 1).unwrap();
        let err = fingerprint(&root, &BTreeSet::new(), &[], &one_build()).unwrap_err();
        assert!(err.to_string().contains("MAX_MANIFEST_BYTES"), "{err}");
        fs::remove_file(root.join("uv.lock")).unwrap();
        // Metadata linked out, a dist-info folder linked out, a FIFO METADATA: skipped.
        let site = root.join(".venv/lib/python3.11/site-packages");
        fs::create_dir_all(site.join("linked-1.dist-info")).unwrap();
        std::os::unix::fs::symlink(
            outside.join("METADATA"),
            site.join("linked-1.dist-info/METADATA"),
        )
        .unwrap();
        std::os::unix::fs::symlink(&outside, site.join("folder-1.dist-info")).unwrap();
        fs::create_dir_all(site.join("fifo-1.dist-info")).unwrap();
        assert!(std::process::Command::new("mkfifo")
            .arg(site.join("fifo-1.dist-info/METADATA"))
            .status()
            .unwrap()
            .success());
        assert!(distributions(&root, &environment_dirs(&root), &one_build()).is_empty());
        // A site-packages linked out of the project is not an environment of the project.
        fs::remove_dir_all(root.join(".venv")).unwrap();
        fs::create_dir_all(root.join(".venv/lib")).unwrap();
        std::os::unix::fs::symlink(&outside, root.join(".venv/lib/python3.11")).unwrap();
        fs::create_dir_all(outside.join("site-packages")).unwrap();
        assert!(environment_dirs(&root).is_empty());
        fs::remove_dir_all(&root).unwrap();
        fs::remove_dir_all(&outside).unwrap();
    }
}
