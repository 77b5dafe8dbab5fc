-- A job table for Roost's PostgreSQL fetch-work hooks (README.md here).
-- One row per job: its ClassAd (old syntax, one `Name = value` per line;
-- the hooks add ClusterId = id and ProcId = 0), and its fate as the hooks
-- write it back.
CREATE TABLE IF NOT EXISTS roost_jobs (
    id          bigserial PRIMARY KEY,
    ad          text        NOT NULL,
    -- idle: waiting; claimed: handed to a slot by FETCH_WORK, not yet
    -- accepted (until lease_until); running: accepted (REPLY_FETCH);
    -- done, held, removed: JOB_EXIT said so. An evicted job is idle again.
    state       text        NOT NULL DEFAULT 'idle'
                CHECK (state IN ('idle', 'claimed', 'running', 'done', 'held', 'removed')),
    node        text,               -- the slot that has it (slotN@name)
    lease_until timestamptz,        -- a claim not accepted by then is free again
    attempts    integer     NOT NULL DEFAULT 0,
    exit_how    text,               -- JOB_EXIT's argument, last time
    exit_status integer,            -- the job's ExitCode (exit)
    submitted   timestamptz NOT NULL DEFAULT now(),
    started     timestamptz,
    finished    timestamptz
);
-- FETCH_WORK's look for the next job.
CREATE INDEX IF NOT EXISTS roost_jobs_waiting ON roost_jobs (id)
    WHERE state IN ('idle', 'claimed');
