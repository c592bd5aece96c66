"""specswarm: plan big goals with a swarm of local-LLM agents on libp2p, with no one in charge.

This file pulls together the public API, following the data flow::

    spec  ->  events  ->  fold  ->  plan  ->  render
    (load_spec)  (make_event, check_event)  (fold, FoldState)  (Plan)  (render_plan)

Names load on first use (a peer process should not pay for what it does not touch);
the implementation lives in the subpackages, one job per module:
:mod:`specswarm.spec`, :mod:`specswarm.protocol`, :mod:`specswarm.plan`,
:mod:`specswarm.render`, :mod:`specswarm.model`, :mod:`specswarm.transport`,
:mod:`specswarm.swarm`, :mod:`specswarm.cli`, :mod:`specswarm.testing`.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from specswarm.errors import EventError as EventError
    from specswarm.errors import ModelError as ModelError
    from specswarm.errors import RunError as RunError
    from specswarm.errors import SpecError as SpecError
    from specswarm.errors import SpecProblem as SpecProblem
    from specswarm.errors import SpecSwarmError as SpecSwarmError
    from specswarm.errors import TransportError as TransportError
    from specswarm.model import Generation as Generation
    from specswarm.model import GenerationRequest as GenerationRequest
    from specswarm.model import Model as Model
    from specswarm.model import load_model as load_model
    from specswarm.plan import FoldState as FoldState
    from specswarm.plan import NodeView as NodeView
    from specswarm.plan import Plan as Plan
    from specswarm.plan.fold import fold as fold
    from specswarm.protocol.bodies import Body as Body
    from specswarm.protocol.events import Event as Event
    from specswarm.protocol.events import check_event as check_event
    from specswarm.protocol.events import make_event as make_event
    from specswarm.protocol.events import make_run_event as make_run_event
    from specswarm.protocol.events import read_event_log as read_event_log
    from specswarm.protocol.events import write_event_log as write_event_log
    from specswarm.protocol.identity import Identity as Identity
    from specswarm.render import render_plan as render_plan
    from specswarm.spec import GoalSpec as GoalSpec
    from specswarm.spec import load_spec as load_spec
    from specswarm.spec import spec_from_json as spec_from_json
    from specswarm.spec import spec_from_mapping as spec_from_mapping

_WHERE = {
    "specswarm.errors": (
        "EventError",
        "ModelError",
        "RunError",
        "SpecError",
        "SpecProblem",
        "SpecSwarmError",
        "TransportError",
    ),
    "specswarm.spec": ("GoalSpec", "load_spec", "spec_from_json", "spec_from_mapping"),
    "specswarm.protocol.bodies": ("Body",),
    "specswarm.protocol.events": (
        "Event",
        "check_event",
        "make_event",
        "make_run_event",
        "read_event_log",
        "write_event_log",
    ),
    "specswarm.protocol.identity": ("Identity",),
    "specswarm.plan": ("FoldState", "NodeView", "Plan"),
    "specswarm.plan.fold": ("fold",),
    "specswarm.render": ("render_plan",),
    "specswarm.model": ("Generation", "GenerationRequest", "Model", "load_model"),
}
_MODULE_OF = {name: module for module, names in _WHERE.items() for name in names}

__all__ = sorted(_MODULE_OF)


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'specswarm' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
