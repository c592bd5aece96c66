"""Imported last by the fork server (:data:`~specswarm.swarm.launcher.forked.PRELOAD`): moves every
object imported so far out of the garbage collector's reach (:func:`gc.freeze`), so that a
collection in a forked peer does not write to, and so copy, the pages it shares with the server.
Also notes the server's pid: a forked peer's parent while the server lives."""

import gc
import os

SERVER_PID = os.getpid()
"""The fork server's pid (this module runs in the server; a forked peer inherits the value)."""

gc.collect()
gc.freeze()
