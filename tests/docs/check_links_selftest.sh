#!/bin/sh
# check_links_selftest.sh — check_links.sh must fail on each kind of problem
# it exists to catch, and pass on a tree without them.  Builds small trees in a
# temporary directory (not a git checkout, so the script lists files with find).
# Usage: check_links_selftest.sh [PATH_TO_check_links.sh]
set -eu

CHECK=${1:-$(dirname "$0")/check_links.sh}
T=$(mktemp -d "${TMPDIR:-/tmp}/czk-docs-selftest.XXXXXX")
trap 'rm -rf "$T"' EXIT INT TERM
fails=0

# a clean tree: relative links to files and folders, anchors, URLs, a link
# inside a fenced block and inside a code span (neither is a link)
clean() {
    rm -rf "$T/r"
    mkdir -p "$T/r/docs" "$T/r/src" "$T/r/tests/x"
    printf '# r\n[design](docs/design.md#ownership), [src](src/), [web](https://example.org/a.md)\n' >"$T/r/README.md"
    printf '[back](../README.md) [self](#top) [t][ref]\n\n[ref]: ../tests/x/notes.md\n' >"$T/r/docs/design.md"
    printf '```\n[not a link](nowhere.txt)\n```\nsee `[x](missing.txt)` in code\n' >>"$T/r/docs/design.md"
    printf 'notes\n' >"$T/r/tests/x/notes.md"
    printf '/* contract: docs/design.md */\nint f(void);\n' >"$T/r/src/f.h"
}

# expect NAME STATUS PATTERN: run the checker, compare its exit status, and
# (for failures) that its report names the problem
expect() {
    name=$1 want=$2 pattern=$3
    set +e
    sh "$CHECK" "$T/r" >"$T/out" 2>&1
    got=$?
    set -e
    if [ "$got" -ne "$want" ]; then
        echo "FAIL $name: exit $got, expected $want"
        sed 's/^/    /' "$T/out"
        fails=$((fails + 1))
    elif [ -n "$pattern" ] && ! grep -q -- "$pattern" "$T/out"; then
        echo "FAIL $name: the report does not contain \"$pattern\""
        sed 's/^/    /' "$T/out"
        fails=$((fails + 1))
    else
        echo "ok   $name"
    fi
}

clean
expect "clean tree passes" 0 ""

clean
printf '[gone](docs/missing.md)\n' >>"$T/r/README.md"
expect "broken relative link" 1 "README.md:3: broken link: docs/missing.md"

clean
printf '[up](../../outside.md)\n' >>"$T/r/docs/design.md"
expect "link that leaves the repository" 1 "link leaves the repository: ../../outside.md"

clean
printf '[abs](/etc/passwd)\n' >>"$T/r/README.md"
expect "absolute link" 1 "link to an absolute path: /etc/passwd"

clean
printf '/* layout: see ../%s/reference/formats.txt */\n' "shared" >>"$T/r/src/f.h"
expect "path into a sibling folder" 1 "outside path: src/f.h:3:"

clean
printf '# made on /%s/alice/czk\n' "home" >"$T/r/tests/x/run.sh"
expect "absolute development path" 1 "outside path: tests/x/run.sh:1:"

clean
printf '/* (%s.md: errors are values) */\n' "STYLE" >>"$T/r/src/f.h"
expect "comment names a page that is not in the repository" 1 "src/f.h:3: names STYLE.md"

clean
printf '[case](docs/Design.md)\n' >>"$T/r/README.md"
expect "link whose case does not match" 1 "broken link: docs/Design.md"

if [ "$fails" -ne 0 ]; then
    echo "check_links_selftest: $fails case(s) failed"
    exit 1
fi
echo "check_links_selftest: all cases behave"
