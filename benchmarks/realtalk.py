"""``python -m benchmarks.realtalk``: the REALTALK suite alone (``benchmarks/suites/realtalk.py``)."""

from benchmarks.suites.realtalk import main

if __name__ == "__main__":
    raise SystemExit(main())
