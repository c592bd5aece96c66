"""The plan: a pure fold of the event set, its views, and the critics that judge splits."""
