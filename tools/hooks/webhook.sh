#!/bin/sh
# HearAlert hook: POST each alert's JSON to a web address (a phone push service, a smart-light bridge,
# Home Assistant, ntfy.sh, ...). The address comes from HEARALERT_WEBHOOK_URL or the first argument.
#
#   HEARALERT_WEBHOOK_URL=https://ntfy.sh/my-door hearalert listen --hook tools/hooks/webhook.sh --hook-on both
#   hearalert listen --hook tools/hooks/webhook.sh http://homeassistant.local:8123/api/webhook/hearalert
#
# The alert's JSON arrives on stdin and is sent as the request body unchanged (curl --data-binary @-), so no
# event data is ever interpreted by the shell. HearAlert stops a hook that runs past its time limit; curl's own
# limit is shorter so it can report the failure itself.
set -eu
url=${1:-${HEARALERT_WEBHOOK_URL:?set HEARALERT_WEBHOOK_URL or pass the address as the first argument}}
exec curl --silent --show-error --fail --max-time 8 \
    --header 'Content-Type: application/json' --data-binary @- "$url"
