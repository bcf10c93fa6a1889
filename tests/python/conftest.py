"""Shared by every test under tests/python: the order they run in. The few that take longest
start first, so that under pytest-xdist (make test runs tests/python in several processes) they
overlap the many short ones instead of running alone at the end. Which tests run, and what each
checks, is unchanged."""

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
