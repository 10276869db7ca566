-- kineto_copy_kinds: the copy-kind word of a memcpy's name in the Kineto
-- trace ("Memcpy HtoD", as Kineto names CUPTI copies).
--
-- Reads: nothing (a domain table: kineto_events reads it).
-- Invariants: copy_kind is CUpti_ActivityMemcpyKind (1..13, copy_kinds);
-- kineto_kind is CUPTI's short kind string (memcpyKindString in libkineto:
-- HtoD, DtoH, HtoA, AtoH, AtoA, AtoD, DtoA, DtoD, HtoH, PtoP); the unified
-- kinds take the word of their direction. Exactly one row has copy_kind
-- NULL: the word for a NULL or unlisted code. HTA's memory-kernel types are
-- the first 11 characters of the name ("Memcpy HtoD").

CREATE OR REPLACE TABLE kineto_copy_kinds AS
SELECT * FROM (VALUES
    (1, 'HtoD'),
    (2, 'DtoH'),
    (3, 'HtoA'),
    (4, 'AtoH'),
    (5, 'AtoA'),
    (6, 'AtoD'),
    (7, 'DtoA'),
    (8, 'DtoD'),
    (9, 'HtoH'),
    (10, 'PtoP'),
    (11, 'HtoD'),
    (12, 'DtoH'),
    (13, 'DtoD'),
    (NULL, 'Unknown')
) AS t (copy_kind, kineto_kind);

COMMENT ON TABLE kineto_copy_kinds IS 'Domain table: per CUPTI copyKind, the kind word of a memcpy''s name in the Kineto trace (Memcpy HtoD ...); the row with copy_kind NULL stands for NULL and unlisted codes.';
COMMENT ON COLUMN kineto_copy_kinds.copy_kind IS 'CUPTI_ACTIVITY_KIND_MEMCPY.copyKind (CUpti_ActivityMemcpyKind); NULL: the row for a NULL or unlisted code.';
COMMENT ON COLUMN kineto_copy_kinds.kineto_kind IS 'CUPTI''s short copy-kind string (HtoD, DtoH, DtoD, ...), as in Kineto''s memcpy names.';
