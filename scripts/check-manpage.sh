#!/usr/bin/env bash
# Checks the hand-written man page against the binary: scripts/check-manpage.sh MINI-RUN PAGE
#
# The page (docs/mini-run.8) is prose written by hand; this keeps it from drifting from the
# command line. It fails when
#   - a command of `mini-run --help` has no ".SS NAME" section under COMMANDS, or a section
#     names a command --help does not list;
#   - an option (long or short) of `mini-run --help` is not in GLOBAL OPTIONS, or one of
#     `mini-run CMD --help` is not in CMD's section (-h/--help: once, in GLOBAL OPTIONS);
#   - a section names a --long option that neither the command nor the global options have;
#   - groff warns about the page (`groff -man -ww -z`, when groff is installed).
# CTest runs it as the test "manpage".
set -euo pipefail

if (($# != 2)); then
    echo "usage: $0 MINI-RUN PAGE" >&2
    exit 2
fi
BINARY=$1
PAGE=$2
failures=0
problem() {
    echo "check-manpage: $PAGE: $*" >&2
    failures=$((failures + 1))
}

# The page as plain text: font changes and escapes off, "\-" as "-".
text=$(sed -e 's/\\f[BIRP]//g' -e 's/\\-/-/g' -e 's/\\&//g' -e 's/\\(..//g' "$PAGE")

# The lines of a section: ".SH NAME" (level SH) or ".SS NAME" (level SS), to the next
# heading of the same or a higher level.
section() {
    awk -v level="$1" -v name="$2" '
        /^\.SH / { if (inside) exit; if (level == "SH" && substr($0, 5) == name) { inside = 1; next } }
        /^\.SS / { if (inside && level == "SS") exit; if (level == "SS" && substr($0, 5) == name) { inside = 1; next } }
        inside { print }
    ' <<<"$text"
}

# The options a --help lists: the names before the first blank of each "  -x,--long ..." line.
help_options() {
    # A flag with an optional value shows as "--explain{lines}": the option is --explain.
    "$BINARY" "$@" --help | awk '/^  -/ { print $1 }' | tr ',' '\n' | sed -E 's/\{[^}]*\}$//' |
        sed -n '/^-/p' | sort -u
}

# The --long options a piece of the page names.
page_options() {
    grep -oE '(^|[^A-Za-z0-9-])--[a-z][a-z0-9-]*' | sed -E 's/^[^-]*//' | sort -u
}

has_option() { # TEXT OPTION: the option, as a word of its own
    grep -qE -- "(^|[^A-Za-z0-9-])$2([^A-Za-z0-9-]|$)" <<<"$1"
}

global_help=$("$BINARY" --help)
commands=$(awk '/^Subcommands:/ { inside = 1; next } /^[^ ]/ { inside = 0 } inside && /^  [a-z]/ { print $1 }' \
    <<<"$global_help" | sort -u)
if [[ -z "$commands" ]]; then
    problem "no commands in \`$BINARY --help\` (its format changed?)"
fi
global_options=$(help_options)

global_section=$(section SH "GLOBAL OPTIONS")
for option in $global_options; do
    has_option "$global_section" "$option" || problem "GLOBAL OPTIONS: no $option (mini-run --help has it)"
done
for option in $(page_options <<<"$global_section"); do
    grep -qxF -- "$option" <<<"$global_options" ||
        problem "GLOBAL OPTIONS: $option, which mini-run --help does not list"
done

# The command sections the page has.
page_commands=$(awk '/^\.SH / { inside = ($0 == ".SH COMMANDS") } inside && /^\.SS / { print substr($0, 5) }' \
    <<<"$text" | sort -u)
for name in $page_commands; do
    grep -qxF "$name" <<<"$commands" || problem "section \"$name\": mini-run --help has no such command"
done

for name in $commands; do
    if ! grep -qxF "$name" <<<"$page_commands"; then
        problem "no section \"$name\" under COMMANDS (mini-run --help lists it)"
        continue
    fi
    body=$(section SS "$name")
    options=$(help_options "$name" | grep -vxE -- '-h|--help' || true)
    for option in $options; do
        has_option "$body" "$option" || problem "section \"$name\": no $option (mini-run $name --help has it)"
    done
    for option in $(page_options <<<"$body"); do
        grep -qxF -- "$option" <<<"$options" || grep -qxF -- "$option" <<<"$global_options" ||
            problem "section \"$name\": $option, which mini-run $name --help does not list"
    done
done

# Rendered as man(1) does, every warning on: none is allowed.
if ! command -v groff >/dev/null; then
    problem "groff is not installed (apt-get install groff-base; scripts/bootstrap.sh does)"
elif ! warnings=$(groff -man -ww -z "$PAGE" 2>&1) || [[ -n "$warnings" ]]; then
    problem "groff -man -ww -z: ${warnings//$'\n'/; }"
fi

if ((failures > 0)); then
    echo "check-manpage: $failures problem(s)" >&2
    exit 1
fi
echo "check-manpage: $PAGE matches $BINARY --help ($(wc -w <<<"$commands") commands)"
