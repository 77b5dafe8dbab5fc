#!/bin/sh
# FETCH_WORK: claims the oldest waiting job for this slot and prints its ad
# (nothing: no work). SKIP LOCKED lets every slot of every node fetch at
# once without waiting on each other or taking the same row.
. "$(dirname "$0")/common.sh"
slot=$(awk '/^Name = / { gsub(/^Name = "|"$/, ""); print; exit }')
sql -v slot="$slot" -v lease="$ROOST_PG_LEASE" <<'SQL'
UPDATE roost_jobs AS r
   SET state = 'claimed', node = :'slot', attempts = r.attempts + 1,
       lease_until = now() + make_interval(secs => :lease)
  FROM (SELECT id FROM roost_jobs
         WHERE state = 'idle' OR (state = 'claimed' AND lease_until < now())
         ORDER BY id LIMIT 1
         FOR UPDATE SKIP LOCKED) AS next
 WHERE r.id = next.id
RETURNING r.ad || E'\nClusterId = ' || r.id || E'\nProcId = 0';
SQL
