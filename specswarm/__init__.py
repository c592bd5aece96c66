"""specswarm: plan big goals with a swarm of local-LLM agents on libp2p, with no one in charge."""

__version__ = "0.1.0"
