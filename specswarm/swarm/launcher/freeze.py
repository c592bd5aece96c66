"""Imported last by the fork server (:data:`~specswarm.swarm.launcher.forked.PRELOAD`): moves every
object imported so far out of the garbage collector's reach (:func:`gc.freeze`), so that a
collection in a forked peer does not write to, and so copy, the pages it shares with the server."""

import gc

gc.collect()
gc.freeze()
