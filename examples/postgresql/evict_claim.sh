#!/bin/sh
# EVICT_CLAIM: the slot gave the job's claim up before the job ran to its
# end (the daemon's word after a lost claim, a vacate before the starter):
# the job waits again for any slot.
. "$(dirname "$0")/common.sh"
ads=$(cat)
id=$(job_id "$ads")
number "$id"
sql -v id="$id" <<'SQL'
UPDATE roost_jobs SET state = 'idle', node = NULL, lease_until = NULL
 WHERE id = :id AND state IN ('claimed', 'running');
SQL
