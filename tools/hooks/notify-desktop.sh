#!/bin/sh
# HearAlert hook: a desktop notification for each alert (libnotify's notify-send).
#
#   hearalert listen --hook tools/hooks/notify-desktop.sh
#
# HearAlert runs this with the alert's JSON on stdin and HEARALERT_TYPE, HEARALERT_LABEL, HEARALERT_SCORE,
# HEARALERT_TIME in the environment. The label is only ever passed as an argument, never evaluated.
set -eu
label=$(printf '%s' "${HEARALERT_LABEL:?run by hearalert --hook}" | tr '_' ' ')
case "${HEARALERT_TYPE:-alert_start}" in
    alert_start) exec notify-send --app-name=HearAlert --urgency=critical --icon=dialog-warning \
                     "HearAlert: $label" "A $label is sounding (score $HEARALERT_SCORE)." ;;
    alert_end)   exec notify-send --app-name=HearAlert --urgency=low "HearAlert: $label stopped" \
                     "The $label is no longer heard." ;;
esac
