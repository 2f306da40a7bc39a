#!/usr/bin/env bash
# Installs a build into a temporary prefix and builds programs against it the
# ways a user would: the C examples (examples/c) with pkg-config, shared and
# --static, and with find_package(superstep) in a generated CMake project;
# tests/install/embed.c (one call into each of the core, agent and Lua
# libraries) with pkg-config superstep-lua and the CMake targets. Each program
# must run and print what the in-tree examples print.
# Usage: test_install.sh CMAKE BUILD_DIR REPO_ROOT CC VERSION ["EXTRA_FLAGS"]
# VERSION is the project's (0.1.0): the libraries are libNAME.so.VERSION.
# EXTRA_FLAGS (word-split) are added to every compile and link: the
# sanitizer flags of a sanitizer build, whose installed libraries need them.
set -euo pipefail
cmake_bin=$1
build=$(realpath "$2")
root=$(realpath "$3")
cc=$4
version=$5
major=${version%%.*}
read -r -a extra <<<"${6:-}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
examples=$root/examples/c
embed=$root/tests/install/embed.c

fail() {
  echo "FAIL: $*" >&2
  exit 1
}
step() { echo "== $*"; }
# run_log LOG CMD...: runs CMD with its output in LOG; on failure prints LOG.
run_log() {
  local log=$1
  shift
  if ! "$@" >"$log" 2>&1; then
    cat "$log" >&2
    return 1
  fi
}

# The regular expressions of example_graph_demo and example_reducers_demo in
# tests/CMakeLists.txt, and one for embed.c.
re_graph_demo='first run: interrupted.*Publish 3 sections\?.*after the answer: completed.*"status": "published"'
re_reducers_demo='counter: 18 .*previous version still has counter = 10.*expected number, got string'
re_embed="embed: superstep ${version//./\\.}, agent and lua linked \\(SST_EIO\\)"

# check_run WHAT EXE DEMO [shared|static]: runs EXE (with the installed
# libraries on LD_LIBRARY_PATH), matches its output against DEMO's regex and
# checks that it is linked to libsuperstep.so.MAJOR from the prefix (shared) or
# not at all (static).
check_run() {
  local what=$1 exe=$2 demo=$3 kind=$4 re out
  case $demo in
    graph_demo) re=$re_graph_demo ;;
    reducers_demo) re=$re_reducers_demo ;;
    embed) re=$re_embed ;;
  esac
  if ! out=$(LD_LIBRARY_PATH=$libdir "$exe" 2>&1); then
    printf '%s\n' "$out" >&2
    fail "$what: $demo exited with an error"
  fi
  if ! printf '%s\n' "$out" | tr '\n' ' ' | grep -Eq -- "$re"; then
    printf '%s\n' "$out" >&2
    fail "$what: $demo printed the above, which does not match: $re"
  fi
  local needed
  needed=$(LD_LIBRARY_PATH=$libdir ldd "$exe")
  if [ "$kind" = shared ]; then
    grep -q "libsuperstep\.so\.$major => $libdir/" <<<"$needed" ||
      fail "$what: $demo does not load libsuperstep.so.$major from $libdir: $needed"
  elif grep -q 'libsuperstep' <<<"$needed"; then
    fail "$what: $demo was to link libsuperstep statically but loads: $needed"
  fi
  echo "ok: $what: $demo ($kind)"
}

step "cmake --install $build --prefix $prefix"
run_log "$work/install.log" "$cmake_bin" --install "$build" --prefix "$prefix" ||
  fail "cmake --install failed"
pc=$(find "$prefix" -name superstep.pc -path '*/pkgconfig/*' | head -n 1)
[ -n "$pc" ] || fail "no pkgconfig/superstep.pc installed under $prefix"
pcdir=$(dirname "$pc")
libdir=$(cd "$pcdir/.." && pwd)
for lib in superstep superstep_agent superstep_lua; do
  for f in "lib$lib.a" "lib$lib.so" "lib$lib.so.$major" "lib$lib.so.$version"; do
    [ -e "$libdir/$f" ] || fail "$libdir/$f is not installed"
  done
  soname=$(readelf -d "$libdir/lib$lib.so.$version" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
  [ "$soname" = "lib$lib.so.$major" ] ||
    fail "lib$lib.so.$version has SONAME '$soname', not lib$lib.so.$major"
  # Only the sst_ names (and the Lua module opener) are exported.
  others=$(nm -D --defined-only "$libdir/lib$lib.so" | awk '$2 ~ /^[A-Z]$/ {print $3}' |
    grep -v -E '^(sst_|luaopen_superstep$)' || true)
  [ -z "$others" ] || fail "lib$lib.so exports names outside sst_: $others"
  pcname=${lib//_/-}
  [ -f "$pcdir/$pcname.pc" ] || fail "$pcdir/$pcname.pc is not installed"
done
for h in superstep.h agent.h lua.h export.h; do
  [ -f "$prefix/include/superstep/$h" ] || fail "include/superstep/$h is not installed"
done
for f in superstepConfig.cmake superstepConfigVersion.cmake superstepTargets.cmake; do
  [ -f "$libdir/cmake/superstep/$f" ] || fail "$libdir/cmake/superstep/$f is not installed"
done
[ -x "$prefix/bin/superstep" ] || fail "bin/superstep is not installed"

step "pkg-config (PKG_CONFIG_PATH=$pcdir)"
export PKG_CONFIG_PATH=$pcdir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
cflags=(-std=c11 -Wall -Wextra -Wpedantic -Werror "${extra[@]}")
pkgflags() { # pkg-config ARGS...: its output; fails the test if it fails
  local out
  out=$(pkg-config "$@" 2>&1) || fail "pkg-config $* failed: $out"
  printf '%s' "$out"
}
v=$(pkgflags --modversion superstep)
[ "$v" = "$version" ] || fail "pkg-config --modversion superstep gives '$v', not $version"
# The .pc files must point into the prefix, wherever it is.
pc_libdir=$(pkgflags --variable=libdir superstep)
case $pc_libdir in
  "$pcdir/"*) ;;
  *) fail "superstep.pc's libdir is not under the install prefix: $pc_libdir" ;;
esac
shared_flags=$(pkgflags --cflags --libs superstep)
static_flags="$(pkgflags --static --cflags --libs superstep) "
lua_flags=$(pkgflags --cflags --libs superstep-lua)
case " $static_flags " in
  *" -DSST_STATIC "*) ;;
  *) fail "pkg-config --static --cflags superstep lacks -DSST_STATIC: $static_flags" ;;
esac
for demo in graph_demo reducers_demo; do
  read -r -a flags <<<"$shared_flags"
  run_log "$work/cc.log" "$cc" "${cflags[@]}" "$examples/$demo.c" "${flags[@]}" \
    -o "$work/${demo}_pc" || fail "pkg-config superstep: building $demo failed"
  check_run "pkg-config superstep" "$work/${demo}_pc" "$demo" shared
  # --static: all of libsuperstep.a (-l: so that ld does not pick the .so;
  # --whole-archive so that every object's dependencies, SQLite's too, must
  # be in superstep.pc) with what superstep.pc says it needs.
  whole='-Wl,--whole-archive -l:libsuperstep.a -Wl,--no-whole-archive'
  read -r -a flags <<<"${static_flags/-lsuperstep /$whole }"
  [[ " ${flags[*]} " == *" -l:libsuperstep.a "* ]] ||
    fail "pkg-config --static --libs superstep lacks -lsuperstep: $static_flags"
  run_log "$work/cc.log" "$cc" "${cflags[@]}" "$examples/$demo.c" "${flags[@]}" \
    -o "$work/${demo}_pc_static" || fail "pkg-config --static superstep: building $demo failed"
  check_run "pkg-config --static superstep" "$work/${demo}_pc_static" "$demo" static
done
# The agent and Lua libraries, shared. (--static would add libcurl's
# Libs.private, whose -dev packages Debian's libcurl does not pull in.)
read -r -a flags <<<"$lua_flags"
run_log "$work/cc.log" "$cc" "${cflags[@]}" "$embed" "${flags[@]}" -o "$work/embed_pc" ||
  fail "pkg-config superstep-lua: building tests/install/embed.c failed"
check_run "pkg-config superstep-lua" "$work/embed_pc" embed shared

step "find_package(superstep) (CMAKE_PREFIX_PATH=$prefix)"
proj=$work/consumer
mkdir -p "$proj"
cat >"$proj/CMakeLists.txt" <<EOF
cmake_minimum_required(VERSION 3.20)
project(superstep_consumer C)
find_package(superstep 9.0 QUIET)
if(superstep_FOUND)
  message(FATAL_ERROR "find_package(superstep 9.0) accepted version \${superstep_VERSION}")
endif()
find_package(superstep $version REQUIRED)
foreach(t superstep::superstep superstep::agent superstep::lua
          superstep::superstep_static superstep::agent_static superstep::lua_static)
  if(NOT TARGET \${t})
    message(FATAL_ERROR "find_package(superstep) does not define \${t}")
  endif()
endforeach()
foreach(demo graph_demo reducers_demo)
  add_executable(\${demo} "$examples/\${demo}.c")
  target_link_libraries(\${demo} PRIVATE superstep::superstep)
  add_executable(\${demo}_static "$examples/\${demo}.c")
  target_link_libraries(\${demo}_static PRIVATE superstep::superstep_static)
endforeach()
add_executable(embed "$embed")
target_link_libraries(embed PRIVATE superstep::lua)
add_executable(embed_static "$embed")
target_link_libraries(embed_static PRIVATE superstep::lua_static)
EOF
run_log "$work/configure.log" "$cmake_bin" -S "$proj" -B "$proj/build" -DCMAKE_BUILD_TYPE=Debug \
  "-DCMAKE_PREFIX_PATH=$prefix" "-DCMAKE_C_COMPILER=$cc" "-DCMAKE_C_FLAGS=${cflags[*]}" ||
  fail "configuring a project with find_package(superstep) failed"
run_log "$work/build.log" "$cmake_bin" --build "$proj/build" -j 2 ||
  fail "building against the find_package(superstep) targets failed"
for demo in graph_demo reducers_demo embed; do
  check_run "find_package(superstep)" "$proj/build/$demo" "$demo" shared
  check_run "find_package(superstep)" "$proj/build/${demo}_static" "$demo" static
done
echo "install test passed"
