#!/usr/bin/env python3
"""summarize_fused.py on made-up CSVs: the best correct row per variant counts, a wrong row does not, the best anchor
is the fastest of cuBLAS and the torch variants, and the cross-process line divides the example's cuBLAS by
torch-addmm-gelu. Exits non-zero on a failed expectation."""
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

FUSED = """M,config,variant,us,relative_error,correct,waves_gemm1,waves_gemm2,avoided_wait_kernel
256,cuBLASLt,cuBLAS,130,0.0004,1,0,0,0
256,a,Fused,120,0.0004,1,1,1,0
256,b,Fused,100,0.5,0,1,1,0
256,a,Fused-StreamSync,125,0.0004,1,1,1,0
256,floor,floor,104,0,1,0,0,0
"""
TORCH = """M,variant,us,relative_error,correct
256,torch-eager,140,0.0004,1
256,torch-addmm-gelu,125,0.0004,1
256,torch-compile,90,0.9,0
"""


def main():
    with tempfile.TemporaryDirectory() as folder:
        fused, torch_csv = Path(folder) / "fused.csv", Path(folder) / "torch.csv"
        fused.write_text(FUSED)
        torch_csv.write_text(TORCH)
        out = subprocess.run([sys.executable, str(HERE / "summarize_fused.py"), str(fused), str(torch_csv)],
                             capture_output=True, text=True, check=True).stdout
    print(out)
    row = next(line.split() for line in out.splitlines() if line.split() and line.split()[0] == "256")
    failures = []
    # Columns: M floor cuBLAS torch-eager torch-addmm-gelu torch-compile max-autotune best-anchor Fused Fused-SS ...
    if float(row[7]) != 125.0:
        failures.append(f"best anchor {row[7]}, expected 125.0 (torch-addmm-gelu; the wrong torch-compile row skipped)")
    if float(row[8]) != 120.0:
        failures.append(f"Fused {row[8]}, expected 120.0 (the wrong 100 us row skipped)")
    if "best anchor: torch-addmm-gelu" not in out:
        failures.append("the best anchor is not named torch-addmm-gelu")
    if "M=256 1.040" not in out:
        failures.append("the cross-process line does not give 130 / 125 = 1.040 at M = 256")
    for failure in failures:
        print("FAILED:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
