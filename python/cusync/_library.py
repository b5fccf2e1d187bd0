"""ctypes binding of libcusync_mlp (python/csrc/cusync_mlp.h): loading, argument types, and turning a failed call's
status and message into a Python exception. No torch here.

Where the library is looked for: $CUSYNC_MLP_LIBRARY, then next to this file (where `pip install ./python` puts
it). It is loaded on first use, not at import, so `import cusync` works without it (the fake implementation, the
tuning table and cusync-tune need no GPU).
"""
from __future__ import annotations

import ctypes
import os
import threading
from pathlib import Path

from .tuning import ConfigInfo

ABI_VERSION = 5  # CUSYNC_MLP_ABI_VERSION
LIBRARY_ENVIRONMENT = "CUSYNC_MLP_LIBRARY"
LIBRARY_NAME = "libcusync_mlp.so"

GELU, SWIGLU = 0, 1  # cusync_mlp_activation
ACTIVATION_CODES = {"gelu": GELU, "swiglu": SWIGLU}

# cusync_mlp_status -> the exception a Python caller gets.
_EXCEPTIONS = {
    1: ValueError,           # CUSYNC_MLP_INVALID_ARGUMENT
    2: NotImplementedError,  # CUSYNC_MLP_NOT_IMPLEMENTED
    3: RuntimeError,         # CUSYNC_MLP_UNSUPPORTED_DEVICE
    4: RuntimeError,         # CUSYNC_MLP_CAPTURING
    5: RuntimeError,         # CUSYNC_MLP_CUDA_ERROR
    6: RuntimeError,         # CUSYNC_MLP_INTERNAL_ERROR
}

_lock = threading.Lock()
_library = None


def candidates() -> list:
    configured = os.environ.get(LIBRARY_ENVIRONMENT)
    if configured:
        return [Path(configured)]
    return [Path(__file__).resolve().parent / LIBRARY_NAME]


def _declare(lib):
    c_int, c_uint32, c_void_p, c_char_p = ctypes.c_int, ctypes.c_uint32, ctypes.c_void_p, ctypes.c_char_p
    pointer_int, pointer_uint32 = ctypes.POINTER(c_int), ctypes.POINTER(c_uint32)
    signatures = {
        "cusync_mlp_abi_version": (c_int, []),
        "cusync_mlp_last_error": (c_char_p, []),
        "cusync_mlp_gelu_approximation": (c_char_p, []),
        "cusync_mlp_config_count": (c_int, [c_int]),
        "cusync_mlp_config_name": (c_char_p, [c_int, c_int]),
        "cusync_mlp_config_tile": (c_int, [c_int, c_char_p, pointer_int, pointer_int, pointer_int]),
        "cusync_mlp_config_blocks_per_sm": (c_int, [c_int, c_char_p, c_int, pointer_int]),
        "cusync_mlp_config_packs_weights": (c_int, [c_int, c_char_p, pointer_int]),
        "cusync_mlp_packed_weight_bytes": (c_int, [c_int, c_int, c_int, c_int, ctypes.POINTER(ctypes.c_uint64)]),
        "cusync_mlp_pack_weights": (c_int, [c_int, c_int, c_int, c_int, c_void_p, c_void_p, c_void_p]),
        "cusync_mlp_plan_create": (c_int, [c_int, c_int, c_int, c_int, c_int, c_char_p, c_uint32, c_uint32, c_uint32,
                                           c_uint32, c_void_p, ctypes.POINTER(c_void_p)]),
        "cusync_mlp_plan_set_unit_wait": (c_int, [c_void_p, c_int]),
        "cusync_mlp_plan_info": (c_int, [c_void_p, pointer_uint32, pointer_uint32]),
        "cusync_mlp_run": (c_int, [c_void_p, c_void_p, c_void_p, c_void_p, c_void_p, c_void_p, c_void_p]),
        "cusync_mlp_plan_destroy": (c_int, [c_void_p]),
    }
    for name, (result, arguments) in signatures.items():
        function = getattr(lib, name)
        function.restype = result
        function.argtypes = arguments


def library():
    """The loaded library; RuntimeError saying where it was looked for and how to build it when it is missing."""
    global _library
    with _lock:
        if _library is not None:
            return _library
        paths = candidates()
        path = next((p for p in paths if p.is_file()), None)
        if path is None:
            raise RuntimeError(
                f"cusync: {LIBRARY_NAME} not found (looked at {', '.join(map(str, paths))}). Build it with "
                "`pip install --no-build-isolation ./python` (runs CMake), or configure the repository with "
                "-DCUSYNC_BUILD_PYTHON_EXTENSION=ON, build the target cusync_mlp and set "
                f"{LIBRARY_ENVIRONMENT} to the built file")
        try:
            lib = ctypes.CDLL(str(path))
            _declare(lib)
        except (OSError, AttributeError) as error:
            raise RuntimeError(f"cusync: cannot load {path}: {error}") from None
        version = lib.cusync_mlp_abi_version()
        if version != ABI_VERSION:
            raise RuntimeError(f"cusync: {path} has C interface version {version}, this package needs {ABI_VERSION}: "
                               "rebuild the library from the same checkout")
        _library = lib
        return lib


def check(status: int) -> None:
    if status != 0:
        message = library().cusync_mlp_last_error().decode(errors="replace")
        raise _EXCEPTIONS.get(status, RuntimeError)(message)


def gelu_approximation() -> str:
    """The GELU form the library computes, as torch.nn.functional.gelu's `approximate`: "tanh" (GPT-3's, the default
    build) or "none" (exact; a CUSYNC_GELU_ERF build)."""
    return library().cusync_mlp_gelu_approximation().decode()


def configs(activation: str = "gelu") -> list:
    """The configurations compiled into the library for `activation` (each chain has its own kernels)."""
    lib = library()
    code = ACTIVATION_CODES[activation]
    return [lib.cusync_mlp_config_name(code, i).decode() for i in range(lib.cusync_mlp_config_count(code))]


def config_info(name: str, device: int, activation: str = "gelu") -> ConfigInfo:
    lib = library()
    code = ACTIVATION_CODES[activation]
    tile = [ctypes.c_int() for _ in range(3)]
    check(lib.cusync_mlp_config_tile(code, name.encode(), *[ctypes.byref(t) for t in tile]))
    blocks = ctypes.c_int()
    check(lib.cusync_mlp_config_blocks_per_sm(code, name.encode(), device, ctypes.byref(blocks)))
    return ConfigInfo(tile[0].value, tile[1].value, tile[2].value, blocks.value)


def config_packs_weights(name: str, activation: str = "gelu") -> bool:
    """Whether configuration `name` reads packed copies of W1 and W2 (pack_weights) instead of the weights."""
    packs = ctypes.c_int()
    check(library().cusync_mlp_config_packs_weights(ACTIVATION_CODES[activation], name.encode(), ctypes.byref(packs)))
    return packs.value == 1


def packed_weight_bytes(activation: str, hidden: int, intermediate: int, which: int) -> int:
    """Bytes of the packed copy of W1 (which 1) or W2 (which 2)."""
    size = ctypes.c_uint64()
    check(library().cusync_mlp_packed_weight_bytes(ACTIVATION_CODES[activation], hidden, intermediate, which,
                                                   ctypes.byref(size)))
    return size.value


def pack_weights(activation: str, hidden: int, intermediate: int, which: int, w: int, packed: int,
                 stream: int) -> None:
    """Enqueues the packing of W1 (which 1) or W2 (which 2) at device address `w` into `packed` on `stream`."""
    check(library().cusync_mlp_pack_weights(ACTIVATION_CODES[activation], hidden, intermediate, which,
                                            ctypes.c_void_p(w), ctypes.c_void_p(packed), ctypes.c_void_p(stream)))


class Plan:
    """One native plan (cusync_mlp_plan). Freed only through destroy(): a plan may sit in a captured CUDA graph that
    outlives every Python reference to it, so garbage collection must not free it."""

    def __init__(self, device: int, m: int, hidden: int, intermediate: int, activation: str, choice, stream: int):
        self.handle = ctypes.c_void_p()
        check(library().cusync_mlp_plan_create(
            device, m, hidden, intermediate, ACTIVATION_CODES[activation], choice.config.encode(), choice.first_parts,
            choice.second_parts, choice.producer_group_rows, choice.consumer_group_rows, ctypes.c_void_p(stream),
            ctypes.byref(self.handle)))
        if getattr(choice, "whole_unit_wait", False):
            try:
                check(library().cusync_mlp_plan_set_unit_wait(self.handle, 1))
            except BaseException:
                self.destroy()
                raise

    def info(self) -> tuple:
        units, blocks = ctypes.c_uint32(), ctypes.c_uint32()
        check(library().cusync_mlp_plan_info(self.handle, ctypes.byref(units), ctypes.byref(blocks)))
        return units.value, blocks.value

    def run(self, x: int, w1: int, w2: int, intermediate: int, out: int, stream: int) -> None:
        check(library().cusync_mlp_run(self.handle, x, w1, w2, intermediate, out, stream))

    def destroy(self) -> None:
        if self.handle:
            check(library().cusync_mlp_plan_destroy(self.handle))
            self.handle = ctypes.c_void_p()
