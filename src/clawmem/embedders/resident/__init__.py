"""The resident embedder: one model process shared by every clawmem process of the user.

``client.py`` is a process's side (``Borrowed``: a vector from a watcher, else the resident
embedder, started if none runs, else the NumPy query path, else the model loaded here);
``server.py`` is the embedder's own process (``python -m clawmem.embedders.resident.server``);
``protocol.py`` is what goes between them, and between a process and a watcher: one JSON line over a
Unix socket each way.
"""
