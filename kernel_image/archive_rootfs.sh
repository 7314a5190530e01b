#!/bin/sh
# Make a debootstrap rootfs safe, then archive it (kernel_image/build.sh's base step).
#   sh kernel_image/archive_rootfs.sh ROOTFS OUT_TAR        unmount, then tar ROOTFS into OUT_TAR
#   sh kernel_image/archive_rootfs.sh --unmount-only ROOTFS  unmount only (before `rm -rf ROOTFS`)
# Why: debootstrap mounts proc and sys (sometimes dev/pts) inside its target while packages
# are configured, and does not always unmount them (interrupted, a postinst's process still
# running). tar then reads the host's /proc (`Cannot open ./proc/N/pagemap`), and `rm -rf`
# descends into the host's live /proc, /sys or /dev. So every mount point at or below ROOTFS
# is unmounted first, deepest first (`umount`, `umount -l` as a last resort), and tar stays on
# ROOTFS's own file system (--one-file-system) should anything be mounted after that.
# A ROOTFS that does not exist has nothing mounted in it: --unmount-only succeeds.
set -eu

usage() { echo "usage: archive_rootfs.sh ROOTFS OUT_TAR | --unmount-only ROOTFS" >&2; exit 2; }

# The mount points at or below $1 (an absolute, symlink-free path), deepest first, as
# /proc/self/mountinfo spells them (field 5, with \ooo octal escapes for space, tab, newline
# and backslash): escaped, so that one line is one mount point whatever the path holds.
mounts_under() {
    ROOT=$1 awk '
        function esc(s,   out, i, c) {
            out = ""
            for (i = 1; i <= length(s); i++) {
                c = substr(s, i, 1)
                if (c == " ") c = "\\040"; else if (c == "\t") c = "\\011"
                else if (c == "\n") c = "\\012"; else if (c == "\\") c = "\\134"
                out = out c
            }
            return out
        }
        BEGIN { root = esc(ENVIRON["ROOT"]) }
        $5 == root || index($5, root "/") == 1 { p = $5; print gsub("/", "/", p) "\t" $5 }
    ' /proc/self/mountinfo | sort -rn -k1,1 | cut -f2-
}

# \ooo -> the byte (printf %b takes \0ooo); the trailing "x" keeps a trailing newline.
unescape() {
    p=$(printf '%bx' "$(printf '%s' "$1" | sed 's/\\\([0-7][0-7][0-7]\)/\\0\1/g')")
    printf '%s' "${p%x}"
}

unmount_all() {
    [ -e "$1" ] || return 0
    root=$(cd "$1" && pwd -P)
    [ "$root" != / ] || { echo "archive_rootfs.sh: refusing to unmount everything under /" >&2; exit 1; }
    # Stacked mounts share a mount point, and a lazy unmount may leave one showing for a
    # moment: read mountinfo again until nothing is left, a bounded number of times.
    for _pass in 1 2 3 4 5; do
        escaped=$(mounts_under "$root")
        [ -n "$escaped" ] || return 0
        # One mount point a line: split on newlines only, and no globbing of `*` in a path.
        old_ifs=$IFS; IFS='
'
        set -f
        for e in $escaped; do
            IFS=$old_ifs
            m=$(unescape "$e")
            umount "$m" 2>/dev/null || umount -l "$m" \
                || { echo "archive_rootfs.sh: cannot unmount $m" >&2; exit 1; }
        done
        set +f
        IFS=$old_ifs
    done
    [ -z "$(mounts_under "$root")" ] \
        || { echo "archive_rootfs.sh: still mounted under $root:" >&2; mounts_under "$root" >&2; exit 1; }
}

case "${1:-}" in
    --unmount-only) [ $# = 2 ] || usage; unmount_all "$2" ;;
    -*|"") usage ;;
    *)
        [ $# = 2 ] || usage
        [ -d "$1" ] || { echo "archive_rootfs.sh: no rootfs at $1" >&2; exit 1; }
        unmount_all "$1"
        tar --one-file-system -C "$1" -cf "$2.part" . \
            || { rm -f "$2.part"; echo "archive_rootfs.sh: tar of $1 failed" >&2; exit 1; }
        mv "$2.part" "$2"
        ;;
esac
