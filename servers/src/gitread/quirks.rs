//! Git behaviours that the shared invocation's environment and `-c` list alone cannot switch off,
//! each corrected for the command it affects.

use std::process::Command;

/// Advice git prints on stderr for the commands gitread runs, switched off so the 400-byte error
/// excerpt carries git's real message. `GIT_ADVICE=0` does this from git 2.46 only; on older gits
/// (2.39 prints both): `graftFileDeprecated` follows from `GIT_GRAFT_FILE=/dev/null` on every
/// command that parses commits, `objectNameWarning` from a ref named like an object id.
pub const ADVICE_OFF: [(&str, &str); 2] = [
    ("advice.graftFileDeprecated", "false"),
    ("advice.objectNameWarning", "false"),
];

/// The working directory of `git blame`. blame maps identities through a `.mailmap` whatever
/// `log.mailmap` says, and reads it relative to its working directory (without following a
/// symlink). With `--work-tree` pinned to the root and the working directory outside it, git does
/// not move into the work tree, so the project's `.mailmap` is never read; blame reads the file
/// at its revision from the object store and needs nothing from the work tree (top-level
/// attributes would also be looked up here, but with `--no-textconv` none shapes blame's output;
/// `gitread_reference` checks the output is unchanged). Only the administrator can create
/// `/.mailmap`. `-c core.bare=true` alone does not help: git takes `core.bare` from the
/// repository's file during setup and gives a `--git-dir` without `--work-tree` the current
/// directory as work tree, so blame still read `.mailmap` (seen on git 2.39.5 and 2.47.3).
pub const BLAME_CWD: &str = "/";

/// Runs `git blame` from [`BLAME_CWD`], outside the work tree (see there).
pub fn blame_outside_work_tree(command: &mut Command) {
    command.current_dir(BLAME_CWD);
}
