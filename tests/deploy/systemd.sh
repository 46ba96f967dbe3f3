#!/bin/sh
# The hardened systemd unit of docs/deploy.md ("A hardened systemd unit"), checked as written:
# extracted from the guide and verified by `systemd-analyze verify` (systemd 252, Debian 12's),
# which names every unknown key, bad value and missing executable it can see. The test fails on any line it
# prints. The unit is not started: the test machines run no systemd. Installs systemd (for
# systemd-analyze) with apt-get when missing.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$here/common.sh"
needs systemd-analyze systemd

unit_dir="$work/units"
mkdir -p "$unit_dir"
# The first ```ini block after the section's heading.
awk '/^## A hardened systemd unit/{s=1} s && /^```ini/{f=1; next} f && /^```/{exit} f' \
    "$root/docs/deploy.md" > "$unit_dir/agentteams-mcp@.service"
grep -q '^ExecStart=' "$unit_dir/agentteams-mcp@.service" || {
    echo "systemd.sh: no unit with an ExecStart= found in docs/deploy.md" >&2; exit 1; }
# A template is verified through an instance of it.
cp "$unit_dir/agentteams-mcp@.service" "$unit_dir/agentteams-mcp@1.service"
out=$(cd "$unit_dir" && systemd-analyze verify --man=no ./agentteams-mcp@1.service 2>&1) || status=$?
if [ -n "$out" ] || [ "${status:-0}" -ne 0 ]; then
    printf 'systemd.sh: systemd-analyze verify found problems in the unit of docs/deploy.md:\n%s\n' "$out" >&2
    exit 1
fi
# The check can fail: an unknown key in a copy is reported.
sed 's/^\[Service\]/[Service]\nNoSuchDirective=yes/' "$unit_dir/agentteams-mcp@1.service" \
    > "$unit_dir/broken@1.service"
bad=$(cd "$unit_dir" && systemd-analyze verify --man=no ./broken@1.service 2>&1 || true)
case "$bad" in
    *NoSuchDirective*) ;;
    *) echo "systemd.sh: systemd-analyze did not report an unknown key: $bad" >&2; exit 1 ;;
esac
echo "systemd.sh: the unit of docs/deploy.md verifies cleanly"
