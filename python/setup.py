"""Builds libcusync_mlp.so with the repository's CMake (-DCUSYNC_BUILD_PYTHON_EXTENSION=ON, sm_90a) and puts it into
the package. The package metadata is in pyproject.toml; this file only adds the native build step.

Environment:
  CUSYNC_MLP_PREBUILT_LIBRARY=PATH  copy this library instead of building one
  CUSYNC_SKIP_NATIVE_BUILD=1        install the Python files only (then point CUSYNC_MLP_LIBRARY at a library)
  CUSYNC_BUILD_DIR=DIR              CMake build directory (default: <repo>/build-python)
  CUSYNC_CUTLASS_INCLUDE_DIR=DIR    CUTLASS headers (default: <repo>/.cutlass/include, else what
                                    scripts/cutlass_include_dir.sh finds)
  CUSYNC_PREGENERATED_DIR=DIR       cusyncgen headers made elsewhere (default: <repo>/build-gen when it holds them;
                                    otherwise cusyncgen is built, which needs isl and fmt)
  CUSYNC_FUSED_CONFIGS=...          kernel configurations (default: examples/gemm/CMakeLists.txt's, which are the
                                    ones the shipped tuning table names)
  CUSYNC_CMAKE_ARGS="..."           more configure arguments
  CMAKE_BUILD_PARALLEL_LEVEL=N      build jobs (default: all cores)
"""
import os
import shlex
import shutil
import subprocess
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
LIBRARY = "libcusync_mlp.so"


class NativeBuildError(RuntimeError):
    pass


def _cutlass_include_dir():
    configured = os.environ.get("CUSYNC_CUTLASS_INCLUDE_DIR")
    if configured:
        return configured
    bundled = REPO / ".cutlass" / "include"
    if (bundled / "cutlass" / "cutlass.h").is_file():
        return str(bundled)
    script = REPO / "scripts" / "cutlass_include_dir.sh"
    try:
        found = subprocess.run([str(script)], check=True, capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        found = ""
    if not found or not (Path(found) / "cutlass" / "cutlass.h").is_file():
        raise NativeBuildError("CUTLASS headers not found: set CUSYNC_CUTLASS_INCLUDE_DIR, or copy them to "
                               "<repo>/.cutlass/include (README.md, GPU runs)")
    return found


def _configure_arguments(build_dir):
    arguments = ["cmake", "-S", str(REPO), "-B", str(build_dir), "-DCMAKE_BUILD_TYPE=Release",
                 "-DCUSYNC_BUILD_PYTHON_EXTENSION=ON", "-DCUSYNC_BUILD_TESTS=OFF", "-DCUSYNC_BUILD_REWRITER=OFF",
                 "-DCUSYNC_CUDA_ARCHITECTURES=90a", f"-DCUSYNC_CUTLASS_INCLUDE_DIR={_cutlass_include_dir()}"]
    if shutil.which("ninja") and not (Path(build_dir) / "CMakeCache.txt").is_file():
        arguments += ["-G", "Ninja"]
    pregenerated = os.environ.get("CUSYNC_PREGENERATED_DIR") or str(REPO / "build-gen")
    # Configuring the repository's examples needs all three specs' headers.
    if all((Path(pregenerated) / f"{spec}.h").is_file() for spec in ("gpt3_mlp", "gpt3_mlp_fused", "llama_mlp")):
        arguments += ["-DCUSYNC_BUILD_COMPILER=OFF", f"-DCUSYNC_PREGENERATED_DIR={pregenerated}"]
    if os.environ.get("CUSYNC_FUSED_CONFIGS"):
        arguments.append(f"-DCUSYNC_FUSED_CONFIGS={os.environ['CUSYNC_FUSED_CONFIGS']}")
    return arguments + shlex.split(os.environ.get("CUSYNC_CMAKE_ARGS", ""))


def build_native_library():
    """Path of a libcusync_mlp.so built (or given) for this install."""
    prebuilt = os.environ.get("CUSYNC_MLP_PREBUILT_LIBRARY")
    if prebuilt:
        if not Path(prebuilt).is_file():
            raise NativeBuildError(f"CUSYNC_MLP_PREBUILT_LIBRARY={prebuilt} does not exist")
        return Path(prebuilt)
    if not (REPO / "CMakeLists.txt").is_file():
        raise NativeBuildError(f"{REPO} is not the cusync repository: build from a checkout (pip install ./python)")
    if shutil.which("cmake") is None:
        raise NativeBuildError("cmake not found (and nvcc is needed too)")
    build_dir = Path(os.environ.get("CUSYNC_BUILD_DIR") or REPO / "build-python")
    jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 1)
    for command in (_configure_arguments(build_dir),
                    ["cmake", "--build", str(build_dir), "--target", "cusync_mlp", "-j", jobs]):
        print("cusync:", " ".join(shlex.quote(c) for c in command), flush=True)
        if subprocess.run(command).returncode != 0:
            raise NativeBuildError(f"`{' '.join(command[:3])} ...` failed (output above)")
    return build_dir / "python" / LIBRARY


class BuildPyWithNativeLibrary(build_py):
    def run(self):
        super().run()
        if os.environ.get("CUSYNC_SKIP_NATIVE_BUILD") == "1":
            print("cusync: CUSYNC_SKIP_NATIVE_BUILD=1: no native library in this install; set CUSYNC_MLP_LIBRARY")
            return
        try:
            library = build_native_library()
        except NativeBuildError as error:
            raise SystemExit(f"cusync: cannot build {LIBRARY}: {error}. Alternatives: CUSYNC_MLP_PREBUILT_LIBRARY=PATH "
                             "to package a built one, or CUSYNC_SKIP_NATIVE_BUILD=1 and CUSYNC_MLP_LIBRARY=PATH at run "
                             "time (docs/PYTORCH_OP.md)") from None
        target = Path(self.build_lib) / "cusync" / LIBRARY
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(library, target)


class BinaryDistribution(Distribution):
    """The wheel carries a native library: platform-specific, not pure Python."""

    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": BuildPyWithNativeLibrary}, distclass=BinaryDistribution)
