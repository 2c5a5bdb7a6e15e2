#!/bin/sh
# man.sh — the manual pages (man/*.scd):
#   - each one builds with scdoc and renders with groff -ww (and man -l when
#     man exists) without a warning;
#   - czk(1) has a "## czk COMMAND" section for every command `czk --help`
#     lists and no other, and each section names exactly the options that
#     `czk COMMAND --help` prints (both ways, so an option added to one and
#     not the other fails); its GLOBAL OPTIONS are the ones `czk --help` lists;
#   - the daemons' pages name exactly the options their --help prints (when the
#     daemon binaries are given);
#   - czk.conf(5) describes every key common/runtime/config.c accepts, in its
#     section, and no key that config.c does not accept.
# Exit 77 when scdoc is missing.
# usage: man.sh CZK SOURCE_DIR [CZK_GPUD CZK_SYNTH CZK_FINALIZER]
set -u
CZK=$1 SRC=$2
shift 2
command -v scdoc >/dev/null 2>&1 || { echo "scdoc missing (apt-get install scdoc): skipped"; exit 77; }
command -v groff >/dev/null 2>&1 || { echo "groff missing: skipped"; exit 77; }
T=$(mktemp -d /tmp/czk-cli-man.XXXXXX)
fail=0
bad() { echo "FAIL: $*" >&2; fail=1; }
trap 'if [ "$fail" = 0 ]; then rm -rf "$T"; else echo "(kept $T)" >&2; fi' EXIT
M=$SRC/man

# ---- build and render
n=0
for scd in "$M"/*.scd; do
    page=$(basename "$scd" .scd)
    n=$((n + 1))
    if ! scdoc <"$scd" >"$T/$page" 2>"$T/scdoc.err"; then
        bad "$page: scdoc failed: $(cat "$T/scdoc.err")"; continue
    fi
    [ -s "$T/scdoc.err" ] && bad "$page: scdoc warns: $(cat "$T/scdoc.err")"
    groff -man -ww -z "$T/$page" 2>"$T/groff.err" || bad "$page: groff failed"
    [ -s "$T/groff.err" ] && bad "$page: groff warns: $(cat "$T/groff.err")"
    head -n 20 "$T/$page" | grep -q '^\.TH' || bad "$page: no .TH line"
    if command -v man >/dev/null 2>&1; then
        MANWIDTH=80 man -l "$T/$page" >"$T/$page.txt" 2>"$T/man.err" || bad "$page: man -l failed"
        [ -s "$T/man.err" ] && bad "$page: man -l warns: $(cat "$T/man.err")"
        grep -q "^NAME" "$T/$page.txt" || bad "$page: man -l shows no NAME section"
    fi
done
[ "$n" = 5 ] || bad "expected 5 man pages in $M, found $n"

# opts FILE: the --options a text names, one per line, sorted, without --help
opts() { grep -o -- '--[a-z][a-z-]*' "$1" | grep -v '^--help$' | sort -u; }
# help_opts FILE: the options a --help output lists (lines "  --name ...")
help_opts() { sed -n 's/^  \(--[a-z][a-z-]*\).*/\1/p' "$1" | grep -v '^--help$' | sort -u; }
# scd_section FILE HEADING: the lines of FILE from the heading to the next heading
scd_section() { awk -v h="$2" '$0 == h { on = 1; next } on && /^#/ { exit } on' "$1"; }

# ---- czk(1) against czk COMMAND --help
"$CZK" --help >"$T/help" 2>&1 || bad "czk --help failed"
cmds=$(sed -n '/^commands/,$p' "$T/help" | sed -n 's/^  \([a-z-]*\) .*/\1/p')
sections=$(sed -n 's/^## czk \([a-z-]*\)$/\1/p' "$M/czk.1.scd")
[ "$(echo "$cmds" | sort)" = "$(echo "$sections" | sort)" ] ||
    bad "czk(1) sections ($(echo $sections)) are not the commands of czk --help ($(echo $cmds))"
for c in $cmds; do
    scd_section "$M/czk.1.scd" "## czk $c" >"$T/man.$c"
    "$CZK" "$c" --help >"$T/help.$c" 2>&1 || bad "czk $c --help failed"
    sed -n '/^  -h, --help/,$p' "$T/help.$c" | sed '1d' >"$T/helpopts.$c" # the command's own options
    if [ "$(opts "$T/man.$c")" != "$(help_opts "$T/helpopts.$c")" ]; then
        bad "czk $c: czk(1) names options ($(opts "$T/man.$c" | tr '\n' ' ')) but --help lists ($(help_opts "$T/helpopts.$c" | tr '\n' ' '))"
    fi
done
scd_section "$M/czk.1.scd" "# GLOBAL OPTIONS" >"$T/man.global"
sed -n '/^global options/,/^$/p' "$T/help" >"$T/help.global"
[ "$(opts "$T/man.global")" = "$(opts "$T/help.global")" ] ||
    bad "czk(1) GLOBAL OPTIONS ($(opts "$T/man.global" | tr '\n' ' ')) differ from czk --help ($(opts "$T/help.global" | tr '\n' ' '))"

# ---- the daemons' pages against their --help
if [ $# -ge 3 ]; then
    for d in "$@"; do
        name=$(basename "$d")
        if [ ! -x "$d" ]; then echo "note: $d not built: its page not compared"; continue; fi
        "$d" --help >"$T/dhelp" 2>&1 || bad "$name --help failed"
        scd_section "$M/$name.8.scd" "# OPTIONS" >"$T/dman"
        [ "$(opts "$T/dman")" = "$(opts "$T/dhelp")" ] ||
            bad "$name(8) names options ($(opts "$T/dman" | tr '\n' ' ')) but --help lists ($(opts "$T/dhelp" | tr '\n' ' '))"
    done
else
    echo "note: no daemon binaries given: their pages' options not compared"
fi

# ---- czk.conf(5) against the keys config.c accepts ("section key" lines)
C=$SRC/common/runtime/config.c
{
    sed -n 's/.*\(STR\|INT\)("\([a-z]*\)", "\([a-z_]*\)".*/\2 \3/p' "$C"
    sed -n 's/.*strcmp(section, "\([a-z]*\)") && !strcmp(key, "\([a-z_]*\)").*/\1 \2/p' "$C"
    sed -n 's/.*strncmp(section, "circuit\.", 8) && !strcmp(key, "\([a-z_]*\)").*/circuit.NAME \1/p' "$C"
} | sort -u >"$T/keys.c"
[ "$(wc -l <"$T/keys.c")" -ge 20 ] || bad "could not read the keys of $C: $(cat "$T/keys.c")"
awk '/^# SECTION \[/ { s = $3; gsub(/[][]/, "", s); next } /^# / { s = "" }
     s != "" && /^\*[a-z_]+\*/ { line = $0; while (match(line, /\*[a-z_]+\*/)) {
         print s, substr(line, RSTART + 1, RLENGTH - 2); line = substr(line, RSTART + RLENGTH) } }' \
    "$M/czk.conf.5.scd" | sort -u >"$T/keys.man"
comm -23 "$T/keys.c" "$T/keys.man" >"$T/missing"
comm -13 "$T/keys.c" "$T/keys.man" >"$T/extra"
[ -s "$T/missing" ] && bad "czk.conf(5) does not describe: $(tr '\n' ',' <"$T/missing")"
[ -s "$T/extra" ] && bad "czk.conf(5) describes keys config.c does not accept: $(tr '\n' ',' <"$T/extra")"

[ "$fail" = 0 ] && echo "cli man: ok ($n pages)"
exit "$fail"
