#!/bin/sh
# Builds the Debian package of a build tree with cpack (packaging/CMakeLists.txt)
# and checks what it holds and does; then checks `cmake --install --prefix`.
# See tests/packaging/CMakeLists.txt for the list.  Exit 77 without cpack,
# dpkg-deb or dpkg.
# usage: deb.sh SOURCE_DIR BUILD_DIR CPACK CMAKE CONF_CHECK VERSION
set -u
SRC=$1 BUILD=$2 CPACK=$3 CMAKE=$4 CONF_CHECK=$5 VERSION=$6
for tool in "$CPACK" dpkg-deb dpkg readelf; do
    command -v "$tool" >/dev/null 2>&1 || { echo "$tool missing: skipped"; exit 77; }
done
T=$(mktemp -d /tmp/czk-pkg.XXXXXX)
fail=0
bad() { echo "FAIL: $*" >&2; fail=1; }
trap 'if [ "$fail" = 0 ]; then rm -rf "$T"; else echo "(kept $T)" >&2; fi' EXIT
DAEMONS="czk-gpud czk-synth czk-finalizer"

[ -f "$BUILD/CPackConfig.cmake" ] || { bad "no $BUILD/CPackConfig.cmake: is packaging/ in the root CMakeLists.txt?"; exit 1; }

# ---- the package ------------------------------------------------------------
if ! "$CPACK" --config "$BUILD/CPackConfig.cmake" -G DEB -B "$T/out" >"$T/cpack.log" 2>&1; then
    cat "$T/cpack.log" >&2
    bad "cpack failed"
    exit 1
fi
set -- "$T"/out/*.deb
[ $# = 1 ] && [ -f "$1" ] || { bad "cpack made $# packages: $*"; exit 1; }
DEB=$1
R=$T/root
dpkg-deb -I "$DEB" >"$T/info" || bad "dpkg-deb -I failed"
dpkg-deb -c "$DEB" >"$T/contents" || bad "dpkg-deb -c failed"
dpkg-deb -f "$DEB" Package Version Depends >"$T/fields" || bad "dpkg-deb -f failed"
dpkg -x "$DEB" "$R" || bad "dpkg -x failed"
dpkg-deb -e "$DEB" "$T/ctl" || bad "dpkg-deb -e failed"
field() { sed -n "s/^$1: //p" "$T/fields"; }
[ "$(field Package)" = czk ] || bad "Package is \"$(field Package)\", not czk"
[ "$(field Version)" = "$VERSION" ] || bad "Version is \"$(field Version)\", not $VERSION (CZK_VERSION)"
[ "$(basename "$DEB")" = "czk_${VERSION}_$(dpkg --print-architecture).deb" ] || bad "package file named $(basename "$DEB")"
DEPENDS=$(field Depends)

# every file the listing names was extracted, and the other way round
sed -n 's|^-.* \./\(.*\)$|\1|p' "$T/contents" | sort >"$T/listed"
(cd "$R" && find . -type f | sed 's|^\./||' | sort) >"$T/extracted"
cmp -s "$T/listed" "$T/extracted" || bad "dpkg-deb -c and dpkg -x disagree: $(diff "$T/listed" "$T/extracted" | tr '\n' ' ')"
grep -q '^usr/local/' "$T/listed" && bad "files under /usr/local: $(grep '^usr/local/' "$T/listed" | tr '\n' ' ')"

# programs: czk for users, the daemons in sbin (section 8)
[ -x "$R/usr/bin/czk" ] || bad "no /usr/bin/czk"
for d in $DAEMONS; do
    [ -x "$R/usr/sbin/$d" ] || bad "no /usr/sbin/$d"
done

# units: each one of systemd/, Exec*= and --config naming files of the package
for src in "$SRC"/systemd/*.service "$SRC"/systemd/*.target; do
    [ -e "$src" ] || continue
    u=$R/usr/lib/systemd/system/$(basename "$src")
    [ -f "$u" ] || { bad "unit $(basename "$src") is not in the package"; continue; }
    grep -v '^[#;]' "$u" | grep -q '/usr/local' && bad "$(basename "$u") still names /usr/local: $(grep -v '^[#;]' "$u" | grep /usr/local)"
    grep '^Exec[A-Za-z]*=' "$u" | while IFS= read -r line; do
        prog=${line#*=}
        prog=${prog%% *}
        prog=$(printf '%s' "$prog" | sed 's/^[-@:+!]*//')
        case "$prog" in /*) ;; *) echo "$(basename "$u"): $line: not an absolute path" ;; esac
        # ExecReload=/bin/kill -HUP $MAINPID is the one outside program a unit may name
        [ -x "$R$prog" ] || { [ "$prog" = /bin/kill ] && [ "${line%%=*}" = ExecReload ]; } ||
            echo "$(basename "$u"): $line: $prog is not a program of the package"
        conf=$(printf '%s\n' "$line" | sed -n 's/.* --config \([^ ]*\).*/\1/p')
        [ -z "$conf" ] || [ -f "$R$conf" ] || echo "$(basename "$u"): $line: $conf is not a file of the package"
    done >"$T/exec.bad"
    [ -s "$T/exec.bad" ] && bad "$(cat "$T/exec.bad")"
    sed -n 's|^Documentation=.*file://\([^ ]*\).*|\1|p' "$u" | while read -r doc; do
        [ -f "$R$doc" ] || echo "$(basename "$u"): Documentation file://$doc is not in the package"
    done >"$T/doc.bad"
    [ -s "$T/doc.bad" ] && bad "$(cat "$T/doc.bad")"
done
grep -q '^ExecStart=/usr/sbin/czk-gpud ' "$R/usr/lib/systemd/system/czk-gpud.service" ||
    bad "czk-gpud.service does not start /usr/sbin/czk-gpud: $(grep ExecStart "$R/usr/lib/systemd/system/czk-gpud.service")"

# drop-ins and the configuration file
SYSUSERS=$R/usr/lib/sysusers.d/czk.conf
cmp -s "$SYSUSERS" "$SRC/systemd/czk.sysusers" || bad "/usr/lib/sysusers.d/czk.conf is not systemd/czk.sysusers"
for f in "$SRC"/systemd/*.sysctl; do
    [ -e "$f" ] || continue
    # an example only: reserving hugepages at boot is the operator's decision
    cmp -s "$R/usr/share/doc/czk/examples/60-$(basename "$f" .sysctl).conf" "$f" ||
        bad "$(basename "$f") is not /usr/share/doc/czk/examples/60-$(basename "$f" .sysctl).conf"
    [ ! -e "$R/usr/lib/sysctl.d/60-$(basename "$f" .sysctl).conf" ] || bad "the package reserves hugepages by itself"
done
for f in "$SRC"/systemd/*.tmpfiles; do
    [ -e "$f" ] || continue
    cmp -s "$R/usr/lib/tmpfiles.d/$(basename "$f" .tmpfiles).conf" "$f" || bad "$(basename "$f") is not in /usr/lib/tmpfiles.d"
done
cmp -s "$R/etc/czk/czk.conf" "$SRC/packaging/czk.conf.example" || bad "/etc/czk/czk.conf is not packaging/czk.conf.example"
grep -qx /etc/czk/czk.conf "$T/ctl/conffiles" 2>/dev/null || bad "/etc/czk/czk.conf is not listed in conffiles"
while read -r c; do
    [ -f "$R$c" ] || bad "conffile $c is not in the package"
done <"$T/ctl/conffiles"

# man pages (when this build made them: scdoc), completion, documentation
if [ -f "$BUILD/man/czk.1" ]; then
    for p in man1/czk.1 man5/czk.conf.5 man8/czk-gpud.8 man8/czk-synth.8 man8/czk-finalizer.8; do
        [ -s "$R/usr/share/man/$p" ] || bad "no /usr/share/man/$p"
    done
else
    echo "note: $BUILD/man has no pages (scdoc missing at build time): man pages not checked"
fi
[ -s "$R/usr/share/bash-completion/completions/czk" ] || bad "no bash completion"
for f in LICENSE LICENSE-APACHE LICENSE-MIT README.md; do
    cmp -s "$R/usr/share/doc/czk/$f" "$SRC/$f" || bad "/usr/share/doc/czk/$f is not $f"
done
grep -q '^License: Apache-2.0 or MIT' "$R/usr/share/doc/czk/copyright" || bad "copyright does not state Apache-2.0 or MIT"

# Depends: the package of every library the programs link, and nothing of CUDA
for p in "$R/usr/bin/czk" "$R"/usr/sbin/czk-*; do
    readelf -d "$p" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'
done | sort -u >"$T/needed"
[ -s "$T/needed" ] || bad "readelf found no libraries in the programs"
while read -r so; do
    pkg=$(dpkg -S "*/$so" 2>/dev/null | sed -n '1s/:.*//p')
    [ -n "$pkg" ] || { bad "no Debian package holds $so"; continue; }
    printf '%s\n' "$DEPENDS" | tr ',' '\n' | grep -q "^ *$pkg\( \|$\)" || bad "Depends lacks $pkg (for $so): $DEPENDS"
done <"$T/needed"
printf '%s' "$DEPENDS" | grep -qi cuda && bad "Depends names CUDA: $DEPENDS"
printf '%s' "$DEPENDS" | grep -q 'systemd-sysusers | adduser' || bad "Depends lacks systemd-sysusers | adduser: $DEPENDS"
grep -qi 'driver' "$T/info" || bad "the description does not say the GPU needs only the driver"

# ---- the extracted programs run (system libraries, no build-tree paths) --------
out=$("$R/usr/bin/czk" --version 2>&1) || bad "czk --version failed: $out"
case "$out" in "czk $VERSION "*) ;; *) bad "czk --version printed \"$out\"" ;; esac
for d in $DAEMONS; do
    "$R/usr/sbin/$d" --help >/dev/null 2>&1 || bad "$d --help failed"
done

# ---- the packaged configuration file -----------------------------------------
CONF=$R/etc/czk/czk.conf
# every key config.c accepts ("section key"; the same reading as tests/cli/man.sh)
C=$SRC/common/runtime/config.c
{
    sed -n 's/.*\(STR\|INT\)("\([a-z]*\)", "\([a-z_]*\)".*/\2 \3/p' "$C"
    sed -n 's/.*strcmp(section, "\([a-z]*\)") && !strcmp(key, "\([a-z_]*\)").*/\1 \2/p' "$C"
    sed -n 's/.*strncmp(section, "circuit\.", 8) && !strcmp(key, "\([a-z_]*\)").*/circuit.NAME \1/p' "$C"
} | sort -u >"$T/keys.c"
[ "$(wc -l <"$T/keys.c")" -ge 20 ] || bad "could not read the keys of $C: $(cat "$T/keys.c")"
# the keys of the file, set or shown commented ("#key = value" under "[s]" or "#[s]")
awk '/^#?\[[^]]+\]/ { s = $0; sub(/^#?\[/, "", s); sub(/\].*/, "", s); next }
     /^#?[a-z_]+ =/ { k = $0; sub(/^#/, "", k); v = k; sub(/ =.*/, "", k); sub(/^[a-z_]+ = ?/, "", v);
                      print s, k, v }' "$CONF" >"$T/keys.file"
cut -d' ' -f1,2 "$T/keys.file" | sort -u >"$T/keys.conf"
comm -23 "$T/keys.c" "$T/keys.conf" >"$T/missing"
comm -13 "$T/keys.c" "$T/keys.conf" >"$T/extra"
[ -s "$T/missing" ] && bad "czk.conf.example lacks keys config.c accepts: $(tr '\n' ',' <"$T/missing")"
[ -s "$T/extra" ] && bad "czk.conf.example names keys config.c does not accept: $(tr '\n' ',' <"$T/extra")"
# the keys it sets are the layout of the units: RuntimeDirectory=czk and
# StateDirectory=czk, a client_group that czk-gpud is a member of (it gives
# czk.sock that group) and that the sysusers file creates
UNITS=$R/usr/lib/systemd/system
value() { sed -n "s/^$1 = //p" "$CONF"; }
rt=$(sed -n 's/^RuntimeDirectory=//p' "$UNITS/czk-gpud.service")
[ -n "$rt" ] && [ "$(value runtime_dir)" = "/run/$rt" ] ||
    bad "runtime_dir = $(value runtime_dir), czk-gpud.service has RuntimeDirectory=$rt"
for u in "$UNITS"/czk-*.service; do
    st=$(sed -n 's/^StateDirectory=//p' "$u")
    [ -n "$st" ] && [ "$(value state_dir)" = "/var/lib/$st" ] ||
        bad "state_dir = $(value state_dir), $(basename "$u") has StateDirectory=$st"
done
case "$(value output_dir)" in "$(value state_dir)"/*) ;; *) bad "output_dir $(value output_dir) is not under state_dir" ;; esac
grp=$(value client_group)
[ -n "$grp" ] || bad "the packaged file sets no client_group"
grep "^SupplementaryGroups=" "$UNITS/czk-gpud.service" | grep -qw -- "$grp" ||
    bad "czk-gpud.service is not in client_group $grp: $(grep '^SupplementaryGroups=' "$UNITS/czk-gpud.service")"
grep -q "^g[[:space:]]\+$grp[[:space:]]" "$SYSUSERS" || bad "the sysusers file creates no group $grp"
# the file parses, and each value it shows is what the daemons use without it
set --
while read -r s k v; do
    set -- "$@" "$s.$k=$v"
done <"$T/keys.file"
"$CONF_CHECK" "$CONF" "$@" || bad "conf_check: the packaged configuration is not the parser's defaults (above)"
# the packaged daemons: the file as shipped parses and they stop at "no circuits"
# (exit 2: a configuration error, which the units do not restart); uncommented, every key parses and they keep running with the
# circuit of the missing zkey failed (the log says why); an unknown key is
# refused as a bad configuration (exit 2)
# (client_group is this user's own group: the package's czk-clients exists only
# where the package or another test created it)
sed 's/^#\([a-z_[]\)/\1/' "$CONF" | sed -e "s|^zkey = .*|zkey = $T/missing.zkey|" \
    -e "s|^client_group = .*|client_group = $(id -gn)|" >"$T/full.conf"
{ cat "$CONF"; printf '[gpud]\nno_such_key = 1\n'; } >"$T/unknown.conf"
run() { # run DAEMON CONF: the exit status, stderr in $T/log
    timeout "${T_LIMIT:-20}" "$R/usr/sbin/$1" --config "$2" --runtime-dir "$T/run" --state-dir "$T/state" \
        --output-dir "$T/proofs" </dev/null >/dev/null 2>"$T/log"
}
for d in $DAEMONS; do
    run "$d" "$CONF"
    rc=$?
    [ "$rc" = 2 ] && grep -q 'no circuits configured' "$T/log" ||
        bad "$d with the packaged file: exit $rc, not 2 with \"no circuits configured\": $(cat "$T/log")"
done
for d in $DAEMONS; do
    # every daemon serves with that circuit failed (logged, and in gpud's STATUS) instead of exiting
    T_LIMIT=5 run "$d" "$T/full.conf"
    rc=$?
    [ "$rc" = 124 ] && grep -q "cannot be read: .*missing.zkey" "$T/log" ||
        bad "$d with every key uncommented: exit $rc, not running with the circuit failed at the missing zkey: $(cat "$T/log")"
    run "$d" "$T/unknown.conf"
    rc=$?
    [ "$rc" = 2 ] && grep -q 'no_such_key' "$T/log" ||
        bad "$d with an unknown key: exit $rc, not 2 naming no_such_key: $(cat "$T/log")"
done
# a group that does not exist is a configuration error too (exit 2, not restarted)
for k in client_group admin_group; do
    sed "s|^$k =.*|$k = czk-no-such-group|" "$T/full.conf" >"$T/group.conf"
    grep -q "^$k = czk-no-such-group" "$T/group.conf" || bad "the packaged file has no $k line to change"
    run czk-gpud "$T/group.conf"
    rc=$?
    [ "$rc" = 2 ] && grep -q "$k \"czk-no-such-group\" does not exist" "$T/log" ||
        bad "czk-gpud with a missing $k: exit $rc, not 2 naming the group: $(cat "$T/log")"
done

# ---- maintainer scripts, against stub commands that record their arguments -----
for s in postinst prerm postrm; do
    [ -x "$T/ctl/$s" ] || bad "no executable $s"
    sh -n "$T/ctl/$s" || bad "$s: syntax error"
done
mkdir -p "$T/stub1" "$T/stub2"
for c in systemd-sysusers systemctl; do
    printf '#!/bin/sh\necho "%s $*" >>"%s"\n' "$c" "$T/calls1" >"$T/stub1/$c"
    chmod +x "$T/stub1/$c"
done
for c in adduser addgroup systemctl; do
    printf '#!/bin/sh\necho "%s $*" >>"%s"\n' "$c" "$T/calls2" >"$T/stub2/$c"
    chmod +x "$T/stub2/$c"
done
PATH=$T/stub1 /bin/sh "$T/ctl/postinst" configure || bad "postinst configure failed (systemd-sysusers)"
sed -n 's/^systemd-sysusers //p' "$T/calls1" 2>/dev/null >"$T/sysusers.args"
[ "$(cat "$T/sysusers.args")" = /usr/lib/sysusers.d/czk.conf ] ||
    bad "postinst ran systemd-sysusers with \"$(cat "$T/sysusers.args")\", not /usr/lib/sysusers.d/czk.conf"
grep -q 'systemctl .*\(enable\|start\)' "$T/calls1" && bad "postinst enables or starts units: $(cat "$T/calls1")"
PATH=$T/stub2 /bin/sh "$T/ctl/postinst" configure || bad "postinst configure failed (adduser)"
grep -v '^#' "$SRC/systemd/czk.sysusers" | while read -r type name rest; do
    case "$type" in
    g) grep -q "^addgroup --system .* $name\$" "$T/calls2" || echo "group $name" ;;
    u) grep -q "^adduser --system .* $name\$" "$T/calls2" || echo "user $name" ;;
    esac
done >"$T/notmade"
[ -s "$T/notmade" ] && bad "postinst without systemd-sysusers does not create: $(tr '\n' ',' <"$T/notmade") ($(cat "$T/calls2"))"
grep -q '^adduser .*--ingroup czk .*--home /var/lib/czk .* czk$' "$T/calls2" ||
    bad "adduser fallback does not make czk in group czk with home /var/lib/czk: $(cat "$T/calls2")"
# the sysusers file itself, applied to a scratch root
if command -v systemd-sysusers >/dev/null 2>&1; then
    mkdir -p "$T/sysroot/etc"
    if systemd-sysusers --root="$T/sysroot" "$SYSUSERS" >"$T/sysusers.log" 2>&1; then
        grep -q '^czk:' "$T/sysroot/etc/passwd" || bad "systemd-sysusers made no user czk"
        grep -q '^czk-clients:' "$T/sysroot/etc/group" || bad "systemd-sysusers made no group czk-clients"
    else
        bad "systemd-sysusers --root refused the sysusers file: $(cat "$T/sysusers.log")"
    fi
fi

# ---- cmake --install --prefix --------------------------------------------------
P=$T/prefix
"$CMAKE" --install "$BUILD" --prefix "$P" >"$T/install.log" 2>&1 || { cat "$T/install.log" >&2; bad "cmake --install failed"; }
echo "cmake --install --prefix: $(find "$P" -type f | wc -l) files:"
(cd "$P" && find . -type f | sort | sed 's|^\./|  |')
for f in bin/czk sbin/czk-gpud sbin/czk-synth sbin/czk-finalizer etc/czk/czk.conf lib/sysusers.d/czk.conf \
         lib/systemd/system/czk-gpud.service share/doc/czk/LICENSE share/bash-completion/completions/czk; do
    [ -f "$P/$f" ] || bad "cmake --install put no $f"
done
grep -q "^ExecStart=$P/sbin/czk-gpud --config $P/etc/czk/czk.conf" "$P/lib/systemd/system/czk-gpud.service" ||
    bad "installed czk-gpud.service: $(grep ExecStart "$P/lib/systemd/system/czk-gpud.service")"
# an operator's configuration file survives a second install
echo "# edited $$" >>"$P/etc/czk/czk.conf"
cp "$P/etc/czk/czk.conf" "$T/edited"
"$CMAKE" --install "$BUILD" --prefix "$P" >"$T/install2.log" 2>&1 || bad "second cmake --install failed"
cmp -s "$P/etc/czk/czk.conf" "$T/edited" || bad "a second cmake --install replaced an edited czk.conf"
cmp -s "$P/etc/czk/czk.conf.example" "$SRC/packaging/czk.conf.example" || bad "no czk.conf.example next to a kept czk.conf"

[ "$fail" = 0 ] && echo "packaging: ok ($(basename "$DEB"), $(wc -l <"$T/listed") files)"
exit "$fail"
