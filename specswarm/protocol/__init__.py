"""The protocol: canonical bytes, identities, signed events and their typed bodies."""
