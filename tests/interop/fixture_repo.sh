# Sourced by the interop scripts: make_fixture_repo DIR makes the interop fixture repository in
# DIR: a one-line a.txt committed ("interop fixture commit", tagged v1.0), then a 9000-line
# big.txt committed ("big file") on branch main.
make_fixture_repo() {
    local repo="$1"
    git init -q -b main "$repo"
    echo one > "$repo/a.txt"
    git -C "$repo" add a.txt
    git -C "$repo" -c user.name=interop -c user.email=interop@example.invalid commit -qm "interop fixture commit"
    seq 1 9000 | sed 's/$/ a numbered line of the big file/' > "$repo/big.txt"
    git -C "$repo" add big.txt
    git -C "$repo" -c user.name=interop -c user.email=interop@example.invalid commit -qm "big file"
    git -C "$repo" tag v1.0 HEAD~1
}
