#!/bin/sh
# REPLY_FETCH accept|reject: the slot took the job (running) or turned it
# down (idle again, for another slot). Only this slot's own claim changes.
. "$(dirname "$0")/common.sh"
ads=$(cat)
id=$(job_id "$ads")
number "$id"
slot=$(slot_name "$ads")
case "$1" in
accept) change="state = 'running', lease_until = NULL, started = now()" ;;
reject) change="state = 'idle', node = NULL, lease_until = NULL" ;;
*) echo "reply_fetch.sh: accept or reject, not '$1'" >&2; exit 1 ;;
esac
sql -v id="$id" -v slot="$slot" <<SQL
UPDATE roost_jobs SET $change
 WHERE id = :id AND state = 'claimed' AND node = :'slot';
SQL
