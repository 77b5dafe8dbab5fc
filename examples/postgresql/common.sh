# Shared by the hooks (sourced): the database, from db.env beside them
# (PGHOST, PGPORT, PGUSER, PGDATABASE, PGPASSWORD as psql reads them, and
# ROOST_PG_LEASE), and the ads on stdin.
here=$(dirname "$0")
if [ -r "$here/db.env" ]; then
    . "$here/db.env"
fi
export PGHOST PGPORT PGUSER PGDATABASE PGPASSWORD
export PGCONNECT_TIMEOUT=${PGCONNECT_TIMEOUT:-5}
# Seconds a fetched job stays claimed without REPLY_FETCH's accept before
# another slot may take it (a node that died between the two).
ROOST_PG_LEASE=${ROOST_PG_LEASE:-300}

# psql, quiet, unaligned, tuples only, stopping at the first error.
sql() {
    psql -X -q -A -t -v ON_ERROR_STOP=1 "$@"
}

# The job ad's ClusterId (the row's id), from an ad or "job ad ----- slot ad".
job_id() {
    printf '%s\n' "$1" | awk '/^-----/ { exit } /^ClusterId = / { print $3; exit }'
}

# The slot ad's Name, from "job ad ----- slot ad".
slot_name() {
    printf '%s\n' "$1" | awk 'seen && /^Name = / { gsub(/^Name = "|"$/, ""); print; exit } /^-----/ { seen = 1 }'
}

# A whole number, or the hook stops.
number() {
    case "$1" in
    '' | *[!0-9-]*) echo "not a number: '$1'" >&2; exit 1 ;;
    esac
}
