#!/usr/bin/env bash
# Builds lily (and, with TESTS, lily-cuda test and micro-benchmark binaries, by name) at each
# given git revision and stages them for scripts/gpu/ab_check.sh on the GPU machine:
#   [TESTS="moe backend"] scripts/gpu/stage_variants.sh DIR REV [REV ...]
#   -> DIR/lily.tar.xz (every lily_<short rev>), DIR/tests_<short rev>/<test>.gz,
#      DIR/benches_<short rev>/<bench>.gz (a name may be both), DIR/fixture/
# The builds differ mostly in their embedded kernel sources, so one xz archive of all of them
# (64 MiB window) is about the size of one gzipped binary: 7 variants took 4.5 MB instead of
# 42 MB, and the GPU machine takes at most 64 MiB of working tree and carried files per call.
# Staging into a DIR that already holds an archive adds to it.
# Each revision is checked out in this checkout and built in turn (cargo rebuilds correctly
# between revisions of one tree, but not across worktrees sharing a target directory: that
# staged one build three times once). The binary carries its commit (lily bench prints it), and
# the script checks the stamp before staging. The checkout returns to where it was; a dirty
# tree is refused.
set -euo pipefail
# The checkouts below rewrite this very file: bash reads all of main before it runs.
main() {
    dir=${1:?usage: stage_variants.sh DIR REV [REV ...]}
    shift
    here=$(cd "$(dirname "$0")/../.." && pwd)
    cd "$here"
    if ! git diff --quiet || ! git diff --cached --quiet; then
        echo "stage_variants.sh: commit or stash the changes first" >&2
        exit 1
    fi
    back=$(git symbolic-ref --short -q HEAD || git rev-parse HEAD)
    # This revision's test-binary lister: an older checkout may not have it.
    lister=$(mktemp)
    cp scripts/test_binaries.sh "$lister"
    trap 'git checkout -q "$back"; rm -f "$lister"' EXIT
    mkdir -p "$dir/fixture"
    if [ -e "$dir/lily.tar.xz" ]; then tar xJf "$dir/lily.tar.xz" -C "$dir" && rm "$dir/lily.tar.xz"; fi
    cp crates/cpu/tests/fixtures/linear3_full1/* "$dir/fixture/"
    # Resolved before the first checkout moves HEAD under a relative name such as HEAD~1.
    shorts=()
    for rev in "$@"; do shorts+=("$(git rev-parse --short "$rev")"); done
    for short in "${shorts[@]}"; do
        git checkout -q "$short"
        LILY_COMMIT=$short cargo build --release -q -p lily-cli
        grep -qF "$short" target/release/lily || {
            echo "stage_variants.sh: the build of $short does not carry its commit" >&2
            exit 1
        }
        strip -o "$dir/lily_$short" target/release/lily
        if [ -n "${TESTS:-}" ]; then
            built=$(bash "$lister")
            for t in $TESTS; do
                found=$(awk -v t="$t" '$2 == t {print $1, $3}' <<<"$built")
                [ -n "$found" ] || { echo "stage_variants.sh: no test or bench binary $t at $short" >&2; exit 1; }
                while read -r kind exe; do
                    mkdir -p "$dir/${kind}_$short"
                    strip -o "$dir/${kind}_$short/$t" "$exe"
                    gzip -f "$dir/${kind}_$short/$t"
                done <<<"$found"
            done
        fi
        echo "staged $short ($(git log -1 --format=%s "$short" | cut -c1-70))"
    done
    (cd "$dir" && tar cf - lily_* | xz -9 -T2 >lily.tar.xz && rm lily_*)
}
main "$@"
