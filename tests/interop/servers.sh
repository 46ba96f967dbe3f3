# Sourced by the interop scripts that drive gitread and recall over stdio and HTTP (needs $root,
# the checkout): builds the release binary ($bin) and the fixtures' ($fixtures_bin), makes a scratch folder ($work, removed on exit
# with every server `serve` started) holding the fixture repository of fixture_repo.sh ($repo) and
# a project whose indexes hold one memory note, the sprocket plan ($project), and defines
# `serve NAME [ROOT]`, which starts NAME over Streamable HTTP on a free port and sets $url (the
# conformance fixture from the fixtures' binary).
cargo build --release --offline -p agentteams-mcp-servers -p agentteams-mcp-fixtures \
    --manifest-path "$root/Cargo.toml"
bin="$root/target/release/agentteams-mcp"
fixtures_bin="$root/target/release/agentteams-mcp-fixtures"
work="$(mktemp -d)"
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT

. "$root/tests/interop/fixture_repo.sh"
repo="$work/repo"
make_fixture_repo "$repo"

project="$work/project"
mkdir -p "$project/references/plans"
printf '# Sprocket plan\n\nSprockets mesh with gears; the plan covers sprocket sizing and sprocket wear over time.\n' \
    > "$project/references/plans/sprocket.md"
"$bin" index build --root "$project" 2>/dev/null

serve() {
    local log="$work/$1.log"
    local server="$bin"
    [ "$1" = conformance ] && server="$fixtures_bin"
    "$server" --serve-mcp "$1" ${2:+--root "$2"} --http --port 0 2>"$log" &
    pids+=("$!")
    url=""
    for _ in $(seq 1 100); do
        url=$(sed -n 's#.*Streamable HTTP on http://127\.0\.0\.1:\([0-9]*\)/mcp.*#http://localhost:\1/mcp#p' "$log")
        [ -n "$url" ] && return
        sleep 0.1
    done
    echo "$(basename "$0"): $1 did not start over HTTP" >&2
    cat "$log" >&2
    exit 1
}
