#!/usr/bin/env bash
# The Python package installed, not run from the build tree (docs/python.md, "Install"):
#  1. `cmake --install BUILD --prefix P --component python` puts the package at
#     P/SITE_DIR (SST_PYTHON_INSTALL_DIR), and the main example runs from there,
#     stopped at its interrupt and resumed by a second process;
#  2. `pip install --no-build-isolation --no-index --target T ./python`, offline with
#     Debian's setuptools against the same build (SUPERSTEP_BUILD_DIR), gives a
#     package that does the same and has the server (`python3 -m superstep serve`).
# pip builds inside the folder it is given, so it is given a copy of python/ and
# include/, never the source tree.
# Usage: test_python_install.sh BUILD_DIR REPO_ROOT PYTHON SITE_DIR
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=$(realpath "$1")
root=$(realpath "$2")
py=$3
site=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
failures=0

# shellcheck source=tests/cli/harness.sh
source "$here/harness.sh"

# research.py start/resume with only DIR on the module path; checks that the
# package imported is DIR's, not the build tree's.
research_from() { # DIR WHAT
  local dir=$1 what=$2
  rm -f "$work/r.db"*
  expect_rc 0 env -u PYTHONPATH PYTHONPATH="$dir" PYTHONDONTWRITEBYTECODE=1 "$py" -c \
    "import superstep, superstep._core; print(superstep.__file__); print(superstep._core.__file__)"
  contains "$out" "$dir/superstep/__init__.py" "$what: the package imported"
  contains "$out" "$dir/superstep/_core" "$what: the extension imported"
  expect_rc 0 env PYTHONPATH="$dir" PYTHONDONTWRITEBYTECODE=1 "$py" \
    "$root/examples/python/research.py" --db "$work/r.db" start demo
  contains "$out" "interrupted:" "$what: the first process stops at the interrupt"
  expect_rc 0 env PYTHONPATH="$dir" PYTHONDONTWRITEBYTECODE=1 "$py" \
    "$root/examples/python/research.py" --db "$work/r.db" resume yes
  contains "$out" "demo: 3 notes from 1 sources" "$what: the second process resumes"
}

# 1. cmake --install, the python component only, to a scratch prefix.
expect_rc 0 cmake --install "$build" --prefix "$work/prefix" --component python
[ -f "$work/prefix/$site/superstep/graph.py" ] || fail "cmake --install: no $site/superstep/graph.py"
ls "$work/prefix/$site/superstep/"_core*.so >/dev/null 2>&1 || fail "cmake --install: no _core*.so"
[ -f "$work/prefix/$site/superstep/prebuilt/__init__.py" ] || fail "cmake --install: no prebuilt/"
research_from "$work/prefix/$site" "cmake --install"

# 2. pip, offline, from a copy of the sources.
if "$py" -m pip --version >/dev/null 2>&1; then
  mkdir -p "$work/src" && cp -r "$root/python" "$root/include" "$work/src/" && rm -rf "$work/src/python/tests"
  expect_rc 0 env SUPERSTEP_BUILD_DIR="$build" "$py" -m pip install --no-build-isolation \
    --no-index --no-deps --disable-pip-version-check -q --target "$work/pip" "$work/src/python"
  research_from "$work/pip" "pip install"
  expect_rc 0 env PYTHONPATH="$work/pip" "$py" -c "import superstep._core as c; print(hasattr(c, 'Server'))"
  contains "$out" "True" "pip install from a build tree: the module has the server"
else
  fail "$py -m pip is not there (Debian: apt-get install python3-pip)"
fi

if [ "$failures" -gt 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "ok: the package runs installed by cmake --install and by pip"
