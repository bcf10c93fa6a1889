"""Shared by every test under tests/python: the order they run in, and one compilation cache for
the run. The few that take longest start first, so that under pytest-xdist (make test runs
tests/python in several processes) they overlap the many short ones instead of running alone at
the end. The processes share jax's persistent compilation cache in a folder made for the run and
removed after it: a program one process compiled, another loads instead of compiling it again
(most of the tests' time is XLA compiling small programs). Which tests run, and what each checks,
is unchanged."""
import os
import shutil
import tempfile

# (file, test name without parameters), longest first: the wheel's build, then the tests that
# start processes of their own or solve the largest matrices.
FIRST = [
    ("test_package.py", "test_pip_install"),
    ("test_jax_lu.py", "test_many_panels_per_device_in_a_fresh_process"),
    ("test_jax_qr.py", "test_many_panels_per_device_in_a_fresh_process"),
    ("test_jax_processes.py", "test_mesh_with_devices_of_another_process_is_refused"),
    ("test_setup.py", "test_waits_for_the_dpkg_lock_then_installs"),
    ("test_jax_api.py", "test_repeated_potrs_keeps_memory_and_descriptors_flat"),
    ("test_jax_lu.py", "test_matches_jax_lu_solve"),
]


def pytest_collection_modifyitems(config, items):
    def rank(item):
        key = (item.path.name, item.originalname)
        return FIRST.index(key) if key in FIRST else len(FIRST)

    items.sort(key=rank)  # stable: the others keep their order


CACHE = {"JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
         "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "0"}


def pytest_configure(config):
    """In the first pytest process (xdist's workers inherit its environment; a cache the caller
    named is left alone): the cache folder, every program kept however small."""
    if "PYTEST_XDIST_WORKER" in os.environ or "JAX_COMPILATION_CACHE_DIR" in os.environ:
        return
    config.jax_cache = tempfile.mkdtemp(prefix="tessera-jax-cache-")
    os.environ.update(CACHE, JAX_COMPILATION_CACHE_DIR=config.jax_cache)


def pytest_unconfigure(config):
    if getattr(config, "jax_cache", None):
        shutil.rmtree(config.jax_cache, ignore_errors=True)
