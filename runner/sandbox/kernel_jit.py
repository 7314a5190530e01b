"""Inside the kernel: the kernel environment's numba functions load from a compile cache.

antropy (behind yasa.SleepStaging) compiles its functions when they are decorated, without
`cache=True`, so NUMBA_CACHE_DIR alone does nothing and every fresh kernel spent ~20 s
compiling. Here, every numba dispatcher whose function comes from the kernel environment
(site-packages, not the model's cells or files) gets a cache in JIT_CACHE_ENV's directory,
whatever its decorator asked. That directory is mounted read-only in the sandbox: a missing
entry (another CPU, a signature the setup never compiled) compiles in memory and is never
written, so the model can neither write nor poison what the next kernel loads. Only the
setup's build (JIT_CACHE_WRITE_ENV set) writes.

The kernel's command line carries this module's source (runner/sandbox/bootstrap.py), so it
imports nothing of the package; the host's tests import it directly. Numba is patched when
something first imports it, so a kernel that never uses numba pays nothing.
"""
from __future__ import annotations

import importlib.abc
import importlib.util
import os
import sys
import sysconfig
from typing import Any

JIT_CACHE_ENV = "EEGBENCH_JIT_CACHE"
JIT_CACHE_WRITE_ENV = "EEGBENCH_JIT_CACHE_WRITE"


def install_from_env() -> None:
    """Install the cache when the sandbox mounts one (JIT_CACHE_ENV names its directory)."""
    cache_dir = os.environ.pop(JIT_CACHE_ENV, "")  # the model's environment stays as it was
    writable = bool(os.environ.pop(JIT_CACHE_WRITE_ENV, ""))
    if cache_dir:
        install(cache_dir, sysconfig.get_paths()["purelib"], writable)


def install(cache_dir: str, env_root: str, writable: bool) -> None:
    """Patch numba (now if imported, else when first imported) so that functions defined
    under `env_root` load their compiled code from `cache_dir` (and save it when writable)."""
    module = sys.modules.get("numba.core.dispatcher")
    if module is not None:
        patch_dispatcher(module, cache_dir, env_root, writable)
        return
    sys.meta_path.insert(0, _AfterImport("numba.core.dispatcher",
                                         lambda m: patch_dispatcher(m, cache_dir, env_root, writable)))


class _AfterImport(importlib.abc.MetaPathFinder):
    """Runs `then(module)` right after the named module is executed, once."""

    def __init__(self, name: str, then: Any) -> None:
        self.name, self.then = name, then

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname != self.name:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        loader, then = spec.loader, self.then
        execute = loader.exec_module

        def exec_module(module: Any) -> None:
            execute(module)
            then(module)

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def patch_dispatcher(dispatcher: Any, cache_dir: str, env_root: str, writable: bool) -> None:
    """Give every environment function's Dispatcher the prebuilt cache."""
    cache_class = prebuilt_cache_class(cache_dir, env_root, writable)
    root = os.path.join(os.path.realpath(env_root), "")
    # numba's own helpers are left as numba treats them (it never caches them itself).
    own = tuple(os.path.join(root, name, "") for name in ("numba", "llvmlite"))
    base = dispatcher.Dispatcher

    def from_environment(py_func: Any) -> bool:
        code = getattr(py_func, "__code__", None)
        if code is None:
            return False
        path = os.path.realpath(code.co_filename)
        return path.startswith(root) and not path.startswith(own)

    original_init, original_enable = base.__init__, base.enable_caching

    def __init__(self: Any, py_func: Any, *args: Any, **kwargs: Any) -> None:
        original_init(self, py_func, *args, **kwargs)
        if from_environment(py_func):
            self._cache = cache_class(py_func)

    def enable_caching(self: Any) -> None:
        if from_environment(self.py_func):
            self._cache = cache_class(self.py_func)
        else:
            original_enable(self)

    base.__init__, base.enable_caching = __init__, enable_caching


def prebuilt_cache_class(cache_dir: str, env_root: str, writable: bool) -> type:
    """numba's FunctionCache, located under `cache_dir` by the function's path relative to
    `env_root` (the same wherever the environment is mounted); never fails a compile."""
    from numba.core import caching

    class Locator(caching._SourceFileBackedLocatorMixin, caching._CacheLocator):
        def __init__(self, py_func: Any, py_file: str) -> None:
            self._py_file = py_file
            self._lineno = py_func.__code__.co_firstlineno
            relative = os.path.relpath(os.path.realpath(py_file), os.path.realpath(env_root))
            self._cache_path = os.path.join(cache_dir, os.path.splitext(relative)[0])

        def get_cache_path(self) -> str:
            return self._cache_path

        def ensure_cache_path(self) -> None:
            if writable:
                os.makedirs(self._cache_path, exist_ok=True)

        @classmethod
        def from_function(cls, py_func: Any, py_file: str) -> Any:
            return cls(py_func, py_file) if os.path.exists(py_file) else None

    class Impl(caching.CompileResultCacheImpl):
        _locator_classes = [Locator]

    class PrebuiltCache(caching.FunctionCache):
        _impl_class = Impl

        def load_overload(self, sig: Any, target_context: Any) -> Any:
            try:
                return super().load_overload(sig, target_context)  # type: ignore[no-untyped-call]
            except Exception:  # an unreadable entry (or one numba cannot key): compile instead
                return None

        def save_overload(self, sig: Any, data: Any) -> None:
            if not writable:
                return
            try:
                super().save_overload(sig, data)  # type: ignore[no-untyped-call]
            except Exception:  # e.g. an uncachable closure: compiled in memory, not cached
                return

    return PrebuiltCache
