"""nsys-duck: Nsight Systems reports to Perfetto traces, with the semantics in DuckDB SQL."""

__version__ = "0.3.0"
