# loop-device.sh, sourced by the capture benchmarks: a work directory named after the script
# ($1) under /var/tmp with a 1 GiB loop device over a file in it ($WORK, $DEV), both removed
# when the script exits.
WORK=$(mktemp -d "/var/tmp/$1.XXXXXX")
DEV=""
cleanup() {
  [ -n "$DEV" ] && losetup -d "$DEV" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
truncate -s 1G "$WORK/disk.img"
DEV=$(losetup -f --show "$WORK/disk.img")
