"""clawmem's own benchmarks: recall quality (SciFact, an agent-memory question set) and speed.

Run from the repository root:

    python -m benchmarks --quick      # < 5 minutes: every table, on subsets
    python -m benchmarks --full       # SciFact in full, synthetic workspaces of 1k/10k/100k chunks

See benchmarks/README.md and docs/benchmarks.md.
"""
