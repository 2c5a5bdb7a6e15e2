#!/usr/bin/env bash
# completion.sh — contrib/bash-completion/czk, sourced into this bash:
#   - `complete -p czk` names its function;
#   - the first word completes to the commands `czk --help` lists, a prefix
#     to its command, "-" to the global options;
#   - for every command, "--" completes to exactly the options its --help
#     lists (plus --help and the global --threads, --verbose, --quiet), also
#     after global options before the command;
#   - the values of --backend and --priority; directories only after --out of
#     submit.
# usage: completion.sh CZK SOURCE_DIR
set -u
CZK=$1 SRC=$2
T=$(mktemp -d /tmp/czk-cli-comp.XXXXXX)
fail=0
bad() { echo "FAIL: $*" >&2; fail=1; }
trap 'rm -rf "$T"' EXIT

# shellcheck source=/dev/null
. "$SRC/contrib/bash-completion/czk" || { bad "sourcing the completion failed"; exit 1; }
complete -p czk 2>/dev/null | grep -q -- '-F _czk' || bad "complete -p czk: $(complete -p czk 2>&1)"

# comp WORD...: what completing the last WORD offers (sorted, one per line)
comp() {
    COMP_WORDS=("$@")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    COMP_LINE="$*"
    COMP_POINT=${#COMP_LINE}
    COMPREPLY=()
    _czk czk "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
    printf '%s\n' "${COMPREPLY[@]}" | sort -u
}
words() { tr ' ' '\n' | grep -v '^$' | sort -u; }

"$CZK" --help >"$T/help" || bad "czk --help failed"
cmds=$(sed -n '/^commands/,$p' "$T/help" | sed -n 's/^  \([a-z-]*\) .*/\1/p')
[ "$(comp czk "")" = "$(echo "$cmds" help | words)" ] ||
    bad "czk <TAB>: $(comp czk "" | tr '\n' ' '), want $(echo $cmds) help"
[ "$(comp czk su)" = submit ] || bad "czk su<TAB>: $(comp czk su)"
[ "$(comp czk ver)" = "$(echo verify version | words)" ] || bad "czk ver<TAB>: $(comp czk ver | tr '\n' ' ')"
comp czk - | grep -qx -- --version || bad "czk -<TAB> does not offer --version"

for c in $cmds; do
    [ "$c" = journal ] || [ "$c" = version ] && continue
    "$CZK" "$c" --help >"$T/h.$c" || bad "czk $c --help failed"
    want=$( (sed -n '/^  -h, --help/,$p' "$T/h.$c" | sed -n 's/^  \(--[a-z][a-z-]*\).*/\1/p'
             echo --help --threads --verbose --quiet) | words)
    got=$(comp czk "$c" --)
    [ "$got" = "$want" ] || bad "czk $c --<TAB>: $(echo $got), want $(echo $want)"
    got=$(comp czk --threads 2 -v "$c" --)
    [ "$got" = "$want" ] || bad "czk --threads 2 -v $c --<TAB>: $(echo $got)"
done
[ "$(comp czk submit --pri)" = --priority ] || bad "czk submit --pri<TAB>: $(comp czk submit --pri)"
[ "$(comp czk submit --priority "")" = "$(echo high low normal | words)" ] ||
    bad "czk submit --priority <TAB>: $(comp czk submit --priority "" | tr '\n' ' ')"
[ "$(comp czk prove --backend c)" = "$(echo cpu cuda | words)" ] || bad "czk prove --backend c<TAB>: $(comp czk prove --backend c)"
[ "$(comp czk journal "")" = "$(echo check idmark salvage | words)" ] || bad "czk journal <TAB>: $(comp czk journal "")"
mkdir "$T/dir" && : >"$T/file"
[ "$(comp czk submit --circuit x --out "$T/")" = "$T/dir" ] ||
    bad "czk submit --out <TAB> offers more than directories: $(comp czk submit --circuit x --out "$T/" | tr '\n' ' ')"
comp czk prove "$T/" | grep -qx "$T/file" || bad "czk prove <TAB> does not offer files"

[ "$fail" = 0 ] && echo "cli completion: ok"
exit "$fail"
