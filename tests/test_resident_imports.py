"""The resident embedder's tick and its first search import the vectors' module on two threads.
Until the search's import ends, ``sys.modules`` holds the module half made; the tick took it from
there, found no ``drop_gone`` and the AttributeError ended the embedder (the first search's
answer never came: a flaky CI failure). Run in a fresh interpreter, with the module's import held
half way on purpose."""

from __future__ import annotations

import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent(
    """
    import importlib.abc, importlib.util, sys, threading, time

    NAME = "clawmem.store.vector_matrix"
    go = threading.Event()

    class Held(importlib.abc.Loader):
        # Executes the real module only once ``go`` is set: the module is in sys.modules,
        # half made, meanwhile (as while another thread's import runs its code).
        def __init__(self, real):
            self.real = real

        def create_module(self, spec):
            return self.real.create_module(spec)

        def exec_module(self, module):
            go.wait(30)
            self.real.exec_module(module)

    class Finder(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name != NAME:
                return None
            sys.meta_path.remove(self)
            spec = importlib.util.find_spec(name)
            spec.loader = Held(spec.loader)
            return spec

    from clawmem.embedders.resident import server

    assert NAME not in sys.modules
    sys.meta_path.insert(0, Finder())
    searcher = threading.Thread(target=importlib.import_module, args=(NAME,))
    searcher.start()
    while NAME not in sys.modules:
        time.sleep(0.01)
    errors = []

    def tick():
        try:
            server._drop_gone_indexes()
        except Exception as exc:
            errors.append(repr(exc))

    ticker = threading.Thread(target=tick)
    ticker.start()
    ticker.join(0.5)
    waited = ticker.is_alive()  # the tick waits for the import under way
    go.set()
    searcher.join(30)
    ticker.join(30)
    print(errors, waited)
    sys.exit(1 if errors or not waited else 0)
    """
)


def test_the_tick_waits_for_the_first_search_to_import_the_vectors_module():
    r = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
