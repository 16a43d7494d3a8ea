#!/usr/bin/env bash
# Usage: scripts/gpu-carry.sh DIR
# Packs the GPU checks for a machine without cargo (a lent GPU): builds here, into DIR, the
# release binary, the test binaries of the README's test command (the library's and the
# integration tests', which run the nqueens beside them) and DIR/run.sh. Copy DIR into a
# checkout of the same commit there (x86-64 Linux, a Vulkan loader and driver) and, from
# its root:
#   DIR/run.sh [FROM TO]
# runs, with NQUEENS_REQUIRE_GPU=1, the library's tests (8 at a time), the integration tests
# `gpu race quadrant layering` (but the N = 24/25 units, minutes of CPU), then
# `ONLY="quadrant cpu" scripts/gpu-bench.sh - 1 FROM TO` (default 19 21: issue 60's runs,
# the quadrant engine's pairs on the GPU against the CPU threads) with LIMIT=150 and no
# warm-up round (WARMUP=0: each run counts), then `count TO --engine quadrant --device
# gpu-only` once more on a build with the `stage-times` feature (DIR/nqueens-stages):
# where the counting threads' CPU time goes, and the GPU's by pass. With AB="REV ..." (git
# revisions: branches to weigh against this checkout on the GPU), each is built with the
# `stage-times` feature too (DIR/nqueens-stages-REV) and run.sh runs that count on each
# after this checkout's, so the GPU's passes can be compared in one call.
# The test binaries name this checkout's path (the files they read): run.sh links that path
# to the checkout there where it does not exist.
# `a_gpu_that_miscounts_a_known_answer_is_refused` runs only where NQUEENS_BAD_VULKAN_ICD
# names Mesa 22.3's lavapipe (as .ci/run sets it up). Each step is given STEP_LIMIT seconds
# (300) and each stage count STAGE_LIMIT (150). Exits 1 if a test or a count failed or ran
# past its bound.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: scripts/gpu-carry.sh DIR" >&2; exit 2; }
dir=$(realpath -m "$1")
if [ -e "$dir" ] && [ ! -f "$dir/run.sh" ]; then
    echo "$dir exists and is not a pack this script made (no run.sh): give a new DIR" >&2
    exit 2
fi
cd "$(dirname "$0")/.."
# (the build with stage times first: the plain one is the last, target/release's)
cargo build --release --quiet --features stage-times
stages=$(mktemp)
cp target/release/nqueens "$stages"
cargo build --release --quiet
if ! out=$(cargo test --no-run 2>&1); then
    echo "$out" >&2
    exit 1
fi
built=$(echo "$out" | sed -n 's/^ *Executable .*(\(.*\))$/\1/p')
lib= it=
for f in $built; do
    case $f in
    */it-*) it=$f ;;
    # the library's unit tests, not the command line's: they test the GPU backends
    */nqueens-*) [ "$("$f" --list 2>/dev/null | grep -c '^gpu::')" -gt 0 ] && lib=$f ;;
    esac
done
if [ -z "$lib" ] || [ -z "$it" ]; then
    echo "the library's or the integration tests' binary was not found among: $built" >&2
    exit 1
fi
ab_built=$(mktemp -d)
for rev in ${AB:-}; do
    tree=$(mktemp -d)
    git worktree add --quiet --detach "$tree" "$rev"
    # (one target folder for the revisions: their dependencies are built once)
    CARGO_TARGET_DIR=$PWD/target/ab cargo build --release --quiet --features stage-times \
        --manifest-path "$tree/Cargo.toml"
    cp target/ab/release/nqueens "$ab_built/nqueens-stages-${rev//\//-}"
    git worktree remove --force "$tree"
done
rm -rf "$dir" && mkdir -p "$dir"
mv "$ab_built"/* "$dir"/ 2>/dev/null || true
rmdir "$ab_built"
cp target/release/nqueens "$dir/nqueens"
mv "$stages" "$dir/nqueens-stages"
chmod 755 "$dir/nqueens-stages"
cp "$lib" "$dir/lib-tests"
cp "$it" "$dir/it-tests"
cat >"$dir/run.sh" <<RUN
#!/usr/bin/env bash
# Made by scripts/gpu-carry.sh at $(git rev-parse --short HEAD): run from the checkout's root.
set -u
here=\$(cd "\$(dirname "\$0")" && pwd)
built=$PWD
if [ ! -e "\$built" ]; then
    mkdir -p "\$(dirname "\$built")" && ln -s "\$PWD" "\$built"
fi
status=0
# each step within a bound (STEP_LIMIT, STAGE_LIMIT seconds), so that a slow one leaves the
# device's time to the rest
step() { timeout "\${STEP_LIMIT:-300}" "\$@"; }
stage() { timeout "\${STAGE_LIMIT:-150}" "\$@"; }
NQUEENS_REQUIRE_GPU=1 step "\$here/lib-tests" --test-threads 8 || status=1
skip=(--skip quadrant_24)
if [ -z "\${NQUEENS_BAD_VULKAN_ICD:-}" ]; then
    echo "NQUEENS_BAD_VULKAN_ICD is unset: the miscounting-driver test is left out"
    skip+=(--skip a_gpu_that_miscounts_a_known_answer_is_refused)
fi
NQUEENS_REQUIRE_GPU=1 step "\$here/it-tests" gpu race quadrant layering "\${skip[@]}" || status=1
NQUEENS="\$here/nqueens" ONLY="quadrant cpu" LIMIT=150 WARMUP=0 step bash scripts/gpu-bench.sh - 1 "\${1:-19}" "\${2:-21}" || status=1
echo "== the counting threads' CPU time by stage, count \${2:-21} --engine quadrant --device gpu-only"
stage "\$here/nqueens-stages" count "\${2:-21}" --engine quadrant --device gpu-only --stats || status=1
for other in "\$here"/nqueens-stages-*; do
    [ -e "\$other" ] || continue
    echo "== the same on \${other##*/nqueens-stages-}"
    stage "\$other" count "\${2:-21}" --engine quadrant --device gpu-only --stats || status=1
done
exit \$status
RUN
chmod +x "$dir/run.sh"
# (the device tool carries 64 MiB in all: symbols are a tenth to a fifth of a binary)
if command -v strip >/dev/null; then
    strip "$dir"/nqueens* "$dir/lib-tests" "$dir/it-tests"
fi
du -sh "$dir"
if [ "$(du -sm "$dir" | cut -f1)" -gt 60 ]; then
    echo "$dir holds more than 60 MiB: the device tool carries 64 in all; give AB fewer revisions" >&2
    exit 1
fi
