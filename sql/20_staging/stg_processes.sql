-- stg_processes: the processes Nsight recorded on the target (PROCESSES),
-- with their names.
--
-- Reads: nsys.PROCESSES.
-- Invariants: one row per PROCESSES row; proc_key is nsys_proc_key of its
-- globalPid (the key every stage joins a process on); process_name is the
-- name cleaned for display (clean_text), possibly empty. A process it does
-- not list (git, sleep) has no row.

CREATE OR REPLACE VIEW stg_processes AS
SELECT
    nsys_proc_key(globalPid) AS proc_key,
    clean_text(name) AS process_name
FROM nsys.PROCESSES;

COMMENT ON VIEW stg_processes IS 'The processes Nsight recorded (PROCESSES), with their names.';
COMMENT ON COLUMN stg_processes.proc_key IS 'Process key: nsys_proc_key(globalPid).';
COMMENT ON COLUMN stg_processes.process_name IS 'The process name (clean_text of PROCESSES.name).';
