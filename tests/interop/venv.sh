# Sourced by the interop scripts: a private virtualenv with the official Python SDK (mcp 2.3.0),
# installed on first use. Sets $venv. Needs $root (the checkout).
venv=${AGENTTEAMS_INTEROP_VENV:-$root/target/interop-venv}
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import mcp' 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q 'mcp==2.3.0'
fi
