# shellcheck shell=bash
# two-builds.sh - what exactness.sh and screen.sh share: their arguments
# GEN OLD NEW [WORKDIR], and a work directory that is WORKDIR (kept) or a
# temporary one removed at exit; and how they compare two reports. Sourced;
# `two_builds_args NAME "$@"` sets gen, old, new and work, or exits 2 with a
# usage line.
two_builds_args() {
	local name=$1
	shift
	if [ $# -lt 3 ]; then
		echo "usage: $name.sh GEN OLD NEW [WORKDIR]" >&2
		exit 2
	fi
	# shellcheck disable=SC2034 # read by the script that sources this
	gen=$(realpath "$1") old=$(realpath "$2") new=$(realpath "$3")
	if [ $# -ge 4 ]; then
		work=$4
		mkdir -p "$work" || exit 2
	else
		work=$(mktemp -d "${TMPDIR:-/tmp}/msr-$name.XXXXXX") || exit 2
		trap 'rm -rf "$work"' EXIT INT TERM
	fi
}

# A YAML report without its timing fields (nothing if there is none).
untimed() { grep -Ev '^ *(elapsed_seconds|events_per_second):' "$1" 2>/dev/null; }
