-- rank_env_vars: the environment variables a launcher sets to a process's
-- rank, in the order they are believed when a capture records several.
--
-- Reads: nothing (a domain table: stg_capture_rank reads it).
-- Invariants: Nsight records the environment nsys ran in
-- (TARGET_INFO_SYSTEM_ENV, name DeviceEnvironment, "VAR=VALUE;...") and a
-- launcher that starts one nsys per rank (torchrun, mpirun, srun) sets these
-- there. priority 1 is believed first: the global ranks (torchrun's RANK,
-- Open MPI, MPICH/Hydra PMI, PMIx, MVAPICH, Slurm's task id), then the
-- local ranks, which are a rank only on one node (a merge takes them only
-- when they differ across its reports, as for every source).

CREATE OR REPLACE TABLE rank_env_vars AS
SELECT * FROM (VALUES
    ('RANK', 1),
    ('OMPI_COMM_WORLD_RANK', 2),
    ('PMI_RANK', 3),
    ('PMIX_RANK', 4),
    ('MV2_COMM_WORLD_RANK', 5),
    ('SLURM_PROCID', 6),
    ('LOCAL_RANK', 7),
    ('OMPI_COMM_WORLD_LOCAL_RANK', 8),
    ('SLURM_LOCALID', 9)
) AS t (var_name, priority);

COMMENT ON TABLE rank_env_vars IS 'Domain table: environment variables that hold a process''s rank (torchrun, MPI, Slurm), in the order they are believed.';
COMMENT ON COLUMN rank_env_vars.var_name IS 'Variable name, as in TARGET_INFO_SYSTEM_ENV''s DeviceEnvironment (VAR=VALUE;...).';
COMMENT ON COLUMN rank_env_vars.priority IS '1 is believed first when the environment holds several.';
