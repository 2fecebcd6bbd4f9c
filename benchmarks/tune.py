"""``python -m benchmarks.tune``: variants of the ranking scored on REALTALK's tuning chats
(``benchmarks/fitting/tune.py``)."""

from benchmarks.fitting.tune import main

if __name__ == "__main__":
    raise SystemExit(main())
