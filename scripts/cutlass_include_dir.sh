#!/usr/bin/env bash
# Prints the CUTLASS include directory of the installed nvidia-cutlass package (empty if not installed).
python3 -c "import cutlass_library, os; print(os.path.join(os.path.dirname(cutlass_library.__file__), 'source', 'include'))" 2>/dev/null || true
