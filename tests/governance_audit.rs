//! The audit log of a governed engine: `run_started` records the governance in force, each call's
//! blocked or started record the decision and what it rested on, and `audit verify` accepts the
//! records (and refuses a decision member that is not in its documented form).

mod audit_support;
use agentteams_mcp::audit::{self, record_hash, Problem, ProblemKind};
use agentteams_mcp::bind::{bind, BindOptions};
use agentteams_mcp::governance::{call_digest, PermissionMode, ScopedApproval};
use agentteams_mcp::json::{self, Value};
use audit_support::fixture::{call, Tools};
use audit_support::{records, str_of, TempDir};
use std::sync::Arc;

#[test]
fn decisions_are_recorded_with_their_basis_and_the_log_verifies() {
    let dir = TempDir::new("gov-audit");
    std::fs::create_dir_all(dir.0.join(".agentteams")).unwrap();
    std::fs::write(
        dir.0.join(".agentteams/approvals.json"),
        r#"{"version":1,"presets":[{"effect":"deny","tool":"git_blame","reason":"slow","added_by":"ops","added_at":"2026-12-01T00:00:00.000Z"}]}"#,
    )
    .unwrap();
    let log = dir.file("audit.log");
    let approved = call_digest(
        "fs_write",
        &json::parse(br#"{"p":1}"#)
            .unwrap()
            .as_object()
            .unwrap()
            .clone(),
    )
    .unwrap();
    let options = BindOptions {
        scoped: vec![ScopedApproval::parse(&format!("fs_write:{approved}")).unwrap()],
        audit_log: Some(log.clone()),
        ..BindOptions::default()
    };
    let binding = bind(
        Arc::new(Tools),
        &dir.0,
        PermissionMode::Prompt,
        "embedded",
        options,
    )
    .unwrap();
    let session = binding.session();
    call(&session, "fs_write", r#"{"p":1}"#); // approved by digest
    call(&session, "fs_write", r#"{"p":2}"#); // refused by the mode
    call(&session, "git_blame", "{}"); // refused by the deny preset
    call(&session, "git_log", "{}"); // allowed by default
    binding.engine().audit().unwrap().complete_run().unwrap();

    let recs = records(&log);
    let governance = recs[0].get("governance").unwrap();
    assert_eq!(str_of(governance, "mode"), Some("prompt"));
    assert_eq!(
        governance.get("scoped"),
        Some(&Value::from(vec![Value::from(format!(
            "fs_write:{approved}"
        ))]))
    );
    assert!(str_of(governance, "presets_file")
        .unwrap()
        .ends_with(".agentteams/approvals.json"));
    assert_eq!(str_of(governance, "presets_sha256").map(str::len), Some(64));
    let decided: Vec<(&str, &Value)> = recs
        .iter()
        .filter_map(|r| Some((str_of(r, "event")?, r.get("decision")?)))
        .collect();
    let summary: Vec<(&str, &str, Option<&str>)> = decided
        .iter()
        .map(|(e, d)| (*e, str_of(d, "basis").unwrap(), str_of(d, "digest")))
        .collect();
    let refused_digest = call_digest(
        "fs_write",
        &json::parse(br#"{"p":2}"#)
            .unwrap()
            .as_object()
            .unwrap()
            .clone(),
    )
    .unwrap();
    assert_eq!(
        summary,
        [
            ("tool_call_started", "digest", Some(approved.as_str())),
            ("tool_call_blocked", "mode", Some(refused_digest.as_str())),
            ("tool_call_blocked", "preset", None),
            ("tool_call_started", "default", None),
        ]
    );
    let report = audit::verify_file(&log).unwrap();
    assert!(report.is_clean(), "{report}");
}

#[test]
fn a_decision_out_of_form_is_reported() {
    let dir = TempDir::new("gov-audit-bad");
    let log = dir.file("audit.log");
    let binding = audited_allow(&dir.0, &log);
    call(&binding.session(), "fs_write", "{}");
    binding.engine().audit().unwrap().complete_run().unwrap();
    let lines: Vec<String> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    // Rewrite the started record's decision, re-sealing its hash so only the form is wrong.
    assert_eq!(
        json::parse(lines[2].as_bytes()).unwrap().get("event"),
        Some(&Value::from("tool_call_started"))
    );
    let reseal = |edit: &dyn Fn(&mut json::Map)| {
        problems_after(&lines, &mut |i, rec| {
            if i == 2 {
                edit(rec)
            }
        })
        .into_iter()
        .find(|p| p.line == 3)
        .map(|p| p.kind)
    };
    let set = |key: &'static str, value: Value| {
        move |rec: &mut json::Map| {
            if let Some(Value::Object(d)) = rec.get_mut("decision") {
                d.insert(key, value.clone());
            }
        }
    };
    let malformed = |kind: Option<ProblemKind>| match kind {
        Some(ProblemKind::Malformed(why)) => why,
        other => panic!("expected a malformed record, got {other:?}"),
    };
    assert!(
        malformed(reseal(&set("basis", Value::from("vibes")))).starts_with("\"decision\" must be")
    );
    assert!(malformed(reseal(&set("mode", Value::from("ask")))).starts_with("\"decision\" must be"));
    assert!(
        malformed(reseal(&set("digest", Value::from("xyz")))).starts_with("\"decision\" must be")
    );
    assert_eq!(
        malformed(reseal(&set("allowed", Value::from(false)))),
        "\"decision\" of a tool_call_started record must say \"allowed\": true"
    );
    // Untouched, the same lines verify.
    let report = audit::verify_reader((lines.join("\n") + "\n").as_bytes()).unwrap();
    assert!(report.is_clean(), "{report}");
}

/// A change of the approvals file while serving is a `presets_changed` record carrying the
/// governance in force (as `run_started` does); the verifier accepts it in that form only.
#[test]
fn a_presets_change_is_recorded_and_its_form_checked() {
    let dir = TempDir::new("gov-audit-change");
    let log = dir.file("audit.log");
    let binding = audited_allow(&dir.0, &log);
    call(&binding.session(), "git_blame", "{}");
    std::fs::create_dir_all(dir.0.join(".agentteams")).unwrap();
    let denied = r#"{"version":1,"presets":[{"effect":"deny","tool":"git_blame","reason":"slow","added_by":"ops","added_at":"2026-12-01T00:00:00.000Z"}]}"#;
    std::fs::write(dir.0.join(".agentteams/approvals.json"), denied).unwrap();
    call(&binding.session(), "git_blame", "{}");
    binding.engine().audit().unwrap().complete_run().unwrap();

    let recs = records(&log);
    let events: Vec<&str> = recs.iter().filter_map(|r| str_of(r, "event")).collect();
    assert_eq!(
        events,
        [
            "run_started",
            "tool_call_requested",
            "tool_call_started",
            "tool_call_completed",
            "tool_call_requested",
            "presets_changed",
            "tool_call_blocked",
            "run_completed"
        ]
    );
    let governance = recs[5].get("governance").unwrap();
    assert_eq!(str_of(governance, "mode"), Some("allow"));
    assert_eq!(
        str_of(governance, "presets_sha256"),
        Some(agentteams_mcp::sha256::hex_digest(denied.as_bytes()).as_str())
    );
    assert_eq!(
        governance.get("presets"),
        Some(&Value::from(vec![Value::from(
            "deny preset \"git_blame\" (presets[0], added by \"ops\": \"slow\")"
        )]))
    );
    assert!(audit::verify_file(&log).unwrap().is_clean());
    // Without its governance, or with it in another record, the form is wrong.
    let lines: Vec<String> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    let governance = recs[5].get("governance").unwrap().clone();
    let kinds: Vec<ProblemKind> = problems_after(&lines, &mut |i, rec| match i {
        5 => drop(rec.remove("governance")),
        6 => rec.insert("governance", governance.clone()),
        _ => {}
    })
    .into_iter()
    .map(|p| p.kind)
    .collect();
    assert!(
        kinds.contains(&ProblemKind::Malformed(
            "a presets_changed record needs \"governance\"".into()
        )),
        "{kinds:?}"
    );
    assert!(
        kinds.contains(&ProblemKind::Malformed(
            "\"governance\" in a tool_call_blocked record".into()
        )),
        "{kinds:?}"
    );
}

/// An engine over the fixture's tools under `allow`, logging to `log`.
fn audited_allow(root: &std::path::Path, log: &std::path::Path) -> agentteams_mcp::bind::Binding {
    let options = BindOptions {
        audit_log: Some(log.to_owned()),
        ..BindOptions::default()
    };
    bind(
        Arc::new(Tools),
        root,
        PermissionMode::Allow,
        "embedded",
        options,
    )
    .unwrap()
}

/// The verifier's problems with `lines` after `edit` (given each record's index) changed them,
/// each edited record re-sealed so that only its form can be wrong.
fn problems_after(lines: &[String], edit: &mut dyn FnMut(usize, &mut json::Map)) -> Vec<Problem> {
    let edited: Vec<String> = lines
        .iter()
        .enumerate()
        .map(|(i, line)| {
            let Value::Object(mut rec) = json::parse(line.as_bytes()).unwrap() else {
                unreachable!()
            };
            edit(i, &mut rec);
            rec.remove("hash");
            let hash = record_hash(&rec);
            rec.insert("hash", Value::from(hash));
            json::to_string_sorted(&Value::Object(rec))
        })
        .collect();
    let report = audit::verify_reader((edited.join("\n") + "\n").as_bytes()).unwrap();
    report.problems
}
