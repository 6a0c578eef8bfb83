#!/usr/bin/env bash
# install.sh: installs the tablectl bundle it sits in, with no network (issue 33; the guide is
# install.md beside it, hardware/install.md in the source).
#
#   sudo ./install.sh                 install this bundle's release, or upgrade to it
#   sudo ./install.sh --rollback      go back one release (/opt/tablectl/current/bundle/install.sh too)
#
# Options: --health-timeout S (how long a restarted table has to come up healthy, 90 s: its API
#                              answers and its software authentication passed; latched faults of the
#                              devices, a shoe unplugged, do not count against a release),
#          --keep N           (releases kept in /opt/tablectl/releases, 3; never fewer than 2),
#          --migrate-journal  (go ahead with a release whose journal schema differs, see below),
#          --no-start         (install and switch, but start nothing: a chroot or an image build),
#          --python PATH      (the system Python, /usr/bin/python3),
#          --root DIR         (install under DIR instead of /: a staging tree, the tests' scratch root).
#
# What it does, each step printed: checks the bundle's SHA256SUMS, the machine (architecture,
# Python 3.11 or 3.13, systemd, disk space); the `tablectl` user in gpio, dialout and video;
# /opt/tablectl/releases/<version>, a venv made with --system-site-packages and filled by
# `pip install --no-index --find-links wheels/` (the bundle's wheels only, whatever the system has);
# the unit and the udev rules; /etc/tablectl and /var/lib/tablectl made if missing, left as they
# are if present. An upgrade is refused while a round is open, says so before it switches to a
# release that converts the journal, switches the /opt/tablectl/current link, restarts the table
# and waits for /api/health; a release that is not healthy in time is switched back by itself.
# After a new release is current, releases past the last --keep installed are removed (never the
# current or the previous one); --rollback removes none.
# The journal (/var/lib/tablectl) is never read, moved or written by this script. Running it again
# with the same bundle changes nothing, unless the system's Python changed since (Bookworm to
# Trixie): then the release is made again for it (the table stopped). Exit 0 done, 1 failed
# (rolled back if it was an upgrade), 2 refused before anything changed.
set -euo pipefail
export LC_ALL=C
# A root shell's Python settings must not reach the venv, pip or the checks.
unset PYTHONPATH PYTHONHOME PYTHONSTARTUP PYTHONUSERBASE PYTHONNOUSERSITE

HERE=$(cd "$(dirname "$0")" && pwd)
cd /  # no Python below may import from the directory it was started in
ROOT=""
HEALTH_TIMEOUT=90
KEEP=3
ROLLBACK=0
NO_START=0
MIGRATE=0
PY=/usr/bin/python3
ARGS="$*"

step_no=0
step() { step_no=$((step_no + 1)); echo "install: [$step_no] $*"; }
info() { echo "install:     $*"; }
refuse() { echo "install: REFUSED: $*" >&2; exit 2; }
fail() { echo "install: FAILED: $*" >&2; exit 1; }

while [ $# -gt 0 ]; do
    case "$1" in
        --rollback) ROLLBACK=1 ;;
        --no-start) NO_START=1 ;;
        --migrate-journal) MIGRATE=1 ;;
        --health-timeout) HEALTH_TIMEOUT=${2:?--health-timeout needs seconds}; shift ;;
        --keep) KEEP=${2:?--keep needs a number of releases}; shift ;;
        --python) PY=${2:?--python needs a path}; shift ;;
        --root) ROOT=${2:?--root needs a directory}; shift ;;
        -h|--help) sed -n '2,30p' "$HERE/$(basename "$0")" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) refuse "unknown option $1 (see $0 --help)" ;;
    esac
    shift
done
case "$HEALTH_TIMEOUT" in ''|*[!0-9]*) refuse "--health-timeout $HEALTH_TIMEOUT: a whole number of seconds" ;; esac
case "$KEEP" in ''|*[!0-9]*|0|1) refuse "--keep $KEEP: a whole number of releases, at least 2 (the current and the previous one)" ;; esac

R=${ROOT%/}
OPT="$R/opt/tablectl"
UNIT="$R/etc/systemd/system/tablectl.service"
RULES="$R/etc/udev/rules.d/99-tablectl.rules"

[ "$(id -u)" = 0 ] || refuse "run it as root: sudo $0 $ARGS"

# key=value from a BUNDLE file
bundle_get() { sed -n "s/^$2=//p" "$1" | head -n 1; }
release_of() { [ -L "$OPT/$1" ] && basename "$(readlink "$OPT/$1")" || true; }
service_active() { systemctl is-active --quiet tablectl; }

# Points link $1 (current or previous) at releases/$2, atomically (a new link renamed over the old).
point() {
    ln -sfn "releases/$2" "$OPT/.$1.new"
    mv -T "$OPT/.$1.new" "$OPT/$1"
}

# The unit of release $1 in place (daemon-reload when it changed); the udev rules only where there
# are none yet: the installed ones carry this table's adapter IDs.
install_unit_files() {
    local from="$OPT/releases/$1/bundle/systemd"
    if cmp -s "$from/tablectl.service" "$UNIT"; then
        info "$UNIT: unchanged"
    else
        install -D -m 0644 "$from/tablectl.service" "$UNIT"
        info "$UNIT: installed from release $1"
        if [ -d "$R/run/systemd/system" ]; then
            systemctl daemon-reload
        else
            info "systemd is not running here: it reads the unit when it starts"
        fi
    fi
    if [ ! -e "$RULES" ]; then
        install -D -m 0644 "$from/99-tablectl.rules" "$RULES"
        info "$RULES: installed; fill in the adapters' IDs (install.md, step 6)"
    elif cmp -s "$from/99-tablectl.rules" "$RULES"; then
        info "$RULES: unchanged"
    else
        info "$RULES: kept as it is (this table's IDs); the release's own is $from/99-tablectl.rules"
    fi
}

# Refuses (exit 2) when the table is dealing a round, or when that cannot be told.
between_rounds() {
    if ! service_active; then
        info "the table is stopped: no round is being dealt"
        return
    fi
    local answer rc=0
    answer=$("$PY" "$HERE/probe.py" round --root "$R/") || rc=$?
    case $rc in
        0) info "$answer" ;;
        3) refuse "$answer: upgrade between rounds only; run this again once it is settled or voided" ;;
        *) refuse "$answer; stop the table between rounds (systemctl stop tablectl) and run this again" ;;
    esac
}

# Refuses a switch from release $1 to $2 when their journal schemas differ, unless --migrate-journal.
journal_schema_check() {
    local from to
    from=$(bundle_get "$OPT/releases/$1/bundle/BUNDLE" journal_schema)
    to=$(bundle_get "$OPT/releases/$2/bundle/BUNDLE" journal_schema)
    if [ -z "$from" ]; then
        info "release $1 does not say which journal schema it writes: tablectl $2 writes schema $to"
    elif [ "$from" = "$to" ]; then
        info "journal schema $to: the same as release $1's; the journal is used as it is"
    elif [ "$MIGRATE" = 1 ]; then
        info "journal schema $from -> $to: tablectl $2 converts the journal when it starts (--migrate-journal)"
    elif [ "$from" -lt "$to" ]; then
        refuse "tablectl $2 converts the journal from schema $from to $to when it starts, and $1 cannot read it after that (a roll back would not start): back up the journal (install.md, Back up the journal), then run this again with --migrate-journal"
    else
        refuse "tablectl $2 reads journal schema $to and the journal is at $from since $1 converted it: $2 would refuse it; stay on $1 (or run again with --migrate-journal if $2 can convert it)"
    fi
}

# Removes the releases past the last $KEEP installed (by when each was installed: its .bundle-digest
# is written last), never the current or the previous one; unfinished ones are left to the next
# install of their version.
prune_releases() {
    local now before kept=0 rel
    now=$(release_of current)
    before=$(release_of previous)
    if [ -n "$now" ]; then kept=$((kept + 1)); fi
    if [ -n "$before" ] && [ "$before" != "$now" ]; then kept=$((kept + 1)); fi
    local old=()
    while read -r rel; do
        if [ "$rel" = "$now" ] || [ "$rel" = "$before" ]; then
            continue
        elif [ "$kept" -lt "$KEEP" ]; then
            kept=$((kept + 1))
        else
            old+=("$rel")
        fi
    done < <(find "$OPT/releases" -mindepth 2 -maxdepth 2 -name .bundle-digest -printf '%T@ %h\n' \
             | sort -rn | sed 's|.*/||')
    if [ ${#old[@]} -eq 0 ]; then
        info "releases kept: $(ls "$OPT/releases" | tr '\n' ' ')(at most $KEEP: --keep)"
        return
    fi
    for rel in "${old[@]}"; do
        rm -rf "${OPT:?}/releases/$rel"
        info "removed release $rel: an old one past the last $KEEP (--keep; never current or previous)"
    done
}

# Makes release $1 current ($2 the one it replaces), restarts a running table and waits for it; on
# failure switches back to $2 and restarts that. Exit 1 when the switch did not hold.
switch_and_check() {
    local new=$1 old=$2 was_active=0 prior
    prior=$(release_of previous)
    if [ "$NO_START" = 0 ] && service_active; then was_active=1; fi
    point current "$new"
    [ -n "$old" ] && point previous "$old"
    info "$OPT/current -> releases/$new${old:+ (previous: releases/$old)}"
    install_unit_files "$new"
    if [ "$was_active" = 0 ]; then
        if [ "$NO_START" = 1 ]; then
            info "not started (--no-start)"
        elif [ -n "$old" ]; then
            info "the table was stopped: start it with systemctl start tablectl"
        else
            info "first install: write /etc/tablectl/table.toml and the tokens (install.md, steps 5-7),"
            info "then: systemctl enable --now tablectl"
        fi
        return 0
    fi
    step "restarting tablectl $new and waiting up to $HEALTH_TIMEOUT s for /api/health"
    local answer="" rc=0
    if systemctl restart tablectl; then
        answer=$("$PY" "$HERE/probe.py" health --root "$R/" --version "$new" --timeout "$HEALTH_TIMEOUT") || rc=$?
    else
        rc=1 answer="systemctl restart tablectl failed (journalctl -u tablectl says why)"
    fi
    if [ "$rc" = 0 ]; then
        info "$answer"
        return 0
    fi
    info "tablectl $new is not healthy: $answer"
    [ -n "$old" ] || fail "tablectl $new is not healthy and there is no release to go back to: journalctl -u tablectl says why"
    step "rolling back to tablectl $old"
    point current "$old"
    if [ -n "$prior" ]; then point previous "$prior"; else rm -f "$OPT/previous"; fi
    install_unit_files "$old"
    rc=0
    if systemctl restart tablectl; then
        answer=$("$PY" "$HERE/probe.py" health --root "$R/" --version "$old" --timeout "$HEALTH_TIMEOUT") || rc=$?
    else
        rc=1 answer="systemctl restart tablectl failed"
    fi
    [ "$rc" = 0 ] || fail "rolled back to tablectl $old, which is not healthy either: $answer (journalctl -u tablectl)"
    info "$answer"
    fail "tablectl $new did not become healthy within $HEALTH_TIMEOUT s: rolled back, tablectl $old is serving again (releases/$new is kept for a look, not for --rollback; journalctl -u tablectl says why)"
}

if [ "$ROLLBACK" = 1 ]; then
    step "going back one release"
    now=$(release_of current)
    before=$(release_of previous)
    [ -n "$now" ] || refuse "no $OPT/current: nothing is installed from a bundle here"
    [ -n "$before" ] && [ -f "$OPT/releases/$before/.bundle-digest" ] \
        || refuse "no release to go back to (no $OPT/previous): only tablectl $now is installed"
    info "tablectl $now -> tablectl $before"
    journal_schema_check "$now" "$before"
    between_rounds
    switch_and_check "$before" "$now"
    echo "install: done: tablectl $before is current (install.sh --rollback again goes forward to $now)"
    exit 0
fi

VERSION=$(bundle_get "$HERE/BUNDLE" version)
PLATFORM=$(bundle_get "$HERE/BUNDLE" platform)
ARCH=$(bundle_get "$HERE/BUNDLE" arch)
PYTHONS=$(bundle_get "$HERE/BUNDLE" pythons)
[ -n "$VERSION" ] && [ -n "$ARCH" ] || refuse "$HERE/BUNDLE is missing or damaged: copy the bundle again"
echo "install: tablectl $VERSION ($PLATFORM) from $HERE${R:+ into $R}"

step "checking the bundle and this machine"
sums=$(cd "$HERE" && sha256sum --strict --quiet -c SHA256SUMS 2>&1) \
    || refuse "the bundle is damaged or was changed: $(echo "$sums" | head -n 1): copy it again (and compare its .tar.gz with the one released)"
info "every file matches SHA256SUMS"
MACHINE=$(uname -m)
[ "$MACHINE" = "$ARCH" ] \
    || refuse "this bundle is for $ARCH and this machine is $MACHINE: use tablectl-$VERSION-linux-$MACHINE.tar.gz (a Pi needs 64-bit Raspberry Pi OS: aarch64)"
[ -x "$PY" ] || refuse "no $PY: install Python (apt install python3) or name it with --python"
PYV=$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
case " $PYTHONS " in
    *" $PYV "*) info "$MACHINE, Python $PYV ($PY)" ;;
    *) refuse "$PY is Python $PYV and this bundle has wheels for Python ${PYTHONS// / and } (Raspberry Pi OS Bookworm has 3.11, Trixie 3.13): install on one of those, or name such a Python with --python" ;;
esac
SPEC="tablectl[pi]==$VERSION"
if [ "$ARCH" = aarch64 ] && [[ " $(bundle_get "$HERE/BUNDLE" lgpio_pythons) " != *" $PYV "* ]]; then
    "$PY" -c 'import lgpio' 2>/dev/null \
        || refuse "this bundle has no lgpio wheel for Python $PYV (PyPI has none): install Raspberry Pi OS's python3-lgpio (apt install python3-lgpio) and run this again"
    SPEC="tablectl==$VERSION"
    info "lgpio: the system's python3-lgpio (PyPI has no lgpio wheel for Python $PYV)"
fi
command -v systemctl >/dev/null || refuse "no systemd (systemctl not found): tablectl runs as a systemd service; install on Raspberry Pi OS"
[ -d "$R/run/systemd/system" ] || [ "$NO_START" = 1 ] \
    || refuse "systemd is not running here (no /run/systemd/system: a chroot or container?): install on the booted Pi, or add --no-start"
need_mb=$(( $(du -sk "$HERE/wheels" | cut -f1) * 3 / 1024 + 50 ))
probe_dir="$R/"
for d in "$R/opt" "$OPT"; do [ -d "$d" ] && probe_dir=$d; done
free_mb=$(( $(df -Pk "$probe_dir" | awk 'NR == 2 { print $4 }') / 1024 ))
[ "$free_mb" -ge "$need_mb" ] \
    || refuse "not enough disk space for $OPT: $free_mb MB free on $(df -P "$probe_dir" | awk 'NR == 2 { print $6 }'), $need_mb MB needed: remove releases no longer needed from $OPT/releases/ (never current or previous) or free space"
info "$free_mb MB free, $need_mb MB needed"

step "the tablectl user and its groups"
prefix=()
[ -n "$R" ] && prefix=(--prefix "$R")
for group in gpio dialout video; do
    if grep -q "^$group:" "$R/etc/group"; then
        info "group $group: exists"
    else
        groupadd "${prefix[@]}" --system "$group"
        info "group $group: created"
    fi
done
if grep -q "^tablectl:" "$R/etc/passwd"; then
    info "user tablectl: exists"
else
    useradd "${prefix[@]}" --system --user-group --home-dir /var/lib/tablectl --no-create-home \
        --shell /usr/sbin/nologin tablectl
    info "user tablectl: created (system user, no login)"
fi
missing=()
for group in gpio dialout video; do
    grep -qE "^$group:[^:]*:[^:]*:(.*,)?tablectl(,|$)" "$R/etc/group" || missing+=("$group")
done
if [ ${#missing[@]} -gt 0 ]; then
    usermod "${prefix[@]}" -aG "$(IFS=,; echo "${missing[*]}")" tablectl
    info "user tablectl: added to ${missing[*]}"
else
    info "user tablectl: in gpio, dialout and video"
fi

step "/etc/tablectl and /var/lib/tablectl"
if [ -d "$R/etc/tablectl" ]; then
    info "$R/etc/tablectl: exists, left as it is"
else
    install -d -m 0755 "$R/etc/tablectl"
    info "$R/etc/tablectl: created (table.toml and the tokens go here: install.md, steps 5-7)"
fi
if [ -d "$R/var/lib/tablectl" ]; then
    info "$R/var/lib/tablectl: exists, left as it is (the journal is never touched)"
else
    uid=$(awk -F: '$1 == "tablectl" { print $3 }' "$R/etc/passwd")
    gid=$(awk -F: '$1 == "tablectl" { print $3 }' "$R/etc/group")
    install -d -m 0750 -o "$uid" -g "$gid" "$R/var/lib/tablectl"
    info "$R/var/lib/tablectl: created for the journal"
fi

step "release $VERSION in $OPT/releases/$VERSION"
DEST="$OPT/releases/$VERSION"
DIGEST=$(sha256sum "$HERE/SHA256SUMS" | cut -d' ' -f1)
if [ -f "$DEST/.bundle-digest" ]; then
    [ "$(cat "$DEST/.bundle-digest")" = "$DIGEST" ] \
        || refuse "release $VERSION is installed already from another bundle ($DEST): a changed build needs a new version; if $VERSION is not current, remove $DEST and run this again"
    # A system upgraded since (Bookworm to Trixie: Python 3.11 to 3.13) leaves the venv without its
    # Python: the release is made again, from the same bundle, for the Python there is now.
    MADE_FOR=""
    [ -f "$DEST/pyvenv.cfg" ] && MADE_FOR=$(sed -n 's/^version\(_info\)\{0,1\} *= *\([0-9]*\.[0-9]*\).*/\2/p' "$DEST/pyvenv.cfg" | head -n 1)
    if [ "$MADE_FOR" = "$PYV" ]; then
        info "installed already from this bundle: kept as it is"
    elif [ "$(release_of current)" = "$VERSION" ] && service_active; then
        refuse "release $VERSION is current and was made for Python ${MADE_FOR:-unknown}, and $PY is Python $PYV: stop the table between rounds (systemctl stop tablectl) and run this again to make it for Python $PYV"
    else
        info "release $VERSION was made for Python ${MADE_FOR:-unknown} and $PY is Python $PYV (an upgraded system): made again for $PYV"
        rm -rf "$DEST"
    fi
fi
if [ ! -f "$DEST/.bundle-digest" ]; then
    if [ -e "$DEST" ]; then
        info "removing $DEST, left unfinished by an interrupted install"
        rm -rf "$DEST"
    fi
    install -d -m 0755 "$OPT/releases"
    info "venv: $PY -m venv --system-site-packages $DEST"
    "$PY" -m venv --system-site-packages --without-pip "$DEST"
    PIPWHL=$(ls "$HERE"/wheels/pip-*.whl | head -n 1)
    info "pip install --no-index --find-links wheels/ $SPEC"
    # pip runs from its own wheel with none of the host's pip settings (indexes, find-links,
    # constraints): only the bundle's wheels, each one even where the system has that package.
    if ! env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root PIP_CONFIG_FILE=/dev/null LC_ALL=C.UTF-8 \
        "$DEST/bin/python" "$PIPWHL/pip" install --quiet --no-index --find-links "$HERE/wheels" \
        --no-cache-dir --disable-pip-version-check --ignore-installed --no-compile "$SPEC"; then
        rm -rf "$DEST"
        fail "pip could not install tablectl $VERSION from the bundle's wheels (above); nothing was switched"
    fi
    # pip's compile step, in checked-hash mode: Python checks each .pyc against its source at import,
    # and `tablectl verify` refuses any other kind (hardware/authentication.md). A third-party file
    # that does not compile is left to its source, as pip leaves it.
    "$DEST/bin/python" -m compileall -q -f --invalidation-mode checked-hash "$DEST/lib" >/dev/null || true
    "$DEST/bin/tablectl" --help >/dev/null || { rm -rf "$DEST"; fail "$DEST/bin/tablectl does not run; nothing was switched"; }
    install -d -m 0755 "$DEST/bundle"
    cp -R "$HERE/install.sh" "$HERE/probe.py" "$HERE/systemd" "$HERE/install.md" "$HERE/BUNDLE" \
        "$HERE/SHA256SUMS" "$DEST/bundle/"
    # Issue 31 (installs journaled, `tablectl verify`): record the install of $VERSION here, once
    # that exists; MANIFEST.signed is in the bundle when the build made one.
    [ -f "$HERE/MANIFEST.signed" ] && cp "$HERE/MANIFEST.signed" "$DEST/bundle/"
    echo "$DIGEST" > "$DEST/.bundle-digest"  # last: a release without it is unfinished
    info "installed: $("$DEST/bin/python" -c 'import importlib.metadata as m; print("tablectl", m.version("tablectl"))')"
fi

CURRENT=$(release_of current)
if [ "$CURRENT" = "$VERSION" ]; then
    step "tablectl $VERSION is current already"
    install_unit_files "$VERSION"
    echo "install: done: tablectl $VERSION, nothing else to change"
    exit 0
fi
if [ -n "$CURRENT" ]; then
    step "upgrading tablectl $CURRENT -> $VERSION"
    journal_schema_check "$CURRENT" "$VERSION"
    between_rounds
else
    step "making tablectl $VERSION current"
fi
switch_and_check "$VERSION" "$CURRENT"
step "old releases"
prune_releases
echo "install: done: tablectl $VERSION is current${CURRENT:+ (install.sh --rollback goes back to $CURRENT)}"
