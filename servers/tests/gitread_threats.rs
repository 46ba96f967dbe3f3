//! One hostile-repository test per threat of GIT-THREATS.md §2, through the real binary over
//! stdio. Each plants its vector by writing files directly (never through git), runs the sweep and
//! makes the row's observable assertion: a canary program that never runs, a secret that never
//! appears, a file that is never written, a listener that is never reached.

mod gitread_support;

use gitread_support::*;
use std::path::{Path, PathBuf};

/// Plants with `plant`, touches the worktree, runs the sweep.
fn sweep_with(f: &Fixture, plant: impl FnOnce(&Fixture)) -> (Vec<Reply>, Server) {
    plant(f);
    f.touch_worktree();
    let mut server = f.server();
    let replies = server.sweep();
    (replies, server)
}

fn enable_worktree_config(f: &Fixture) {
    f.plant_config(
        "[core]\n\trepositoryformatversion = 1\n[extensions]\n\tworktreeConfig = true\n",
    );
}

// ---------------------------------------------------------------- 2.1 code execution

#[test]
fn a1_fsmonitor_never_runs() {
    for variant in ["config", "include", "worktree"] {
        let f = Fixture::new("a1");
        let line = format!("[core]\n\tfsmonitor = {}\n", f.canary_str());
        let (replies, _s) = sweep_with(&f, |f| match variant {
            "config" => f.plant_config(&line),
            "include" => {
                write(&f.root.join("cfg/inc"), &line);
                f.plant_config("[include]\n\tpath = ../cfg/inc\n");
            }
            _ => {
                enable_worktree_config(f);
                write(&f.root.join(".git/config.worktree"), &line);
            }
        });
        assert_sweep_served(&replies);
        f.assert_canary_silent();
    }
}

#[test]
fn a2_hooks_never_run_and_the_index_is_not_written() {
    let f = Fixture::new("a2");
    let hook = format!("#!/bin/sh\n'{}' hook \"$@\"\n", f.canary_str());
    for name in [
        "post-index-change",
        "reference-transaction",
        "post-checkout",
        "pre-auto-gc",
    ] {
        let path = f.root.join(".git/hooks").join(name);
        write(&path, &hook);
        make_executable(&path);
        let other = f.tmp.join("hooks").join(name);
        write(&other, &hook);
        make_executable(&other);
    }
    f.plant_config(&format!(
        "[core]\n\thooksPath = {}\n",
        f.tmp.join("hooks").display()
    ));
    f.touch_worktree();
    let before = snapshot(&f.root);
    let mut server = f.server();
    assert_sweep_served(&server.sweep());
    f.assert_canary_silent();
    assert_eq!(snapshot(&f.root), before, "the repository changed");
    assert!(!f.root.join(".git/index.lock").exists());
}

#[test]
fn a3_config_defined_hooks_never_run() {
    let (major, minor, patch) = git_version();
    if (major, minor) < (2, 54) {
        println!(
            "note: git {major}.{minor}.{patch} has no config-defined hooks; this row passes trivially here (GIT-THREATS.md A3)"
        );
    }
    for variant in ["config", "include"] {
        let f = Fixture::new("a3");
        let c = f.canary_str();
        let hooks = format!(
            "[hook \"post-index-change\"]\n\tevent = post-index-change\n\tcommand = {c}\n[hook \"x\"]\n\tevent = reference-transaction\n\tcommand = {c}\n[hook \"my.tool\"]\n\tevent = post-index-change\n\tcommand = {c}\n"
        );
        let (replies, _s) = sweep_with(&f, |f| {
            if variant == "config" {
                f.plant_config(&hooks);
            } else {
                write(&f.root.join("cfg/hooks"), &hooks);
                f.plant_config("[include]\n\tpath = ../cfg/hooks\n");
            }
        });
        assert_sweep_served(&replies);
        f.assert_canary_silent();
    }
}

#[test]
fn a4_pagers_never_run() {
    let f = Fixture::new("a4");
    let c = f.canary_str();
    f.plant_config(&format!(
        "[core]\n\tpager = {c}\n[pager]\n\tlog = {c}\n\tshow = {c}\n\tdiff = {c}\n\tblame = {c}\n\tstatus = {c}\n"
    ));
    f.touch_worktree();
    let mut server = Server::start(&f.root, &[("GIT_PAGER", Some(&c)), ("PAGER", Some(&c))]);
    assert_sweep_served(&server.sweep());
    f.assert_canary_silent();
}

#[test]
fn a5_external_diff_never_runs() {
    let f = Fixture::new("a5");
    let c = f.canary_str();
    f.plant_config(&format!(
        "[diff]\n\texternal = {c}\n[diff \"x\"]\n\tcommand = {c}\n"
    ));
    write(&f.root.join(".gitattributes"), "* diff=x\n");
    f.touch_worktree();
    let mut server = Server::start(&f.root, &[("GIT_EXTERNAL_DIFF", Some(&c))]);
    assert_sweep_served(&server.sweep());
    f.assert_canary_silent();
}

#[test]
fn a6_textconv_never_runs_nor_caches() {
    let f = Fixture::new("a6");
    let (replies, _s) = sweep_with(&f, |f| {
        f.plant_config(&format!(
            "[diff \"t\"]\n\ttextconv = {}\n\tcachetextconv = true\n",
            f.canary_str()
        ));
        write(&f.root.join(".gitattributes"), "*.txt diff=t\n");
    });
    assert_sweep_served(&replies);
    f.assert_canary_silent();
    assert!(!f.root.join(".git/refs/notes/textconv").exists());
}

#[test]
fn a7_filters_are_refused_in_every_variant() {
    let variants = [
        "config",
        "include",
        "includeif-gitdir",
        "includeif-onbranch",
        "worktree-config",
        "required",
    ];
    for variant in variants {
        // The include variants name a file of the work tree, which a bare twin leaves behind.
        if on_bare_root() && variant.starts_with("include") {
            continue;
        }
        let f = Fixture::new("a7");
        let filter = format!(
            "[filter \"x\"]\n\tclean = {c}\n\tsmudge = {c}\n\tprocess = {c}\n",
            c = f.canary_str()
        );
        let (replies, _s) = sweep_with(&f, |f| {
            write(&f.root.join(".gitattributes"), "* filter=x\n");
            match variant {
                "config" => f.plant_config(&filter),
                "include" => {
                    write(&f.root.join("cfg/evil"), &filter);
                    f.plant_config("[include]\n\tpath = ../cfg/evil\n");
                }
                "includeif-gitdir" => {
                    write(&f.root.join("cfg/evil"), &filter);
                    f.plant_config("[includeIf \"gitdir:**\"]\n\tpath = ../cfg/evil\n");
                }
                "includeif-onbranch" => {
                    write(&f.root.join("cfg/evil"), &filter);
                    f.plant_config("[includeIf \"onbranch:main\"]\n\tpath = ../cfg/evil\n");
                }
                "worktree-config" => {
                    enable_worktree_config(f);
                    write(&f.root.join(".git/config.worktree"), &filter);
                }
                _ => f.plant_config(&format!("{filter}\trequired = true\n")),
            }
        });
        for reply in &replies {
            reply.assert_error_contains(
                "the repository config defines filter.* drivers, which could run programs; refusing",
            );
        }
        f.assert_canary_silent();
    }
}

#[test]
fn a7_a_config_git_cannot_list_is_refused() {
    // Fail closed: the reference let any non-zero exit of the listing pass as "no filters".
    let f = Fixture::new("a7-broken");
    f.plant_config(&format!(
        "[filter \"x\"]\n\tclean = {}\n[broken\n",
        f.canary_str()
    ));
    write(&f.root.join(".gitattributes"), "* filter=x\n");
    f.touch_worktree();
    let mut server = f.server();
    assert_sweep_refused(
        &server.sweep(),
        "could not read the repository config: git exited",
    );
    f.assert_canary_silent();
}

#[test]
fn a8_git_lfs_programs_never_run() {
    let f = Fixture::new("a8");
    let c = f.canary_str();
    // A user-level git config reachable through HOME and XDG_CONFIG_HOME defines the LFS filter.
    let home = f.tmp.join("home");
    let lfs = format!(
        "[filter \"lfs\"]\n\tclean = {c}\n\tsmudge = {c}\n\tprocess = {c}\n\trequired = true\n"
    );
    write(&home.join(".gitconfig"), &lfs);
    write(&home.join(".config/git/config"), &lfs);
    f.plant_config(&format!(
        "[lfs \"extension.x\"]\n\tclean = {c}\n\tsmudge = {c}\n[lfs \"customtransfer.x\"]\n\tpath = {c}\n[lfs]\n\tstandalonetransferagent = x\n"
    ));
    write(
        &f.root.join(".gitattributes"),
        "* filter=lfs diff=lfs merge=lfs\n",
    );
    f.touch_worktree();
    let home_s = home.display().to_string();
    let xdg = home.join(".config").display().to_string();
    let mut server = Server::start(
        &f.root,
        &[("HOME", Some(&home_s)), ("XDG_CONFIG_HOME", Some(&xdg))],
    );
    assert_sweep_served(&server.sweep());
    f.assert_canary_silent();
}

#[test]
fn a9_signature_programs_never_run() {
    let f = Fixture::new("a9");
    f.signed_branch();
    f.plant_signature_programs();
    let mut server = f.server();
    assert!(server
        .call("git_log", r#"{"rev":"signed"}"#)
        .output()
        .contains("signed commit"));
    assert!(server
        .call("git_show", r#"{"rev":"signed"}"#)
        .output()
        .contains("signed commit"));
    assert_sweep_served(&server.sweep());
    f.assert_canary_silent();
}

/// A superproject at `<tmp>/super` whose submodule `sub` comes from `<tmp>/subsrc`.
fn superproject(f: &Fixture) -> std::path::PathBuf {
    let src = f.tmp.join("subsrc");
    std::fs::create_dir_all(&src).expect("subsrc");
    git(&src, &["init", "-q", "-b", "main"]);
    write(&src.join("s.txt"), "sub one\n");
    git(&src, &["add", "s.txt"]);
    git(&src, &["commit", "-q", "-m", "sub first"]);
    let sup = f.tmp.join("super");
    std::fs::create_dir_all(&sup).expect("super");
    git(&sup, &["init", "-q", "-b", "main"]);
    write(&sup.join("a.txt"), "one\n");
    git(&sup, &["add", "a.txt"]);
    git(&sup, &["commit", "-q", "-m", "first"]);
    git(
        &sup,
        &[
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            src.to_str().expect("utf-8"),
            "sub",
        ],
    );
    write(&sup.join("a.txt"), "one\ntwo\n");
    git(&sup, &["commit", "-q", "-am", "second"]);
    sup
}

#[test]
fn a10_submodules_never_run_their_programs() {
    let f = Fixture::new("a10");
    let sup = superproject(&f);
    // Move the gitlink in a new commit, then dirty the submodule worktree.
    let sub = sup.join("sub");
    write(&sub.join("s.txt"), "sub one\nsub two\n");
    git(&sub, &["commit", "-q", "-am", "sub second"]);
    git(&sup, &["commit", "-q", "-am", "move gitlink"]);
    write(&sub.join("s.txt"), "dirty\n");
    write(&sub.join(".gitattributes"), "* filter=x diff=x\n");
    let c = f.canary_str();
    append(
        &sup.join(".git/modules/sub/config"),
        &format!("[core]\n\tfsmonitor = {c}\n[filter \"x\"]\n\tclean = {c}\n[diff]\n\texternal = {c}\n[diff \"x\"]\n\ttextconv = {c}\n"),
    );
    append(
        &sup.join(".git/config"),
        "[status]\n\tsubmoduleSummary = true\n[diff]\n\tsubmodule = log\n[submodule]\n\trecurse = true\n",
    );
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
    for file in walk(&sub) {
        if let Ok(h) = std::fs::File::options().write(true).open(&file) {
            let _ = h.set_modified(later);
        }
    }
    let mut server = Server::start(&sup, &[]);
    let mut replies = server.sweep();
    replies.push(server.call("git_show", r#"{"rev":"HEAD"}"#));
    replies.push(server.call("git_diff", r#"{"base":"HEAD~2","head":"HEAD"}"#));
    for r in &replies[..7] {
        assert!(!r.is_error, "{}", r.text);
    }
    assert!(replies[8].output().contains("Subproject commit"));
    f.assert_canary_silent();
}

#[test]
fn a11_editors_never_run() {
    let f = Fixture::new("a11");
    let c = f.canary_str();
    f.plant_config(&format!(
        "[core]\n\teditor = {c}\n[sequence]\n\teditor = {c}\n"
    ));
    let mut server = Server::start(
        &f.root,
        &[
            ("GIT_EDITOR", Some(&c)),
            ("VISUAL", Some(&c)),
            ("EDITOR", Some(&c)),
        ],
    );
    assert_sweep_served(&server.sweep());
    f.assert_canary_silent();
}

#[test]
fn a12_maintenance_and_gc_never_run() {
    let f = Fixture::new("a12");
    let c = f.canary_str();
    let hook = f.root.join(".git/hooks/pre-auto-gc");
    write(&hook, &format!("#!/bin/sh\n'{c}' pre-auto-gc\n"));
    make_executable(&hook);
    f.plant_config(&format!(
        "[gc]\n\tauto = 1\n\tautoPackLimit = 1\n\trecentObjectsHook = {c}\n[maintenance]\n\tauto = true\n"
    ));
    f.touch_worktree();
    let before = snapshot(&f.root.join(".git"));
    let mut server = f.server();
    assert_sweep_served(&server.sweep());
    f.assert_canary_silent();
    assert_eq!(snapshot(&f.root.join(".git")), before);
}

#[test]
fn a13_aliases_never_replace_builtins() {
    let f = Fixture::new("a13");
    let c = f.canary_str();
    f.plant_config(&format!(
        "[alias]\n\tlog = !{c}\n\tshow = !{c}\n\tdiff = !{c}\n\tblame = !{c}\n\tstatus = !{c}\n\tconfig = !{c}\n"
    ));
    let mut server = f.server();
    assert_sweep_served(&server.sweep());
    f.assert_canary_silent();
}

// ---------------------------------------------------------------- 2.2 network and credentials

/// Makes the base fixture a partial clone missing the blob of `one\ntwo\n`, with `remote` config.
fn promisor(f: &Fixture, remote: &str) {
    let blob = blob_id(&f.root, "one\ntwo\n");
    std::fs::remove_file(loose_object(&f.root, &blob)).expect("remove the blob");
    f.plant_config(&format!(
        "[core]\n\trepositoryformatversion = 1\n[extensions]\n\tpartialClone = origin\n[remote \"origin\"]\n\tpromisor = true\n{remote}"
    ));
}

/// The calls that need the missing blob must fail, never serve content; nothing is contacted.
fn assert_no_lazy_fetch(f: &Fixture, server: &mut Server, listeners: &[&Listener]) {
    for (tool, args) in [
        ("git_show", r#"{"rev":"HEAD"}"#),
        ("git_diff", r#"{"base":"HEAD~1","head":"HEAD"}"#),
        ("git_blame", r#"{"rev":"HEAD","path":"a.txt"}"#),
    ] {
        let reply = server.call(tool, args);
        assert!(
            reply.is_error,
            "{tool} served content without the object: {}",
            reply.text
        );
    }
    assert!(server
        .call("git_log", r#"{"n":5}"#)
        .output()
        .contains("second"));
    for listener in listeners {
        assert_eq!(listener.accepted(), 0, "git reached the network");
    }
    f.assert_canary_silent();
}

#[test]
fn n1_promisor_lazy_fetch_never_happens() {
    let listener = Listener::start();
    let p = listener.port;
    for variant in ["http", "git", "local", "ext", "ssh"] {
        let f = Fixture::new("n1");
        let c = f.canary_str();
        let outside = f.outside_repo();
        let remote = match variant {
            "http" => format!("\turl = http://127.0.0.1:{p}/r.git\n"),
            "git" => format!("\turl = git://127.0.0.1:{p}/r\n"),
            "local" => format!("\turl = {}\n\tuploadpack = {c}\n", outside.display()),
            "ext" => format!("\turl = ext::{c} %S r\n[protocol \"ext\"]\n\tallow = always\n"),
            _ => format!("\turl = ssh://127.0.0.1:{p}/r\n[core]\n\tsshCommand = {c}\n"),
        };
        promisor(&f, &remote);
        let mut server = f.server();
        assert_no_lazy_fetch(&f, &mut server, &[&listener]);
    }
}

#[test]
fn n2_transport_programs_never_run() {
    let listener = Listener::start();
    let p = listener.port;
    for variant in ["gitproxy", "insteadof", "env-ssh"] {
        let f = Fixture::new("n2");
        let c = f.canary_str();
        let remote = match variant {
            "gitproxy" => format!("\turl = git://127.0.0.1:{p}/r\n[core]\n\tgitProxy = {c}\n"),
            "insteadof" => format!(
                "\turl = http://example.invalid/r\n[url \"ext::{c} %S \"]\n\tinsteadOf = http://example.invalid/\n[protocol \"ext\"]\n\tallow = always\n"
            ),
            _ => format!("\turl = ssh://127.0.0.1:{p}/r\n[ssh]\n\tvariant = ssh\n"),
        };
        promisor(&f, &remote);
        let mut server = Server::start(
            &f.root,
            &[("GIT_SSH", Some(&c)), ("GIT_SSH_COMMAND", Some(&c))],
        );
        assert_no_lazy_fetch(&f, &mut server, &[&listener]);
    }
}

#[test]
fn n3_proxies_are_never_reached() {
    let target = Listener::start();
    let proxy = Listener::start();
    let f = Fixture::new("n3");
    promisor(
        &f,
        &format!(
            "\turl = http://127.0.0.1:{}/r.git\n\tproxy = http://127.0.0.1:{}\n[http]\n\tproxy = http://127.0.0.1:{}\n\textraHeader = X-Leak: 1\n",
            target.port, proxy.port, proxy.port
        ),
    );
    let mut server = f.server();
    assert_no_lazy_fetch(&f, &mut server, &[&target, &proxy]);
}

#[test]
fn n4_credential_programs_never_run() {
    let listener = Listener::start();
    let f = Fixture::new("n4");
    let c = f.canary_str();
    promisor(
        &f,
        &format!(
            "\turl = http://127.0.0.1:{}/r.git\n[credential]\n\thelper = !{c}\n[credential \"http://127.0.0.1\"]\n\thelper = !{c}\n[core]\n\taskPass = {c}\n",
            listener.port
        ),
    );
    let mut server = Server::start(
        &f.root,
        &[("GIT_ASKPASS", Some(&c)), ("SSH_ASKPASS", Some(&c))],
    );
    assert_no_lazy_fetch(&f, &mut server, &[&listener]);
}

// ---------------------------------------------------------------- 2.3 escaping the root

#[test]
fn p1_upward_discovery_is_refused() {
    let f = Fixture::new("p1");
    f.plant_config(&format!("[core]\n\tfsmonitor = {}\n", f.canary_str()));
    let sub = f.root.join("sub");
    write(&sub.join("x.txt"), "x\n");
    // Refused before serving (no git runs), naming the root to pass instead.
    let refusal = assert_refused_at_startup(&sub);
    assert!(
        refusal.ends_with(&format!("pass --root {}\n", f.root.display())),
        "{refusal}"
    );
    f.assert_canary_silent();
}

#[test]
fn p2_an_embedded_bare_repository_is_refused() {
    let f = Fixture::new("p2");
    let bare = f.root.join("embedded");
    std::fs::create_dir_all(&bare).expect("dir");
    git(&bare, &["init", "-q", "--bare"]);
    append(
        &bare.join("config"),
        &format!("[core]\n\tfsmonitor = {}\n", f.canary_str()),
    );
    let refusal = assert_refused_at_startup(&bare);
    assert!(refusal.contains("not at its root"), "{refusal}");
    f.assert_canary_silent();
}

#[test]
fn p3_gitfile_redirects_never_read_another_repository() {
    let f = Fixture::new("p3");
    let outside = f.outside_repo();
    // Nested: a sub/.git file pointing at the outside repository inside a normal project.
    write(
        &f.root.join("sub/.git"),
        &format!("gitdir: {}\n", outside.join(".git").display()),
    );
    let mut server = f.server();
    let mut replies = server.sweep();
    replies.push(server.call("git_log", r#"{"path":"sub"}"#));
    assert!(!replies[0].is_error);
    f.assert_no_secret(&texts(&replies, &server));
    // Top level: the project's own .git is the redirect.
    std::fs::remove_dir_all(f.root.join(".git")).expect("rm");
    write(
        &f.root.join(".git"),
        &format!("gitdir: {}\n", outside.join(".git").display()),
    );
    let mut server = f.server();
    let replies = server.sweep();
    assert_sweep_refused(&replies, "outside the project");
    f.assert_no_secret(&texts(&replies, &server));
}

#[test]
fn p4_commondir_never_borrows_another_repository() {
    let f = Fixture::new("p4");
    let outside = f.outside_repo();
    // Relative to the git dir, as git resolves it (from a bare twin it names another place), and
    // absolute.
    let absolute = format!("{}\n", outside.join(".git").display());
    let relative = "../../outside/.git\n".to_owned();
    let forms = match on_bare_root() {
        true => vec![absolute],
        false => vec![relative, absolute],
    };
    for form in forms {
        write(&f.root.join(".git/commondir"), &form);
        let mut server = f.server();
        let replies = server.sweep();
        assert_sweep_refused(&replies, "outside the project");
        f.assert_no_secret(&texts(&replies, &server));
    }
    assert!(outside.exists());
}

#[test]
fn p5_symlinks_never_lead_out() {
    let f = Fixture::new("p5");
    let outside = f.outside_repo();
    std::os::unix::fs::symlink(&outside, f.root.join("link")).expect("symlink");
    std::fs::remove_file(f.root.join("a.txt")).expect("rm a.txt");
    std::os::unix::fs::symlink(&f.secret_file, f.root.join("a.txt")).expect("symlink");
    let mut server = f.server();
    let mut replies = server.sweep();
    let link = server.call("git_log", r#"{"path":"link/secret.txt"}"#);
    // A bare root has no work tree to hold the links: the path is a tree path of no commit.
    if !on_bare_root() {
        link.assert_error_contains("path must be inside the project and outside .git");
    }
    replies.push(link);
    f.assert_no_secret(&texts(&replies, &server));

    let f = Fixture::new("p5-dotgit");
    f.dot_git_symlink_to(&f.outside_repo().join(".git"));
    let mut server = f.server();
    let replies = server.sweep();
    assert_sweep_refused(&replies, "outside the project");
    f.assert_no_secret(&texts(&replies, &server));
}

#[test]
fn p6_alternates_are_refused_in_every_form() {
    for variant in ["absolute", "relative", "http", "dangling"] {
        let f = Fixture::new("p6");
        let outside = f.outside_repo();
        let info = f.root.join(".git/objects/info");
        match variant {
            "absolute" => write(
                &info.join("alternates"),
                &format!("{}\n", outside.join(".git/objects").display()),
            ),
            "relative" => write(&info.join("alternates"), "../../../outside/.git/objects\n"),
            "http" => write(
                &info.join("http-alternates"),
                "http://127.0.0.1:9/objects\n",
            ),
            _ => std::os::unix::fs::symlink("/nonexistent/alternates", info.join("alternates"))
                .expect("symlink"),
        }
        let outside_commit = git(&outside, &["rev-parse", "HEAD"]);
        let mut server = f.server();
        let mut replies = server.sweep();
        replies.push(server.call("git_show", &format!(r#"{{"rev":"{outside_commit}"}}"#)));
        assert_sweep_refused(&replies, "alternates");
        f.assert_no_secret(&texts(&replies, &server));
    }
    // Through the environment: cleared.
    let f = Fixture::new("p6-env");
    let outside = f.outside_repo();
    let outside_commit = git(&outside, &["rev-parse", "HEAD"]);
    let objects = outside.join(".git/objects").display().to_string();
    let mut server = Server::start(
        &f.root,
        &[("GIT_ALTERNATE_OBJECT_DIRECTORIES", Some(&objects))],
    );
    let reply = server.call("git_show", &format!(r#"{{"rev":"{outside_commit}"}}"#));
    assert!(reply.is_error);
    f.assert_no_secret(&[reply.text.clone(), server.stderr()]);
}

#[test]
fn p7_core_worktree_never_moves_the_work_tree() {
    let f = Fixture::new("p7");
    write(&f.root.join("secret.txt"), "public\n");
    git(&f.root, &["add", "secret.txt"]);
    std::fs::remove_file(f.root.join("secret.txt")).expect("rm");
    let mut server = f.server();
    let clean = server.sweep();
    drop(server);
    let elsewhere = f.tmp.join("elsewhere");
    write(&elsewhere.join("secret.txt"), &format!("{}\n", f.token));
    f.plant_config(&format!("[core]\n\tworktree = {}\n", elsewhere.display()));
    let mut server = f.server();
    let hostile = server.sweep();
    assert_eq!(
        hostile[7].output(),
        clean[7].output(),
        "status must describe the project"
    );
    f.assert_no_secret(&texts(&hostile, &server));
}

#[test]
fn p8_git_diff_never_becomes_no_index() {
    let f = Fixture::new("p8");
    let other = f.tmp.join("other.txt");
    write(&other, "other\n");
    let mut server = f.server();
    let refused = server.call(
        "git_diff",
        r#"{"base":"HEAD","head":"HEAD","path":"../secret.txt"}"#,
    );
    refused.assert_error_contains("path must be inside the project and outside .git");
    // The ref rule admits absolute-looking revisions; git must still treat them as revisions.
    let args = format!(
        r#"{{"base":"{}","head":"{}"}}"#,
        f.secret_file.display(),
        other.display()
    );
    let implicit = server.call("git_diff", &args);
    assert!(
        implicit.is_error,
        "diff compared two outside files: {}",
        implicit.text
    );
    let relative = server.call(
        "git_diff",
        r#"{"base":"../secret.txt","head":"../other.txt"}"#,
    );
    assert!(relative.is_error);
    f.assert_no_secret(&[refused.text, implicit.text, relative.text, server.stderr()]);
}

#[test]
fn p9_files_named_by_config_never_leak() {
    let secret_line = |f: &Fixture| format!("a.txt {}!x\n[bad\n", f.token);
    for variant in [
        "include",
        "ignorerevs",
        "attributes",
        "excludes",
        "orderfile",
        "info-attributes",
        "mailmap",
    ] {
        let f = Fixture::new("p9");
        let secret = f.secret_file.display().to_string();
        match variant {
            "include" => f.plant_config(&format!("[include]\n\tpath = {secret}\n")),
            "ignorerevs" => f.plant_config(&format!("[blame]\n\tignoreRevsFile = {secret}\n")),
            "attributes" => {
                write(&f.secret_file, &secret_line(&f));
                f.plant_config(&format!("[core]\n\tattributesFile = {secret}\n"));
            }
            "excludes" => f.plant_config(&format!("[core]\n\texcludesFile = {secret}\n")),
            "orderfile" => f.plant_config(&format!("[diff]\n\torderFile = {secret}\n")),
            "info-attributes" => {
                write(&f.secret_file, &secret_line(&f));
                std::os::unix::fs::symlink(&f.secret_file, f.root.join(".git/info/attributes"))
                    .expect("symlink");
            }
            _ => {
                f.plant_config(&format!(
                    "[mailmap]\n\tfile = {secret}\n\tblob = HEAD:a.txt\n"
                ));
                write(
                    &f.secret_file,
                    &format!("{} <alice@example.com>\n", f.token),
                );
            }
        }
        f.touch_worktree();
        let mut server = f.server();
        let mut replies = server.sweep();
        replies.push(server.call("git_blame", r#"{"rev":"HEAD~5","path":"a.txt"}"#));
        f.assert_no_secret(&texts(&replies, &server));
        match variant {
            "include" => assert_sweep_refused(&replies, "includes a file from outside the project"),
            "ignorerevs" => replies[6].assert_error_contains("blame.ignoreRevsFile"),
            "info-attributes" => assert_sweep_refused(&replies, "outside the project"),
            _ => assert_sweep_served(&replies[..8]),
        }
    }
}

#[test]
fn p10_the_inherited_environment_never_reaches_git() {
    let f = Fixture::new("p10");
    let c = f.canary_str();
    let outside = f.outside_repo();
    let og = outside.join(".git").display().to_string();
    let ow = outside.display().to_string();
    let trace = f.tmp.join("trace");
    let trace_s = trace.display().to_string();
    let evil_config = f.tmp.join("evil.config");
    write(
        &evil_config,
        &format!("[core]\n\tfsmonitor = {c}\n\tpager = {c}\n[diff]\n\texternal = {c}\n"),
    );
    let ec = evil_config.display().to_string();
    let home = f.tmp.join("home");
    write(
        &home.join(".gitconfig"),
        &format!("[core]\n\tfsmonitor = {c}\n"),
    );
    let home_s = home.display().to_string();
    let exec = f.tmp.join("exec");
    for name in [
        "git-log",
        "git-show",
        "git-diff",
        "git-blame",
        "git-status",
        "git-config",
    ] {
        let p = exec.join(name);
        write(&p, &format!("#!/bin/sh\n'{c}' exec-path \"$@\"\n"));
        make_executable(&p);
    }
    let exec_s = exec.display().to_string();
    let fsmon = format!("'core.fsmonitor={c}'");
    let env: Vec<(&str, Option<&str>)> = vec![
        ("GIT_DIR", Some(&og)),
        ("GIT_WORK_TREE", Some(&ow)),
        ("GIT_INDEX_FILE", Some(&trace_s)),
        ("GIT_OBJECT_DIRECTORY", Some(&og)),
        ("GIT_COMMON_DIR", Some(&og)),
        ("GIT_CONFIG_PARAMETERS", Some(&fsmon)),
        ("GIT_CONFIG_COUNT", Some("1")),
        ("GIT_CONFIG_KEY_0", Some("diff.external")),
        ("GIT_CONFIG_VALUE_0", Some(&c)),
        ("GIT_CONFIG", Some(&ec)),
        ("GIT_CONFIG_GLOBAL", Some(&ec)),
        ("GIT_CONFIG_SYSTEM", Some(&ec)),
        ("GIT_CONFIG_NOSYSTEM", Some("0")),
        ("GIT_EXEC_PATH", Some(&exec_s)),
        ("GIT_EXTERNAL_DIFF", Some(&c)),
        ("GIT_PAGER", Some(&c)),
        ("GIT_SSH_COMMAND", Some(&c)),
        ("GIT_ASKPASS", Some(&c)),
        ("GIT_TRACE", Some(&trace_s)),
        ("GIT_TRACE2", Some(&trace_s)),
        ("GIT_TRACE2_EVENT", Some(&trace_s)),
        ("GIT_TRACE_PACKET", Some(&trace_s)),
        ("GIT_NAMESPACE", Some("evil")),
        ("GIT_REPLACE_REF_BASE", Some("refs/heads/")),
        ("GIT_ATTR_SOURCE", Some("HEAD~1")),
        ("HOME", Some(&home_s)),
        ("XDG_CONFIG_HOME", Some(&home_s)),
    ];
    f.touch_worktree();
    let mut server = Server::start(&f.root, &env);
    let replies = server.sweep();
    assert_sweep_served(&replies);
    f.assert_canary_silent();
    f.assert_no_secret(&texts(&replies, &server));
    assert!(!trace.exists(), "a trace file was written");
}

#[test]
fn p10_relative_path_entries_never_pick_the_git_to_run() {
    let f = Fixture::new("p10-path");
    let cwd = f.tmp.join("cwd");
    let fake = cwd.join("git");
    write(
        &fake,
        &format!("#!/bin/sh\n'{}' fake-git \"$@\"\n", f.canary_str()),
    );
    make_executable(&fake);
    let real_dir = git_program()
        .parent()
        .map(|d| d.display().to_string())
        .unwrap_or_default();
    let path = format!(".::{real_dir}:/usr/bin:/bin");
    let mut server = Server::start_in(
        &f.root,
        &[("AGENTTEAMS_GIT", None), ("PATH", Some(&path))],
        Some(&cwd),
    );
    assert_sweep_served(&server.sweep());
    f.assert_canary_silent();
}

#[test]
fn p11_a_forged_worktree_registration_is_refused() {
    let f = Fixture::new("p11");
    f.forge_worktree_registration();
    let mut server = f.server();
    let replies = server.sweep();
    assert_sweep_refused(&replies, "outside the project");
    f.assert_no_secret(&texts(&replies, &server));
    // The outside repository's history is what a successful redirect would show.
    assert!(git(&f.outside_repo(), &["log", "--format=%s"]).contains(&f.token));
}

#[test]
fn p12_positive_controls_are_served() {
    let f = Fixture::new("p12");
    let mut server = f.server();
    assert_sweep_served(&server.sweep());
    let wt = f.linked_worktree();
    let mut server = Server::start(&wt, &[]);
    assert_sweep_served(&server.sweep());
}

#[test]
fn p13_a_submodule_checkout_as_root_is_refused() {
    let f = Fixture::new("p13");
    let sup = superproject(&f);
    let mut server = Server::start(&sup.join("sub"), &[]);
    assert_sweep_refused(&server.sweep(), "outside the project");
}

#[test]
fn p14_pointer_files_that_are_fifos_never_block() {
    // `.git` or `.git/commondir` as a FIFO: opening it to read would wait for a writer forever.
    let f = Fixture::new("p14-dotgit");
    std::fs::remove_dir_all(f.root.join(".git")).expect("rm");
    mkfifo(&f.root.join(".git"));
    let mut server = f.server();
    let replies = server.sweep();
    assert_sweep_refused(&replies, "not a regular file");

    let f = Fixture::new("p14-commondir");
    mkfifo(&f.root.join(".git/commondir"));
    let mut server = f.server();
    let replies = server.sweep();
    assert_sweep_refused(&replies, "not a regular file");
}

/// GIT-THREATS.md P15: a link anywhere below the git dir (a fan-out folder, a pack, a loose ref,
/// a reflog, `*_HEAD`, `info/*`, `worktrees/*`, `modules/*`) that leads out of the repository.
/// The review's reproduction: the project's objects packed, every fan-out folder linked to the
/// victim's, and `refs/heads/main` linked to the victim's branch, hands git the victim's history.
#[test]
fn p15_links_anywhere_in_the_git_dir_never_lead_out() {
    let f = Fixture::new("p15-fanout");
    let victim = f.outside_repo();
    git(&f.root, &["repack", "-q", "-a", "-d"]);
    git(&f.root, &["prune-packed"]);
    let objects = f.root.join(".git/objects");
    for byte in 0..=255u8 {
        let name = format!("{byte:02x}");
        let _ = std::fs::remove_dir_all(objects.join(&name));
        let target = format!("../../../outside/.git/objects/{name}");
        std::os::unix::fs::symlink(&target, objects.join(&name)).expect("link fan-out");
    }
    let main = f.root.join(".git/refs/heads/main");
    std::fs::remove_file(&main).expect("rm main");
    std::os::unix::fs::symlink("../../../../outside/.git/refs/heads/main", &main)
        .expect("link main");
    assert!(victim.join(".git/refs/heads/main").is_file());
    let mut server = f.server();
    let replies = server.sweep();
    assert_sweep_refused(&replies, "outside the project");
    f.assert_no_secret(&texts(&replies, &server));

    // One link at a time, deeper down: each refuses every tool, and nothing of the victim shows.
    type Target = fn(&Fixture) -> PathBuf;
    let deep: [(&str, Target); 9] = [
        ("loose-ref", |f| {
            f.outside_repo().join(".git/refs/heads/main")
        }),
        ("reflog", |f| f.outside_repo().join(".git/logs/HEAD")),
        ("orig-head", |f| {
            f.outside_repo().join(".git/refs/heads/main")
        }),
        ("pack", |f| f.outside_repo().join(".git/objects")),
        ("info", |f| f.secret_file.clone()),
        ("commit-graph", |f| f.secret_file.clone()),
        ("worktree-admin", |f| f.outside_repo().join(".git")),
        ("module", |f| f.outside_repo().join(".git")),
        ("dangling", |_| PathBuf::from("/nonexistent/ref")),
    ];
    for (variant, target) in deep {
        let f = Fixture::new("p15-deep");
        let dot_git = f.root.join(".git");
        let target = target(&f);
        let link = match variant {
            "loose-ref" => dot_git.join("refs/tags/v1"),
            "reflog" => dot_git.join("logs/refs/heads/main"),
            "orig-head" => dot_git.join("ORIG_HEAD"),
            "pack" => dot_git.join("objects/pack/borrowed"),
            "info" => dot_git.join("info/exclude"),
            "commit-graph" => dot_git.join("objects/info/commit-graph"),
            "worktree-admin" => dot_git.join("worktrees/w"),
            "module" => dot_git.join("modules/m"),
            _ => dot_git.join("refs/heads/dangling"),
        };
        std::fs::create_dir_all(link.parent().expect("parent")).expect("mkdir");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&target, &link).expect("link");
        let mut server = f.server();
        let mut replies = server.sweep();
        replies.push(server.call("git_log", r#"{"rev":"v1"}"#));
        replies.push(server.call("git_log", r#"{"rev":"HEAD@{0}"}"#));
        assert_sweep_refused(&replies, "outside the project");
        f.assert_no_secret(&texts(&replies, &server));
    }

    // Links that stay inside the git dir (git's own symlinked symrefs) are served.
    let f = Fixture::new("p15-inside");
    std::os::unix::fs::symlink("main", f.root.join(".git/refs/heads/alias")).expect("link");
    let mut server = f.server();
    assert_sweep_served(&server.sweep());
    let alias = server.call("git_log", r#"{"rev":"alias","n":1}"#);
    assert!(alias.output().contains("second"), "{}", alias.text);
}

/// GIT-THREATS.md P16: where git expects a file, a FIFO (git would wait forever), a device or a
/// link to one (`/dev/zero`: git would read until memory runs out), or an absurd size (a sparse
/// 64 GiB loose ref) is refused before git runs, and the server keeps serving once it is gone.
#[test]
fn p16_special_and_oversized_files_in_the_git_dir_are_refused() {
    for variant in [
        "fifo-ref",
        "fifo-head",
        "dev-zero",
        "sparse-ref",
        "fifo-object",
    ] {
        let f = Fixture::new("p16");
        let head = git(&f.root, &["rev-parse", "HEAD"]);
        let dot_git = f.root.join(".git");
        let planted = match variant {
            "fifo-ref" => dot_git.join("refs/heads/main"),
            "fifo-head" => dot_git.join("ORIG_HEAD"),
            "dev-zero" => dot_git.join("refs/heads/main"),
            "sparse-ref" => dot_git.join("refs/heads/main"),
            _ => dot_git.join("objects/ff/0000000000000000000000000000000000000f"),
        };
        std::fs::create_dir_all(planted.parent().expect("parent")).expect("mkdir");
        let _ = std::fs::remove_file(&planted);
        let needle = match variant {
            "dev-zero" => {
                std::os::unix::fs::symlink("/dev/zero", &planted).expect("link");
                "outside the project"
            }
            "sparse-ref" => {
                let file = std::fs::File::create(&planted).expect("create");
                file.set_len(64 << 30).expect("sparse 64 GiB");
                "bytes, more than"
            }
            _ => {
                mkfifo(&planted);
                "not a regular file"
            }
        };
        let mut server = f.server();
        let replies = server.sweep();
        assert_sweep_refused(&replies, needle);
        std::fs::remove_file(&planted).expect("remove the plant");
        if variant != "fifo-object" && variant != "fifo-head" {
            write(&planted, &format!("{head}\n"));
        }
        // The same server serves again once the plant is gone; a bare twin is a copy made at
        // start, so that run takes a fresh copy.
        if on_bare_root() {
            server = f.server();
        }
        assert_sweep_served(&server.sweep());
    }
}

// ---------------------------------------------------------------- 2.4 arguments and refs

#[test]
fn i1_option_injection_through_revisions_is_refused() {
    let f = Fixture::new("i1");
    let pwned = f.tmp.join("pwned");
    let c = f.canary_str();
    let secret = f.secret_file.display().to_string();
    let revs = [
        format!("--output={}", pwned.display()),
        "--ext-diff".into(),
        "--textconv".into(),
        "--no-index".into(),
        format!("-O{c}"),
        format!("--contents={secret}"),
        format!("--ignore-revs-file={secret}"),
        format!("--exec={c}"),
        "HEAD;rm".into(),
        "HEAD with space".into(),
        "HEAD:a.txt".into(),
    ];
    let mut server = f.server();
    let mut texts_seen = Vec::new();
    for rev in &revs {
        let rev = rev.replace('\\', "\\\\").replace('"', "\\\"");
        for (tool, args) in [
            ("git_log", format!(r#"{{"rev":"{rev}"}}"#)),
            ("git_show", format!(r#"{{"rev":"{rev}"}}"#)),
            ("git_diff", format!(r#"{{"base":"{rev}","head":"HEAD"}}"#)),
            ("git_diff", format!(r#"{{"base":"HEAD","head":"{rev}"}}"#)),
            ("git_blame", format!(r#"{{"rev":"{rev}","path":"a.txt"}}"#)),
        ] {
            let reply = server.call(tool, &args);
            reply.assert_error_contains("must be a plain revision");
            texts_seen.push(reply.text);
        }
    }
    assert!(!pwned.exists());
    f.assert_canary_silent();
    texts_seen.push(server.stderr());
    f.assert_no_secret(&texts_seen);
}

#[test]
fn i2_hostile_ref_names_are_never_passed_back_to_git() {
    let f = Fixture::new("i2");
    let head = git(&f.root, &["rev-parse", "HEAD"]);
    write(
        &f.root.join(".git/refs/heads/--output=pwned"),
        &format!("{head}\n"),
    );
    write(&f.root.join(".git/refs/heads/-x"), &format!("{head}\n"));
    write(&f.root.join(".git/refs/tags/HEAD~1"), &format!("{head}\n"));
    let mut server = f.server();
    server
        .call("git_log", r#"{"rev":"--output=pwned"}"#)
        .assert_error_contains("must be a plain revision");
    assert_sweep_served(&server.sweep());
    assert!(!f.root.join("pwned").exists());
    assert!(!f.tmp.join("pwned").exists());
}

#[test]
fn i3_pathspec_magic_is_literal() {
    let f = Fixture::new("i3");
    let mut server = f.server();
    let missing = server
        .call("git_log", r#"{"path":"no-such-file"}"#)
        .output();
    assert_eq!(
        missing,
        r#"(no commits: no commit in HEAD changes "no-such-file")"#
    );
    for magic in [
        ":(top)a.txt",
        ":/a.txt",
        ":!a.txt",
        ":(glob)**",
        ":(icase)A.TXT",
        ":(attr:diff)",
        ":",
    ] {
        let args = format!(r#"{{"path":"{magic}"}}"#);
        // Each names a file that does not exist, so nothing matches (the product's note says so).
        assert_eq!(
            server.call("git_log", &args).output(),
            format!("(no commits: no commit in HEAD changes {magic:?})"),
        );
        let args = format!(r#"{{"base":"HEAD~1","head":"HEAD","path":"{magic}"}}"#);
        assert_eq!(
            server.call("git_diff", &args).output(),
            format!("(no differences between HEAD~1 and HEAD in {magic:?})"),
        );
    }
}

#[test]
fn i4_replace_refs_and_grafts_never_rewrite_history() {
    let f = Fixture::new("i4");
    let mut server = f.server();
    let clean = server.sweep();
    drop(server);
    let first = git(&f.root, &["rev-parse", "HEAD~1"]);
    let head = git(&f.root, &["rev-parse", "HEAD"]);
    let tree = git(&f.root, &["rev-parse", "HEAD~1^{tree}"]);
    let spoof = format!(
        "tree {tree}\nauthor Mallory <m@example.com> 1704067200 +0000\ncommitter Mallory <m@example.com> 1704067200 +0000\n\nSPOOFED\n"
    );
    let spoofed = write_commit(&f.root, &spoof);
    write(
        &f.root.join(".git/refs/replace").join(&first),
        &format!("{spoofed}\n"),
    );
    write(&f.root.join(".git/info/grafts"), &format!("{head}\n"));
    let mut server = f.server();
    let hostile = server.sweep();
    for (a, b) in clean.iter().zip(&hostile) {
        assert_eq!(a.text, b.text);
        assert!(!b.text.contains("SPOOFED"));
    }
    assert!(hostile[0].output().contains("first"));
}

#[test]
fn i5_mailmap_never_spoofs_log_nor_leaks() {
    let f = Fixture::new("i5");
    write(&f.root.join(".mailmap"), "SPOOFED <alice@example.com>\n");
    let mut server = f.server();
    let log = server.call("git_log", r#"{"n":5}"#).output();
    let show = server.call("git_show", r#"{"rev":"HEAD"}"#).output();
    assert!(!log.contains("SPOOFED") && !show.contains("SPOOFED"));
    drop(server);
    std::fs::remove_file(f.root.join(".mailmap")).expect("rm");
    write(
        &f.secret_file,
        &format!("{} <alice@example.com>\n", f.token),
    );
    std::os::unix::fs::symlink(&f.secret_file, f.root.join(".mailmap")).expect("symlink");
    f.plant_config(&format!(
        "[mailmap]\n\tfile = {}\n[log]\n\tmailmap = true\n",
        f.secret_file.display()
    ));
    let mut server = f.server();
    let replies = server.sweep();
    assert_sweep_served(&replies);
    f.assert_no_secret(&texts(&replies, &server));
}

#[test]
fn i6_output_shaping_config_is_normalised() {
    let f = Fixture::new("i6");
    let mut server = f.server();
    let clean = server.sweep();
    drop(server);
    f.plant_config(
        "[color]\n\tui = always\n[core]\n\tquotePath = false\n[i18n]\n\tlogOutputEncoding = UTF-16\n[log]\n\tdecorate = full\n[format]\n\tpretty = %s\n",
    );
    let mut server = f.server();
    let hostile = server.sweep();
    for ((a, b), (tool, args)) in clean.iter().zip(&hostile).zip(SWEEP) {
        assert_eq!(a.text, b.text, "{tool} {args}");
    }
}

#[test]
fn i7_the_index_is_never_written() {
    let f = Fixture::new("i7");
    f.plant_config(&format!(
        "[core]\n\tuntrackedCache = true\n\tsplitIndex = true\n\tfsmonitor = {}\n[feature]\n\tmanyFiles = true\n[index]\n\tversion = 4\n",
        f.canary_str()
    ));
    f.touch_worktree();
    let before = snapshot(&f.root);
    let mut server = f.server();
    assert_sweep_served(&server.sweep());
    assert_eq!(snapshot(&f.root), before);
    let names: Vec<String> = walk(&f.root.join(".git"))
        .iter()
        .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect();
    assert!(!names
        .iter()
        .any(|n| n.starts_with("sharedindex.") || n == "index.lock"));
    f.assert_canary_silent();
}

// ---------------------------------------------------------------- 2.5 output and resources

/// Commits `content` to `file` with message `message` and author name `author`.
fn commit_raw(root: &Path, file: &str, content: &[u8], message: &[u8], author: &str) {
    std::fs::write(root.join(file), content).expect("write");
    let msg = root.join("../msg");
    std::fs::write(&msg, message).expect("msg");
    let out = git_command(root)
        .env("GIT_AUTHOR_NAME", author)
        .args([
            "-c",
            "i18n.commitEncoding=UTF-8",
            "commit",
            "-q",
            "--cleanup=verbatim",
            "-F",
        ])
        .arg(&msg)
        .arg("--")
        .arg(file)
        .output()
        .expect("commit");
    if !out.status.success() {
        git(root, &["add", file]);
        let out = git_command(root)
            .env("GIT_AUTHOR_NAME", author)
            .args(["commit", "-q", "--cleanup=verbatim", "-F"])
            .arg(&msg)
            .output()
            .expect("commit");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

fn decoded_outputs(server: &mut Server) -> Vec<String> {
    let mut outputs: Vec<String> = server
        .sweep()
        .iter()
        .filter(|r| !r.is_error)
        .map(Reply::output)
        .collect();
    outputs.push(
        server
            .call("git_blame", r#"{"rev":"HEAD","path":"c.txt"}"#)
            .output(),
    );
    outputs
}

#[test]
fn o1_terminal_control_sequences_are_escaped() {
    let f = Fixture::new("o1");
    let hostile =
        "x\x1b[2J\x1b]8;;http://evil\x07link\x1b]8;;\x07 over\rwrite\x07 nul\x00? del\x7f";
    commit_raw(
        &f.root,
        "c.txt",
        format!("{hostile}\n").replace('\0', "").as_bytes(),
        format!("subject {0}\n\nbody {0}\n", hostile.replace('\0', "")).as_bytes(),
        "Eve\x1b[31m",
    );
    let mut server = f.server();
    let outputs = decoded_outputs(&mut server);
    let mut saw_escape = false;
    for out in &outputs {
        let mut chars = out.chars().peekable();
        while let Some(c) = chars.next() {
            let code = c as u32;
            let allowed = c == '\n' || c == '\t' || (c == '\r' && chars.peek() == Some(&'\n'));
            assert!(
                allowed || !(code < 0x20 || (0x7f..=0x9f).contains(&code)),
                "raw control U+{code:04X} in {out:?}"
            );
        }
        saw_escape |= out.contains("\\x1b[2J");
    }
    assert!(saw_escape, "controls are escaped visibly, not dropped");

    // Error texts too: a gitfile naming a path with an ESC sequence.
    let f = Fixture::new("o1-error");
    f.gitfile_to(Path::new("/nonexistent/\x1b[2Jgone"));
    let mut server = f.server();
    let reply = server.call("git_log", "{}");
    reply.assert_error_contains("cannot resolve the git dir");
    reply.assert_error_contains("\\x1b[2Jgone");
    assert!(!reply.text.contains('\x1b'), "{:?}", reply.text);
}

#[test]
fn o2_bidi_and_invisible_characters_are_escaped() {
    let f = Fixture::new("o2");
    let hostile = "admin\u{202e}txt.exe\u{2066}x\u{2069}\u{200b}\u{200f}\u{feff}\u{e0041}\u{e0042}";
    commit_raw(
        &f.root,
        "c.txt",
        format!("{hostile}\n").as_bytes(),
        format!("bidi {hostile}\n").as_bytes(),
        "Eve\u{202e}",
    );
    let mut server = f.server();
    let outputs = decoded_outputs(&mut server);
    let forbidden = |c: char| matches!(c as u32, 0x061c | 0x200b..=0x200f | 0x202a..=0x202e | 0x2060..=0x2069 | 0xfeff | 0xe0000..=0xe007f);
    for out in &outputs {
        assert!(!out.chars().any(forbidden), "{out:?}");
    }
    assert!(outputs.iter().any(|o| o.contains("\\u{202e}")));
}

/// The invisible and format characters the hardening issue found gitread returning raw: each is
/// committed in a file, a message and an author name, and must come back as a visible escape.
#[test]
fn o2_every_format_filler_and_separator_character_is_escaped() {
    let f = Fixture::new("o2-format");
    let codes: [u32; 25] = [
        0x00ad, 0x034f, 0x115f, 0x1160, 0x17b4, 0x180e, 0x2028, 0x2029, 0x206a, 0x206b, 0x206c,
        0x206d, 0x206e, 0x206f, 0x3164, 0xffa0, 0xfff9, 0xfffa, 0xfffb, 0x1d173, 0x1bca0, 0x13430,
        0x200d, 0x2065, 0xe0001,
    ];
    let hostile: String = codes
        .iter()
        .map(|&c| format!("<{}>", char::from_u32(c).unwrap()))
        .collect();
    commit_raw(
        &f.root,
        "c.txt",
        format!("{hostile}\n").as_bytes(),
        format!("format {hostile}\n").as_bytes(),
        &format!("Eve{}", '\u{3164}'),
    );
    let mut server = f.server();
    let outputs = decoded_outputs(&mut server);
    for out in &outputs {
        for &code in &codes {
            let c = char::from_u32(code).unwrap();
            assert!(!out.contains(c), "raw U+{code:04X} in {out:?}");
        }
    }
    let all = outputs.concat();
    for &code in &codes {
        let escape = format!("<\\u{{{code:04x}}}>");
        assert!(all.contains(&escape), "{escape} missing in {all:?}");
    }
}

#[test]
fn o3_large_outputs_are_capped_with_one_marker_in_both_modes() {
    let f = Fixture::new("o3");
    let big: String = (0..40_000)
        .map(|i| format!("line \"{i}\" \\ \u{e9}\n"))
        .collect();
    commit_raw(&f.root, "big.txt", big.as_bytes(), b"big\n", "Alice");
    // 200 commits with 5 KB subjects, in one fast-import.
    let mut stream = String::new();
    let subject = "s".repeat(5000);
    for i in 0..200 {
        stream.push_str(&format!(
            "commit refs/heads/long\ncommitter Alice <alice@example.com> {} +0000\ndata {}\n{subject}\n",
            1_704_067_200 + i,
            subject.len() + 1
        ));
        stream.push('\n');
    }
    git_stdin(&f.root, &["fast-import", "--quiet"], stream.as_bytes());
    let mut reference = f.reference_server();
    let mut product = f.server();
    for (tool, args) in [
        ("git_show", r#"{"rev":"HEAD"}"#),
        ("git_log", r#"{"rev":"long","n":200}"#),
        ("git_blame", r#"{"rev":"HEAD","path":"big.txt"}"#),
    ] {
        // The reference's answer: JSON text within the engine's cap, cut once with its marker.
        let reply = reference.call(tool, args);
        assert!(
            reply.text.len() <= 65536,
            "{tool}: {} bytes",
            reply.text.len()
        );
        let output = reply.output();
        assert!(output.ends_with("\n\u{2026}[truncated]"), "{tool}");
        assert_eq!(output.matches("[truncated]").count(), 1);
        assert!(!reply.text.contains("[truncated at 64 KiB]"));
        // The product's: plain text within the output cap, whole lines, one continuation line.
        let reply = product.call(tool, args);
        let output = reply.output();
        assert!(output.len() <= 61440, "{tool}: {} bytes", output.len());
        let last = output.lines().last().unwrap_or_default();
        assert!(
            last.starts_with("(cut at the output cap: call again with offset="),
            "{tool}: {last}"
        );
        assert_eq!(output.matches("(cut at the output cap").count(), 1);
        assert!(!reply.text.contains("[truncated"));
    }
}

#[test]
fn o4_odd_encodings_give_valid_json() {
    let f = Fixture::new("o4");
    let msg = f.tmp.join("latin1");
    std::fs::write(&msg, b"caf\xe9 latin1\n").expect("msg");
    std::fs::write(f.root.join("bin.txt"), b"ok \xff\xfe bytes\n").expect("blob");
    git(&f.root, &["add", "bin.txt"]);
    let out = git_command(&f.root)
        .args(["-c", "i18n.commitEncoding=ISO-8859-1", "commit", "-q", "-F"])
        .arg(&msg)
        .output()
        .expect("commit");
    assert!(out.status.success());
    let mut server = f.server();
    let log = server.call("git_log", r#"{"n":1}"#).output();
    assert!(log.contains("caf\u{e9} latin1"), "{log}");
    let show = server.call("git_show", r#"{"rev":"HEAD"}"#).output();
    assert!(
        show.contains("\u{fffd}") || show.contains("Binary files"),
        "{show}"
    );
}

#[test]
fn d2_pathological_funcname_regexes_are_bounded() {
    let f = Fixture::new("d2");
    let long: String = "a".repeat(3000);
    commit_raw(
        &f.root,
        "c.txt",
        format!("{long}\nchange\n").as_bytes(),
        b"third\n",
        "Alice",
    );
    f.plant_config("[diff \"slow\"]\n\txfuncname = ^((a*)*)*\\\\2\\\\3b$\n");
    write(&f.root.join(".gitattributes"), "*.txt diff=slow\n");
    let mut server = f.server();
    let reply = server.call("git_show", r#"{"rev":"HEAD"}"#);
    assert!(
        !reply.is_error || reply.text.contains("timed out") || reply.text.contains("git exited")
    );
    // The server is still there.
    let pong = server.request("ping", "{}");
    assert!(pong.get("result").is_some());
    f.assert_canary_silent();
}
