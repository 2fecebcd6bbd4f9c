"""Files on disk: atomic replacement, the write lock, editing TOML in place."""
