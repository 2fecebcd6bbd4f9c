"""CLI command groups that live in their own modules.

Each module here exposes ``register(app)``; ``clawmem.cli`` calls it for every module at start-up.
Keep heavy imports inside the command functions so ``clawmem --help`` stays fast.
"""
