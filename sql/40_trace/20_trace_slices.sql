-- trace_slices: the aligned event table (NAME.perfetto.parquet): one row
-- per slice in the JSON, X or B/E pair, same count.
--
-- Reads: int_slices_on_tracks.
-- Invariants: times are absolute integer ns (Nsight's clock), so traces of
-- several reports line up; pid/tid are the JSON ones. Column names and
-- types are stable and documented in README.md ("Aligned Parquet").

CREATE OR REPLACE VIEW trace_slices AS
SELECT
    slice_id,
    start_ns,
    end_ns,
    end_ns - start_ns AS dur_ns,
    json_pid AS pid,
    json_tid AS tid,
    track_name,
    cat,
    name,
    device_id,
    os_pid,
    os_tid,
    context_id,
    stream_id,
    correlation_id,
    copy_kind_label AS copy_kind,
    bytes,
    nvtx_id
FROM int_slices_on_tracks;
