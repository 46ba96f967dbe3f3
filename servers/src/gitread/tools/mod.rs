//! The gitread tool table: every tool, in the order `tools/list` gives them, as one row
//! ([`GitTool`]) each from its own module, which holds its declarations (the product's, which
//! teach, and the reference's exact ones where the reference has the tool), how a call of it
//! becomes git's argv, and the note that replaces an empty answer. Adding a tool is one module
//! and one row of [`TABLE`]. The rules its arguments share are in [`args`].

pub mod args;
mod blame;
mod diff;
pub mod file;
mod grep;
mod log;
mod log_args;
pub mod mistakes;
mod refs;
mod row;
mod show;
mod status;

use super::page;
use crate::compat::Compat;
use agentteams_mcp::json::{obj, Map, Value};
use agentteams_mcp::server::Tool;

pub use diff::GIT_DIFF;
pub use file::GIT_FILE;
pub use row::{GitTool, Run, NO_WORK_TREE};
pub use show::GIT_SHOW;

/// Every tool, in the reference's order, then the product's own.
pub const TABLE: [GitTool; 8] = [
    log::TOOL,
    show::TOOL,
    diff::TOOL,
    blame::TOOL,
    status::TOOL,
    file::TOOL,
    refs::TOOL,
    grep::TOOL,
];

/// The row of tool `name` as `compat` serves it, or the reference's message for a tool it does
/// not know.
pub fn find(compat: Compat, name: &str) -> Result<&'static GitTool, String> {
    TABLE
        .iter()
        .find(|t| t.name == name && (compat == Compat::Product || t.reference.is_some()))
        .ok_or_else(|| {
            format!(
                "unknown tool {}",
                agentteams_mcp::jsonrpc::py_repr(&Value::from(name))
            )
        })
}

/// The tools as `compat` declares them: the product's, paged with plain-text answers, or the
/// reference's five exact ones. Both carry the same argument rules and messages; only the
/// advertised texts differ.
pub fn declarations(compat: Compat) -> Vec<Tool> {
    match compat {
        Compat::Product => TABLE
            .iter()
            .map(|row| with_plain_answers(row, (row.declare)()))
            .collect(),
        Compat::Reference => TABLE
            .iter()
            .filter_map(|row| row.reference.map(|r| r()))
            .collect(),
    }
}

/// `tool` as the product serves it: its answers are plain text with the same text as `output` in
/// structured content, and every tool takes `offset` (`git_file`'s counts bytes of the file's
/// content; a `git_file` line range pages by `start` instead).
fn with_plain_answers(row: &GitTool, tool: Tool) -> Tool {
    let offset = if row.by_line {
        "Resume a cut whole-file read at this byte, e.g. 61184."
    } else {
        "Resume a cut answer at this byte, e.g. 61184."
    };
    let mut tool = with_offset(tool, offset);
    let integer = || obj([("type", Value::from("integer"))]);
    let mut output = vec![
        ("output", obj([("type", Value::from("string"))])),
        (page::NEXT_OFFSET, integer()),
    ];
    if row.by_line {
        output.push((page::NEXT_START, integer()));
    }
    let properties = Value::Object(output.into_iter().collect());
    tool.output_schema = Some(obj([
        ("type", Value::from("object")),
        ("required", Value::Array(vec![Value::from("output")].into())),
        ("properties", properties),
    ]));
    tool
}

/// `tool` taking `offset`, described by `description`.
fn with_offset(mut tool: Tool, description: &str) -> Tool {
    let mut offset = Map::new();
    offset.insert("type", Value::from("integer"));
    offset.insert("minimum", Value::from(0u64));
    offset.insert("maximum", Value::from(page::MAX_OFFSET));
    offset.insert("description", Value::from(description));
    offset.insert("default", Value::from(0u64));
    if let Some(properties) = tool
        .input_schema
        .as_object_mut()
        .and_then(|s| s.get_mut("properties"))
        .and_then(Value::as_object_mut)
    {
        properties.insert("offset", Value::Object(offset));
    }
    tool.argument_message("offset", &page::offset_message())
        .null_means_absent("offset")
}

#[cfg(test)]
mod tests {
    use super::args::{arguments as args, flag_rule, ref_message};
    use super::blame::GIT_BLAME;
    use super::log::GIT_LOG;
    use super::status::GIT_STATUS;
    use super::*;
    use agentteams_mcp::json;

    /// The rule every product declaration is held to: its description says when to use it (what
    /// every tool shares, read-only answers in plain text, is said once, in the instructions),
    /// every argument's description gives an example, and an argument has a default exactly
    /// when it is optional. Returns the tool's required arguments and properties.
    #[track_caller]
    fn assert_described_with_defaults(tool: &Tool) -> (Vec<&str>, &Map) {
        assert!(tool.description.contains("Use it"), "{}", tool.description);
        let required: Vec<&str> = tool
            .input_schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let Some(Value::Object(properties)) = tool.input_schema.get("properties") else {
            panic!("{} has no properties", tool.name);
        };
        for (argument, property) in properties.iter() {
            let described = property
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or_default();
            assert!(described.contains("e.g. "), "{}.{argument}", tool.name);
            let optional = !required.contains(&argument.as_str());
            assert_eq!(
                property.get("default").is_some(),
                optional,
                "{}.{argument}",
                tool.name
            );
        }
        (required, properties)
    }

    /// The argv of tool `name` as `compat` runs it.
    fn subcommand_for(
        compat: Compat,
        name: &str,
        arguments: &Map,
        path: Option<&str>,
    ) -> Result<Vec<String>, String> {
        match find(compat, name)?.run {
            Run::Git(argv) => argv(compat, arguments, path),
            Run::File => panic!("{name} runs no single git process"),
        }
    }

    /// The argv of tool `name` as the reference runs it.
    fn subcommand(name: &str, arguments: &Map, path: Option<&str>) -> Result<Vec<String>, String> {
        subcommand_for(Compat::Reference, name, arguments, path)
    }

    #[test]
    fn declarations_match_the_reference_wire_form() {
        let tools = declarations(Compat::Reference);
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, [GIT_LOG, GIT_SHOW, GIT_DIFF, GIT_BLAME, GIT_STATUS]);
        assert_eq!(
            json::to_string(&tools[0].input_schema),
            r#"{"type":"object","properties":{"rev":{"type":"string"},"n":{"type":"integer","minimum":1,"maximum":200},"path":{"type":"string"}}}"#
        );
        assert_eq!(
            json::to_string(&tools[2].input_schema),
            r#"{"type":"object","required":["base","head"],"properties":{"base":{"type":"string"},"head":{"type":"string"},"path":{"type":"string"}}}"#
        );
        assert_eq!(
            json::to_string(&tools[4].input_schema),
            r#"{"type":"object","properties":{}}"#
        );
        assert_eq!(
            tools[3].description,
            "Line authorship of a file at a revision (never the worktree). Read-only."
        );
    }

    #[test]
    fn product_declarations_describe_every_argument_and_default_every_optional_one() {
        let product = declarations(Compat::Product);
        let reference = declarations(Compat::Reference);
        assert_eq!(product.len(), reference.len() + 3);
        assert_eq!(product[5].name, GIT_FILE);
        assert_eq!(product[6].name, refs::GIT_REFS);
        assert_eq!(product[7].name, grep::GIT_GREP);
        for (tool, plain) in product.iter().zip(&reference) {
            assert_eq!(tool.name, plain.name);
            // The reference's rules first, then those of the product-only arguments.
            assert!(tool.argument_messages.starts_with(&plain.argument_messages));
            assert_eq!(
                tool.missing_argument_messages,
                plain.missing_argument_messages
            );
            assert!(tool.null_means_absent.starts_with(&plain.null_means_absent));
            assert!(tool.output_schema.is_some(), "{}", tool.name);
            assert_eq!(
                tool.input_schema.get("required"),
                plain.input_schema.get("required"),
                "{}",
                tool.name
            );
            let (required, properties) = assert_described_with_defaults(tool);
            let Some(Value::Object(plain_properties)) = plain.input_schema.get("properties") else {
                panic!("{} has no reference properties", tool.name);
            };
            let names: Vec<&str> = properties.iter().map(|(k, _)| k.as_str()).collect();
            let plain_names: Vec<&str> = plain_properties.iter().map(|(k, _)| k.as_str()).collect();
            // The reference's arguments, in its order, then the product's optional ones.
            assert!(names.starts_with(&plain_names), "{}", tool.name);
            assert!(names.contains(&"offset"), "{} is paged", tool.name);
            for added in &names[plain_names.len()..] {
                assert!(!required.contains(added), "{}.{added}", tool.name);
                let message = tool.argument_messages.iter().find(|(f, _)| f == added);
                assert!(message.is_some(), "{}.{added} has no message", tool.name);
                assert!(tool.null_means_absent.iter().any(|f| f == added));
            }
            // The validator's keywords are the reference's; only annotations were added.
            for (argument, property) in properties.iter() {
                let Some(plain) = plain_properties.get(argument) else {
                    continue;
                };
                for keyword in ["type", "minimum", "maximum"] {
                    assert_eq!(property.get(keyword), plain.get(keyword));
                }
            }
        }
        let log = &product[0].input_schema;
        let property = |name: &str| log.get("properties").and_then(|p| p.get(name));
        assert_eq!(
            property("rev").map(json::to_string).as_deref(),
            Some(
                r#"{"type":"string","description":"A branch, tag, commit or range, e.g. \"v1.0..main\".","default":"HEAD"}"#
            )
        );
        assert_eq!(
            property("n").and_then(|n| n.get("default")),
            Some(&Value::from(20u64))
        );
        assert_eq!(
            property("path").and_then(|p| p.get("default")),
            Some(&Value::Null)
        );
        assert_eq!(
            product[4].description,
            "List uncommitted changes, porcelain v1 (\"M \" staged, \" M\" modified, \"??\" \
             untracked). Use it to see the work in progress."
        );
    }

    #[test]
    fn the_reference_ignores_the_product_arguments() {
        let all = args(
            r#"{"n":5,"author":"x","since":"2 weeks ago","until":"now","grep":"y","skip":3,"stat":true}"#,
        );
        for name in [GIT_LOG, GIT_SHOW, GIT_DIFF] {
            let mut arguments = all.clone();
            arguments.insert("rev", Value::from("HEAD"));
            arguments.insert("base", Value::from("HEAD~1"));
            arguments.insert("head", Value::from("HEAD"));
            assert_eq!(
                subcommand_for(Compat::Reference, name, &arguments, Some("a.txt")),
                subcommand(name, &arguments, Some("a.txt")),
                "{name}"
            );
        }
        // Not even a bad value is looked at.
        assert!(subcommand_for(Compat::Reference, GIT_LOG, &args(r#"{"skip":-1}"#), None).is_ok());
    }

    #[test]
    fn stat_gives_files_and_line_counts_instead_of_the_patch() {
        let show = subcommand_for(
            Compat::Product,
            GIT_SHOW,
            &args(r#"{"rev":"HEAD","stat":true}"#),
            Some("a.txt"),
        );
        assert_eq!(
            show.unwrap_or_default(),
            [
                "show",
                "--no-color",
                "--no-ext-diff",
                "--no-textconv",
                "--numstat",
                "--shortstat",
                "--summary",
                "--format=fuller",
                "--date=default",
                "--end-of-options",
                "HEAD",
                "--",
                "a.txt",
            ]
        );
        let diff = subcommand_for(
            Compat::Product,
            GIT_DIFF,
            &args(r#"{"base":"/etc/passwd","head":"HEAD","stat":true}"#),
            None,
        );
        assert_eq!(
            diff.unwrap_or_default(),
            [
                "diff",
                "--no-color",
                "--no-ext-diff",
                "--ignore-submodules=all",
                "--no-textconv",
                "--numstat",
                "--shortstat",
                "--summary",
                "--end-of-options",
                "/etc/passwd",
                "HEAD",
                "--",
            ]
        );
        for (name, arguments) in [
            (GIT_SHOW, r#"{"rev":"HEAD","stat":false}"#),
            (GIT_DIFF, r#"{"base":"A","head":"B","stat":null}"#),
        ] {
            let arguments = args(arguments);
            assert_eq!(
                subcommand_for(Compat::Product, name, &arguments, None),
                subcommand(name, &arguments, None)
            );
        }
        assert_eq!(
            subcommand_for(
                Compat::Product,
                GIT_SHOW,
                &args(r#"{"rev":"HEAD","stat":1}"#),
                None
            ),
            Err(flag_rule("stat"))
        );
        assert_eq!(
            subcommand_for(
                Compat::Product,
                GIT_SHOW,
                &args(r#"{"rev":"-x","stat":1}"#),
                None
            ),
            Err(ref_message("rev"))
        );
    }

    #[test]
    fn unknown_tools_are_named_with_python_repr() {
        assert_eq!(
            subcommand("git_nope", &Map::new(), None),
            Err("unknown tool 'git_nope'".to_owned())
        );
    }

    /// The rule the product's other declarations are held to
    /// (`product_declarations_describe_every_argument_and_default_every_optional_one`), for the
    /// tools the reference does not have.
    #[test]
    fn refs_and_grep_declarations_describe_every_argument_and_default_every_optional_one() {
        let product = declarations(Compat::Product);
        let names: Vec<&str> = product.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(&names[6..], ["git_refs", "git_grep"]);
        let reference = declarations(Compat::Reference);
        assert!(!reference
            .iter()
            .any(|t| t.name == "git_refs" || t.name == "git_grep"));
        for tool in &product[6..] {
            let (required, properties) = assert_described_with_defaults(tool);
            for argument in properties.keys() {
                if !required.contains(&argument.as_str()) {
                    assert!(
                        tool.null_means_absent.iter().any(|n| n == argument),
                        "{}.{argument}: null means absent",
                        tool.name
                    );
                }
                assert!(
                    tool.argument_messages.iter().any(|(n, _)| n == argument),
                    "{}.{argument} has its own message",
                    tool.name
                );
            }
        }
    }
}
