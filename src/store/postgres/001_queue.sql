-- The job queue (service/job_queue.h): one row per job, keyed by EvalJob::Key,
-- and the workers last seen. Leases and sightings are the server's clock
-- (now()), so workers on machines whose clocks disagree still agree on them.
CREATE TABLE jobs (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  key text NOT NULL UNIQUE,
  machine_class text NOT NULL,
  job text NOT NULL,  -- EvalJob::ToJson
  state text NOT NULL CHECK (state IN ('queued', 'running', 'done', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  worker text,
  device text,
  lease_until timestamptz,
  outcome text,  -- EvalOutcome::ToJson, when done
  error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz
);

-- What a claim looks for: the oldest claimable job of one machine class.
CREATE INDEX jobs_claimable ON jobs (machine_class, id) WHERE state IN ('queued', 'running');

CREATE TABLE workers (
  name text PRIMARY KEY,
  device text NOT NULL,
  machine_class text NOT NULL,
  seen timestamptz NOT NULL
);
