#!/usr/bin/env bash
# Install the Nsight Systems 2023.4 CLI (nsys, QdstrmImporter, `nsys stats`
# reports) from Debian trixie's non-free archive into a private folder,
# without touching the system's apt sources, apt lists or alternatives.
#
# Usage:
#   bash .ci/install_nsys.sh [DEST]
#   PATH="$(bash .ci/install_nsys.sh | tail -1):$PATH"
#
# DEST defaults to ${NSYS_INSTALL_DIR:-$HOME/.cache/nsys-duck/nsight-systems}.
# The last line printed on stdout is the absolute path of the folder holding
# the `nsys` executable (DEST/usr/lib/nsight-systems/bin).
# Idempotent: if DEST already has a working nsys, nothing is downloaded.
# Only shared libraries that nsys needs and that are missing from the system
# are installed with the normal apt-get (Debian packages, e.g. libssh-4).
set -euo pipefail

DEST="${1:-${NSYS_INSTALL_DIR:-$HOME/.cache/nsys-duck/nsight-systems}}"
mkdir -p "$DEST"
DEST="$(cd "$DEST" && pwd -P)"

SUITE=trixie
PKGS=(nsight-systems nsight-systems-target)
# Mirror host: the one the machine's own Debian sources use.
MIRROR="http://deb.debian.org/debian"

NSYS_ROOT="$DEST/usr/lib/nsight-systems"
BIN_DIR="$NSYS_ROOT/bin"
HOST_DIR="$NSYS_ROOT/host-linux-x64"
NSYS="$BIN_DIR/nsys"
WORK="$DEST/.apt"
LOG="$WORK/install.log"

fail() {
    echo "install_nsys.sh: $*" >&2
    if [[ -f "$LOG" ]]; then
        echo "---- last lines of $LOG ----" >&2
        tail -n 40 "$LOG" >&2 || true
    fi
    exit 1
}

SUDO=()
if [[ "$(id -u)" != 0 ]]; then
    if command -v sudo >/dev/null 2>&1; then SUDO=(sudo -n); fi
fi

nsys_works() {
    [[ -x "$NSYS" ]] && "$NSYS" --version >/dev/null 2>&1
}

# Shared libraries of the nsys binaries that the dynamic loader cannot find.
missing_libs() {
    local f
    for f in "$NSYS_ROOT/target-linux-x64/nsys" "$HOST_DIR/QdstrmImporter" \
             "$HOST_DIR/libSshClient.so"; do
        [[ -f "$f" ]] || continue
        LD_LIBRARY_PATH="$HOST_DIR:$NSYS_ROOT/target-linux-x64" ldd "$f" 2>/dev/null | awk '/=> not found/ {print $1}'
    done | sort -u
}

# Debian package that provides a missing soname.
pkg_for_lib() {
    case "$1" in
        libssh.so*) echo libssh-4 ;;
        libsqlite3.so*) echo libsqlite3-0 ;;
        libexpat.so*) echo libexpat1 ;;
        libz.so*) echo zlib1g ;;
        libfontconfig.so*) echo libfontconfig1 ;;
        libfreetype.so*) echo libfreetype6 ;;
        libdbus-1.so*) echo libdbus-1-3 ;;
        libglib-2.0.so*|libgthread-2.0.so*|libgobject-2.0.so*) echo libglib2.0-0 ;;
        libpfm.so*) echo libpfm4 ;;
        libelf.so*) echo libelf1 ;;
        libcurl.so*) echo libcurl4 ;;
        libgssapi_krb5.so*) echo libgssapi-krb5-2 ;;
        libkrb5.so*) echo libkrb5-3 ;;
        libk5crypto.so*) echo libk5crypto3 ;;
        libcom_err.so*) echo libcom-err2 ;;
        libnss3.so*|libnssutil3.so*|libsmime3.so*) echo libnss3 ;;
        libnspr4.so*|libplc4.so*|libplds4.so*) echo libnspr4 ;;
        libX11.so*) echo libx11-6 ;;
        libX11-xcb.so*) echo libx11-xcb1 ;;
        libxcb.so*) echo libxcb1 ;;
        libxkbcommon.so*) echo libxkbcommon0 ;;
        libxkbcommon-x11.so*) echo libxkbcommon-x11-0 ;;
        libGL.so*) echo libgl1 ;;
        libEGL.so*) echo libegl1 ;;
        libOpenGL.so*) echo libopengl0 ;;
        libGLX.so*) echo libglx0 ;;
        *) return 1 ;;
    esac
}

system_apt_install() {
    # Normal apt-get (system sources) for runtime libraries only.
    if [[ ! -f "$WORK/.system-apt-updated" ]]; then
        "${SUDO[@]}" apt-get update >>"$LOG" 2>&1 || fail "apt-get update failed"
        touch "$WORK/.system-apt-updated"
    fi
    DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y \
        --no-install-recommends "$@" >>"$LOG" 2>&1 \
        || fail "apt-get install $* failed"
}

if nsys_works; then
    echo "$BIN_DIR"
    exit 0
fi

mkdir -p "$WORK/lists/partial" "$WORK/cache/archives/partial" "$WORK/debs"
: >"$LOG"
echo "install_nsys.sh: installing Nsight Systems CLI from Debian $SUITE non-free into $DEST" >&2

SIGNED_BY=""
for k in /usr/share/keyrings/debian-archive-keyring.gpg; do
    [[ -f "$k" ]] && SIGNED_BY="[signed-by=$k] "
done
echo "deb ${SIGNED_BY}$MIRROR $SUITE non-free" >"$WORK/sources.list"

APT_OPTS=(
    -o "Dir::Etc::SourceList=$WORK/sources.list"
    -o "Dir::Etc::SourceParts=/dev/null"
    -o "Dir::Etc::PreferencesParts=/dev/null"
    -o "Dir::State::Lists=$WORK/lists"
    -o "Dir::Cache=$WORK/cache"
    -o "Debug::NoLocking=1"
    -o "APT::Get::List-Cleanup=0"
)
# apt drops to the _apt user to download; it cannot write into e.g. /root.
if [[ "$(id -u)" == 0 ]]; then APT_OPTS+=(-o "APT::Sandbox::User=root"); fi

apt-get "${APT_OPTS[@]}" update >>"$LOG" 2>&1 || fail "private apt-get update failed"
(cd "$WORK/debs" && rm -f ./*.deb && apt-get "${APT_OPTS[@]}" download "${PKGS[@]}") \
    >>"$LOG" 2>&1 || fail "apt-get download ${PKGS[*]} failed"

shopt -s nullglob
debs=("$WORK/debs"/*.deb)
[[ ${#debs[@]} -eq ${#PKGS[@]} ]] || fail "expected ${#PKGS[@]} .deb files, got ${#debs[@]}"
for deb in "${debs[@]}"; do
    dpkg -x "$deb" "$DEST" >>"$LOG" 2>&1 || fail "dpkg -x $deb failed"
done
# The downloaded .debs (~190 MB) are not needed any more.
rm -f "$WORK/debs"/*.deb "$WORK/cache/archives"/*.deb "$WORK/cache"/*.bin
[[ -x "$NSYS" ]] || fail "no nsys executable at $NSYS after unpacking"

# QdstrmImporter (and libSshClient.so) need `libssh.so` from their own folder
# (RPATH $ORIGIN). The package ships host-linux-x64/libssh.so.4 as a relative
# link to usr/lib/x86_64-linux-gnu/libssh.so.4, i.e. Debian's libssh-4, which
# is outside DEST: point that path at the system library and add libssh.so.
if ! ldconfig -p 2>/dev/null | grep 'libssh\.so\.4 .*x86-64' >/dev/null; then
    system_apt_install libssh-4
fi
SYS_LIBSSH="$(ldconfig -p 2>/dev/null | awk '!f && /libssh\.so\.4 .*x86-64/ {print $NF; f=1}')"
[[ -n "$SYS_LIBSSH" && -e "$SYS_LIBSSH" ]] || fail "libssh.so.4 not found after installing libssh-4"
mkdir -p "$DEST/usr/lib/x86_64-linux-gnu"
[[ -e "$DEST/usr/lib/x86_64-linux-gnu/libssh.so.4" ]] \
    || ln -sfn "$SYS_LIBSSH" "$DEST/usr/lib/x86_64-linux-gnu/libssh.so.4"
[[ -e "$HOST_DIR/libssh.so.4" ]] || ln -sfn "$SYS_LIBSSH" "$HOST_DIR/libssh.so.4"
ln -sfn libssh.so.4 "$HOST_DIR/libssh.so"

# `nsys stats` runs its report scripts with the system's python3.
if ! command -v python3 >/dev/null 2>&1; then
    system_apt_install python3
fi

# Any other shared library that the loader cannot find.
for _round in 1 2; do
    mapfile -t missing < <(missing_libs)
    # Libraries the binaries expect beside them but that are not shipped:
    # link them to the system copy if one exists.
    still=()
    for lib in "${missing[@]}"; do
        sys="$(ldconfig -p 2>/dev/null | awk -v l="$lib" '!f && $1 == l && /x86-64/ {print $NF; f=1}')"
        if [[ -z "$sys" ]] && [[ "$lib" =~ ^(.*\.so)$ ]]; then
            sys="$(ldconfig -p 2>/dev/null | awk -v l="$lib" '!f && index($1, l".") == 1 && /x86-64/ {print $NF; f=1}')"
        fi
        if [[ -n "$sys" && -e "$sys" ]]; then
            ln -sfn "$sys" "$HOST_DIR/$lib"
        else
            still+=("$lib")
        fi
    done
    [[ ${#still[@]} -eq 0 ]] && break
    pkgs=()
    for lib in "${still[@]}"; do
        p="$(pkg_for_lib "$lib")" || { echo "missing library with unknown package: $lib" >>"$LOG"; continue; }
        pkgs+=("$p")
    done
    [[ ${#pkgs[@]} -gt 0 ]] || break
    mapfile -t pkgs < <(printf '%s\n' "${pkgs[@]}" | sort -u)
    system_apt_install "${pkgs[@]}"
done

nsys_works || { "$NSYS" --version >>"$LOG" 2>&1 || true; fail "nsys --version does not run"; }
echo "install_nsys.sh: $("$NSYS" --version 2>&1 | head -1)" >&2
echo "$BIN_DIR"
