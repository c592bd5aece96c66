"""The runtime: one peer (node, anti-entropy, roles), the peer process and the launcher."""
