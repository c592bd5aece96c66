"""Goal specs: a YAML file in, a validated, frozen :class:`GoalSpec` out."""

from specswarm.spec.load import *  # noqa: F403
from specswarm.spec.load import __all__ as __all__
