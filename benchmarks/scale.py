"""``python -m benchmarks.scale``: clawmem at scale, synthetic workspaces up to 1M units
(``benchmarks/suites/scale.py``)."""

from benchmarks.suites.scale import main

if __name__ == "__main__":
    main()
