-- context_device(proc_key, os_pid, context_id, exported_device_id): the
-- macro every synchronization and CUDA event record uses to find its
-- device: that of its (process, context) in stg_context_devices, else the
-- exported deviceId.
--
-- Reads: stg_context_devices.
-- Invariants: an expression (a correlated lookup), not a table; NULL only
-- when the context is unknown and the exported deviceId is NULL.

-- The device of a record's (process, context), else the exported deviceId.
CREATE OR REPLACE MACRO context_device(rec_proc_key, rec_os_pid, rec_context_id,
        rec_exported_device_id) AS
    coalesce(
        (SELECT any_value(cd.device_id) FROM stg_context_devices AS cd
            WHERE cd.context_id = rec_context_id
                AND (cd.proc_key = rec_proc_key
                    OR (cd.proc_key IS NULL AND cd.os_pid = rec_os_pid))),
        rec_exported_device_id);
