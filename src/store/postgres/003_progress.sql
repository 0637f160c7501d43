-- A run's live progress (Store::PutRunProgress): one document per run,
-- replaced as the run goes, read by `accelopt serve`.
CREATE TABLE run_progress (
  run_id bigint PRIMARY KEY REFERENCES runs(id),
  progress text NOT NULL,
  updated_at text NOT NULL DEFAULT accelopt_now()
);
