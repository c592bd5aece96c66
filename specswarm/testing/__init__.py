"""Test support, like ``trio.testing``: a whole swarm in one process, and synthetic signed events."""
