#!/usr/bin/env bash
# Re-create the Nsight Systems oracle files of this folder (see README.md).
#
# Usage:
#   NSYS=/path/to/nsys bash tests/data/oracle/make_oracles.sh OUT_DIR [NAME...]
#
#   NSYS         nsys executable (default: `nsys` on PATH; install one with
#                PATH="$(bash .ci/install_nsys.sh | tail -1):$PATH")
#   OUT_DIR      where the oracle files go (e.g. tests/data/oracle)
#   NAME...      report folder names under REPORTS_DIR (default: every folder
#                whose report has GPU work or NVTX events)
#   REPORTS_DIR  default: <repo>/../shared/data/reports  (each NAME/ holds
#                NAME.nsys-rep or NAME.qdrep, and usually NAME/parquet/)
#   SCRATCH      work folder for the .sqlite exports and raw CSVs
#                (default: a new temporary folder, deleted at the end
#                unless KEEP_SCRATCH=1)
#   PYTHON       a Python with duckdb, used to check that the SQLite export
#                has the same integer-ns times as NAME/parquet (default: the
#                repo's .venv/bin/python; the check is skipped without one)
#   PUSHPOP_MAX_NVTX  skip the nvtx_pushpop_trace oracle for reports with more
#                NVTX_EVENTS rows than this (default 100000)
#   GZIP_OVER    gzip an oracle CSV bigger than this many bytes (default 2000000)
#
# Nothing is written under REPORTS_DIR: the SQLite export goes to SCRATCH and
# `nsys stats` reads that .sqlite (given a .nsys-rep, nsys stats would write
# NAME.sqlite beside the report).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
REPO="$(cd "$HERE/../../.." && pwd -P)"

[[ $# -ge 1 ]] || { sed -n '2,27p' "$0" >&2; exit 2; }
OUT="$1"; shift
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd -P)"

NSYS="${NSYS:-$(command -v nsys || true)}"
[[ -n "$NSYS" && -x "$NSYS" ]] || {
    echo "make_oracles.sh: set NSYS to the nsys executable (bash .ci/install_nsys.sh prints its folder)" >&2
    exit 2
}
REPORTS_DIR="${REPORTS_DIR:-$REPO/../shared/data/reports}"
[[ -d "$REPORTS_DIR" ]] || { echo "make_oracles.sh: no REPORTS_DIR $REPORTS_DIR" >&2; exit 2; }
REPORTS_DIR="$(cd "$REPORTS_DIR" && pwd -P)"
PUSHPOP_MAX_NVTX="${PUSHPOP_MAX_NVTX:-100000}"
GZIP_OVER="${GZIP_OVER:-2000000}"

if [[ -z "${PYTHON:-}" && -x "$REPO/.venv/bin/python" ]]; then PYTHON="$REPO/.venv/bin/python"; fi
if [[ -n "${PYTHON:-}" ]] && ! "$PYTHON" -c 'import duckdb' 2>/dev/null; then PYTHON=""; fi

if [[ -z "${SCRATCH:-}" ]]; then
    SCRATCH="$(mktemp -d "${TMPDIR:-/tmp}/nsys-oracles.XXXXXX")"
    [[ "${KEEP_SCRATCH:-0}" == 1 ]] || trap 'rm -rf "$SCRATCH"' EXIT
fi
mkdir -p "$SCRATCH"
case "$SCRATCH/" in "$REPORTS_DIR"/*) echo "SCRATCH must not be inside REPORTS_DIR" >&2; exit 2;; esac
case "$OUT/" in "$REPORTS_DIR"/*) echo "OUT_DIR must not be inside REPORTS_DIR" >&2; exit 2;; esac

NSYS_VERSION="$("$NSYS" --version | sed -n 's/.*version \([^ ]*\).*/\1/p' | head -1)"
echo "nsys: $NSYS ($NSYS_VERSION); reports: $REPORTS_DIR; scratch: $SCRATCH; out: $OUT" >&2

if [[ $# -gt 0 ]]; then
    NAMES=("$@")
else
    NAMES=()
    for d in "$REPORTS_DIR"/*/; do NAMES+=("$(basename "$d")"); done
fi

# Table names of an exported .sqlite, one per line.
sqlite_tables() {
    python3 - "$1" <<'PY'
import sqlite3, sys
c = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
for (n,) in c.execute("SELECT name FROM sqlite_master WHERE type='table'"):
    print(n)
PY
}

# Runs one `nsys stats` report; prints nothing, leaves SCRATCH/NAME_REPORT.csv
# and SCRATCH/NAME_REPORT.log (stdout+stderr of nsys stats).
run_stats() {
    local name="$1" report="$2"
    local t0=$SECONDS
    "$NSYS" stats --report "$report" --format csv --force-overwrite true \
        --output "$SCRATCH/$name" "$SCRATCH/$name.sqlite" \
        >"$SCRATCH/${name}_$report.log" 2>&1 \
        || { cat "$SCRATCH/${name}_$report.log" >&2; return 1; }
    echo "  $report: $((SECONDS - t0)) s" >&2
}

# Copies SCRATCH/NAME_REPORT.csv to OUT/NAME.REPORT.csv[.gz] unless it is empty.
keep_csv() {
    local name="$1" report="$2" src="$SCRATCH/${1}_$2.csv"
    rm -f "$OUT/$name.$report.csv" "$OUT/$name.$report.csv.gz"
    [[ -s "$src" ]] || return 0
    if [[ $(stat -c %s "$src") -gt $GZIP_OVER ]]; then
        gzip -9 -n -c "$src" >"$OUT/$name.$report.csv.gz"
    else
        cp "$src" "$OUT/$name.$report.csv"
    fi
}

made=()
for name in "${NAMES[@]}"; do
    dir="$REPORTS_DIR/$name"
    rep=""
    for ext in nsys-rep qdrep; do [[ -f "$dir/$name.$ext" ]] && rep="$dir/$name.$ext"; done
    [[ -n "$rep" ]] || { echo "skip $name: no $name.nsys-rep / $name.qdrep" >&2; continue; }

    echo "== $name" >&2
    t0=$SECONDS
    "$NSYS" export --type=sqlite --ts-normalize=true -f true -q true \
        -o "$SCRATCH/$name.sqlite" "$rep"
    echo "  export sqlite: $((SECONDS - t0)) s" >&2

    tables="$(sqlite_tables "$SCRATCH/$name.sqlite")"
    has() { grep -qx "$1" <<<"$tables"; }
    if ! has CUPTI_ACTIVITY_KIND_KERNEL && ! has CUPTI_ACTIVITY_KIND_MEMCPY \
        && ! has CUPTI_ACTIVITY_KIND_MEMSET && ! has NVTX_EVENTS; then
        echo "  skip: no GPU work and no NVTX events" >&2
        continue
    fi

    reports=(nvtx_gpu_proj_trace cuda_gpu_trace cuda_api_trace)
    nvtx_rows=0
    if has NVTX_EVENTS; then
        nvtx_rows="$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM NVTX_EVENTS").fetchone()[0])' "$SCRATCH/$name.sqlite")"
        if [[ $nvtx_rows -le $PUSHPOP_MAX_NVTX ]]; then reports+=(nvtx_pushpop_trace); fi
    fi
    for r in "${reports[@]}"; do run_stats "$name" "$r"; done

    keep_csv "$name" nvtx_gpu_proj_trace
    if [[ " ${reports[*]} " == *" nvtx_pushpop_trace "* ]]; then keep_csv "$name" nvtx_pushpop_trace; fi

    parquet_check="null"
    if [[ -n "${PYTHON:-}" && -d "$dir/parquet" ]]; then
        parquet_check="$("$PYTHON" - "$SCRATCH/$name.sqlite" "$dir/parquet" <<'PY'
import json, os, sqlite3, sys
import duckdb
db, pq = sys.argv[1], sys.argv[2]
c = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
have = {n for (n,) in c.execute("SELECT name FROM sqlite_master WHERE type='table'")}
cols = {
    "CUPTI_ACTIVITY_KIND_KERNEL": "correlationId, start, \"end\", deviceId, streamId, globalPid",
    "CUPTI_ACTIVITY_KIND_MEMCPY": "correlationId, start, \"end\", deviceId, streamId, globalPid",
    "CUPTI_ACTIVITY_KIND_MEMSET": "correlationId, start, \"end\", deviceId, streamId, globalPid",
    "CUPTI_ACTIVITY_KIND_RUNTIME": "correlationId, start, \"end\", globalTid",
    "NVTX_EVENTS": "start, \"end\", globalTid, eventType",
}
res = {}
for t, cl in cols.items():
    f = os.path.join(pq, t + ".parquet")
    if t not in have and not os.path.exists(f):
        continue
    if t not in have or not os.path.exists(f):
        res[t] = "MISMATCH: table only in one export"
        continue
    if t == "NVTX_EVENTS":
        # RangeId of nvtx_*_trace = SQLite rowid = 1-based Parquet row number.
        s = c.execute(f"SELECT rowid, {cl} FROM {t} ORDER BY rowid").fetchall()
        p = duckdb.sql(f"SELECT file_row_number + 1, {cl} FROM read_parquet('{f}', file_row_number=true) ORDER BY file_row_number").fetchall()
        ok = [tuple(r) for r in s] == [tuple(r) for r in p]
        res[t] = f"{'identical' if ok else 'MISMATCH'} ({len(s)} rows; rowid = parquet row number + 1)"
    else:
        s = sorted(tuple(r) for r in c.execute(f"SELECT {cl} FROM {t}").fetchall())
        p = sorted(tuple(r) for r in duckdb.sql(f"SELECT {cl} FROM '{f}'").fetchall())
        res[t] = f"{'identical' if s == p else 'MISMATCH'} ({len(s)} rows)"
print(json.dumps(res, sort_keys=True))
PY
)"
        if grep -q MISMATCH <<<"$parquet_check"; then
            echo "  WARNING: sqlite and parquet differ: $parquet_check" >&2
        fi
    fi

    python3 - "$SCRATCH" "$OUT" "$name" "$(basename "$rep")" "$NSYS_VERSION" "$nvtx_rows" \
        "$parquet_check" "${reports[@]}" <<'PY'
import csv, json, os, re, sys
scratch, out, name, rep, version, nvtx_rows, pcheck = sys.argv[1:8]
reports = sys.argv[8:]
csv.field_size_limit(1 << 30)

def load(report):
    path = os.path.join(scratch, f"{name}_{report}.csv")
    log = open(os.path.join(scratch, f"{name}_{report}.log"), errors="replace").read()
    # Messages name the scratch .sqlite: keep only its file name.
    log = log.replace(os.path.join(scratch, ""), "")
    skipped = re.search(r"SKIPPED: (.*)", log)
    err = re.search(r"ERROR: (.*)", log)
    info = {}
    if skipped:
        info["skipped"] = skipped.group(1).strip()
    if err:
        info["error"] = err.group(1).strip()
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        return [], info
    return read_nsys_csv(path), info

def read_nsys_csv(path):
    # nsys's csv formatter quotes a field that has a comma but does not quote
    # or escape newlines (nor '"' inside a field): an NVTX name with a newline
    # spans several physical lines. Join lines until a record has all fields.
    PH, CR = "\ue000", "\ue001"  # stand-ins for newline and carriage return
    with open(path, newline="", encoding="utf-8", errors="surrogateescape") as f:
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    header = next(csv.reader([lines[0]]))
    rows, buf = [], None
    for line in lines[1:]:
        buf = line if buf is None else buf + PH + line
        fields = next(csv.reader([buf.replace("\r", CR)]))
        if len(fields) < len(header):
            continue
        if len(fields) > len(header):
            raise SystemExit(f"{path}: record with {len(fields)} fields, header has {len(header)}: {buf[:200]!r}")
        rows.append(dict(zip(header, (x.replace(CR, "\r").replace(PH, "\n") for x in fields))))
        buf = None
    if buf is not None:
        raise SystemExit(f"{path}: incomplete last record {buf[:200]!r}")
    return rows

result = {"report": rep, "nsys_version": version, "nvtx_events_rows": int(nvtx_rows)}

rows, info = load("cuda_gpu_trace")
kern = [r for r in rows if r["GrdX"] != ""]
memcpy, memset, other = {}, 0, 0
for r in rows:
    if r["GrdX"] != "":
        continue
    m = re.fullmatch(r"\[CUDA memcpy (.*)\]", r["Name"])
    if m:
        memcpy[m.group(1)] = memcpy.get(m.group(1), 0) + 1
    elif r["Name"] == "[CUDA memset]":
        memset += 1
    else:
        other += 1
g = {"rows": len(rows), "kernels": len(kern), "memcpy": memcpy,
     "memcpy_total": sum(memcpy.values()), "memset": memset,
     "kernel_duration_sum_ns": sum(int(r["Duration (ns)"]) for r in kern)}
if other:
    g["other"] = other
g.update(info)
result["cuda_gpu_trace"] = g

rows, info = load("cuda_api_trace")
result["cuda_api_trace"] = {"rows": len(rows), **info}

for rep_name in ("nvtx_gpu_proj_trace", "nvtx_pushpop_trace"):
    if rep_name not in reports:
        if rep_name == "nvtx_pushpop_trace" and int(nvtx_rows) > 0:
            result[rep_name] = {"not_run": f"more than PUSHPOP_MAX_NVTX NVTX_EVENTS rows ({nvtx_rows})"}
        continue
    rows, info = load(rep_name)
    d = {"rows": len(rows), **info}
    for ext in (".csv", ".csv.gz"):
        if os.path.exists(os.path.join(out, f"{name}.{rep_name}{ext}")):
            d["file"] = f"{name}.{rep_name}{ext}"
    if rep_name == "nvtx_gpu_proj_trace" and rows:
        d["rows_without_range"] = sum(1 for r in rows if r["RangeId"] == "")
        d["numgpuops_sum"] = sum(int(r["NumGPUOps"]) for r in rows)
    result[rep_name] = d

result["parquet_check"] = json.loads(pcheck)
with open(os.path.join(out, f"{name}.counts.json"), "w") as f:
    json.dump(result, f, indent=1, sort_keys=True)
    f.write("\n")
print(f"  {name}: gpu_trace={result['cuda_gpu_trace']['rows']} api_trace={result['cuda_api_trace']['rows']} "
      f"nvtx_gpu_proj_trace={result.get('nvtx_gpu_proj_trace', {}).get('rows')}", file=sys.stderr)
PY
    made+=("$name")
done
echo "made oracles for ${#made[@]} reports: ${made[*]}" >&2
