"""The soak: clawmem under abuse, seeded and repeatable (``python -m benchmarks.soak``).

Four parts share the time given with ``--minutes``: SIGKILLs at random moments of every writing
command (``kills.py``), many writers and readers at once (``concurrency.py``), hypothesis-driven
bad input (``fuzz.py``) and scarce resources: a full disk, a read-only index folder, a database
held by another process (``resources.py``). Every part returns figures; ``__main__`` prints them
and exits non-zero when a figure that must be zero is not. docs/reliability.md shows a real run.
"""
