#!/bin/sh
# JOB_EXIT exit|evict|hold|remove (the starter's, with the job's final ad):
# writes the job's fate back. An evicted job waits again for any slot.
. "$(dirname "$0")/common.sh"
ad=$(cat)
id=$(job_id "$ad")
number "$id"
code=$(printf '%s\n' "$ad" | awk '/^ExitCode = / { print $3; exit }')
case "$1" in
exit) change="state = 'done', exit_status = ${code:-NULL}" ;;
evict) change="state = 'idle', node = NULL" ;;
hold) change="state = 'held'" ;;
remove) change="state = 'removed'" ;;
*) echo "job_exit.sh: exit, evict, hold or remove, not '$1'" >&2; exit 1 ;;
esac
[ -z "$code" ] || number "$code"
sql -v id="$id" -v how="$1" <<SQL
UPDATE roost_jobs
   SET $change, exit_how = :'how', lease_until = NULL, finished = now()
 WHERE id = :id AND state IN ('claimed', 'running');
SQL
