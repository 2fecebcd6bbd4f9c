"""``python -m benchmarks.relevance``: recall's relevance models fitted on tuning data
(``benchmarks/fitting/relevance.py``)."""

from benchmarks.fitting.relevance import main

if __name__ == "__main__":
    raise SystemExit(main())
