# The helpers of the CLI tests (sourced): each test sets $work (its scratch
# directory) and failures=0 first, and exits with $failures at the end.

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# expect_rc WANT CMD...: runs CMD, keeps stdout/stderr in $out/$err.
expect_rc() {
  local want=$1; shift
  "$@" >"$work/out" 2>"$work/err"
  local rc=$?
  out=$(cat "$work/out"); err=$(cat "$work/err")
  if [ "$rc" != "$want" ]; then
    fail "'$*' exited $rc, expected $want; stderr: $err"
  fi
}
contains() { # HAYSTACK NEEDLE WHAT
  case "$1" in *"$2"*) ;; *) fail "$3: '$2' not in: $1" ;; esac
}
lacks() { # HAYSTACK NEEDLE WHAT
  case "$1" in *"$2"*) fail "$3: '$2' in: $1" ;; *) ;; esac
}
line() { sed -n "${2}p" <<<"$1"; } # TEXT N: line N
matches() { # TEXT REGEX WHAT (extended regex, whole line)
  grep -Eq "^$2\$" <<<"$1" || fail "$3: '$1' does not match $2"
}
count() { grep -cF -- "$2" <<<"$1"; } # TEXT NEEDLE: lines holding NEEDLE
