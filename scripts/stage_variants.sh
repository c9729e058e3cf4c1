#!/usr/bin/env bash
# Builds lily at each given git revision and stages the binaries for scripts/ab_bench.sh:
#   scripts/stage_variants.sh DIR REV [REV ...]     ->  DIR/lily_<short rev>.gz
# Each revision is checked out in this checkout and built into its own target (cargo reuses
# artifacts across revisions of one tree correctly, but not across worktrees sharing a target
# directory: that staged one build three times once). The binary carries its commit (lily bench
# prints it), and the script checks the stamp before staging. The checkout returns to where it
# was; a dirty tree is refused.
set -euo pipefail
dir=${1:?usage: stage_variants.sh DIR REV [REV ...]}
shift
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
if ! git diff --quiet || ! git diff --cached --quiet; then
    echo "stage_variants.sh: commit or stash the changes first" >&2
    exit 1
fi
back=$(git symbolic-ref --short -q HEAD || git rev-parse HEAD)
trap 'git checkout -q "$back"' EXIT
mkdir -p "$dir"
for rev in "$@"; do
    short=$(git rev-parse --short "$rev")
    git checkout -q "$short"
    LILY_COMMIT=$short cargo build --release -q -p lily-cli
    grep -qF "$short" target/release/lily || {
        echo "stage_variants.sh: the build of $short does not carry its commit" >&2
        exit 1
    }
    strip -o "$dir/lily_$short" target/release/lily
    gzip -f "$dir/lily_$short"
    echo "staged $dir/lily_$short.gz ($(git log -1 --format=%s "$short" | cut -c1-70))"
done
