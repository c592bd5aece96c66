"""The values of a goal spec: frozen dataclasses whose defaults are the only defaults.

Every field's default is written here once; ``schemas/goal.schema.json`` repeats
them as ``default`` keywords for editors, and a test checks that the two agree.
``GoalSpec.to_json()`` gives the normalized dict that travels in the ``run``
event (every default filled in, prompt templates inlined as text).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from specswarm.errors import SpecProblem
from specswarm.spec._yaml import DocPath
from specswarm.spec.model_values import OMITTED as OMITTED
from specswarm.spec.model_values import ModelSettings as ModelSettings
from specswarm.spec.model_values import TokenLimits as TokenLimits
from specswarm.spec.quorum import Quorum, quorum_size
from specswarm.spec.wording import Where

TASKS = ("decompose", "refine", "score", "execute", "summarize")
"""The model tasks; each has a prompt template and a token limit."""
LATER_TASKS = ("summarize",)
"""Tasks added after runs were first recorded: a run event's spec may lack their templates."""
DEFAULT_STRATEGIES = ("by parts", "by sequence", "by theme")
"""Decomposer strategies used when a spec declares none."""
DEFAULT_LENSES = ("feasibility", "coverage", "specificity")
"""Scorer lenses used when a spec declares none (see :mod:`specswarm.critics.lenses`)."""
SCHEMA_NAME = "goal.schema.json"

"""``"majority"``, ``"all"``, a count k >= 1, or a fraction in (0, 1] of the scorers."""

# --------------------------------------------------------------------------- value objects


@dataclass(frozen=True)
class Constraint:
    """A declared constraint that scorers check mechanically on a proposed split."""

    kind: Literal["sum", "mention", "forbid"]
    """sum: the children's facts ``field`` add up to ``total``; mention: the split names
    every term; forbid: no child names any term."""
    field: str | None = None
    """sum only: the integer fact each child declares (e.g. ``days``)."""
    total: float | None = None
    """sum only: what the children's facts must add up to (kept as written: int or float)."""
    terms: tuple[str, ...] = ()
    """mention / forbid only: the words to look for (case-insensitive)."""
    applies_to: Literal["root", "all"] = "root"
    """``root``: only the split of the root node; ``all``: every split."""

    def to_json(self) -> dict[str, Any]:
        if self.kind == "sum":
            return {
                "kind": self.kind,
                "field": self.field,
                "total": self.total,
                "applies_to": self.applies_to,
            }
        return {"kind": self.kind, "terms": list(self.terms), "applies_to": self.applies_to}


@dataclass(frozen=True)
class Role:
    """How many peers take a role."""

    count: int = 1
    """Number of peers (the launcher starts one process each)."""
    model: ModelSettings | None = field(default=None, metadata=OMITTED)
    """The role's own model: the spec's ``model``, fields replaced by the role's (None: none)."""


@dataclass(frozen=True)
class DecomposerRole:
    """The decomposers: how many, and the strategies they split by."""

    count: int
    """Number of decomposer peers."""
    strategies: tuple[str, ...] = DEFAULT_STRATEGIES
    """Splitting strategies; decomposer i uses ``strategies[i % len(strategies)]``."""
    model: ModelSettings | None = field(default=None, metadata=OMITTED)
    """The decomposers' own model (None: the spec's ``model``); see :class:`Role`."""


@dataclass(frozen=True)
class ScorerRole:
    """The scorers: how many, and the lenses they review through."""

    count: int
    """Number of scorer peers (n in the quorum rule)."""
    lenses: tuple[str, ...] = DEFAULT_LENSES
    """Review lenses; scorer i uses ``lenses[i % len(lenses)]``."""
    model: ModelSettings | None = field(default=None, metadata=OMITTED)
    """The scorers' own model (None: the spec's ``model``); see :class:`Role`."""


@dataclass(frozen=True)
class Roles:
    """Who takes part in a run."""

    decomposer: DecomposerRole
    """Peers that propose splits."""
    scorer: ScorerRole
    """Peers that vote on splits; their count is n in the quorum rule."""
    executor: Role
    """Peers that claim leaves and write their content."""
    observer: Role = Role(1)
    """Peers that only watch and render."""


@dataclass(frozen=True)
class Prompts:
    """The Jinja2 prompt templates, as template *text*."""

    decompose: str
    """Asks a decomposer to split a node."""
    refine: str
    """Asks a decomposer to revise a rejected split, given the critiques."""
    score: str
    """Asks a scorer's model to rate a split."""
    execute: str
    """Asks an executor to write the content of a leaf."""
    summarize: str = field(default="", metadata=OMITTED)
    """Asks an executor to summarize a split node from its children (``review.summaries``);
    empty only in the spec of a run made before summaries (its run event has none)."""


@dataclass(frozen=True)
class TreeLimits:
    """Limits on the shape of the plan tree."""

    max_depth: int = 2
    """Depth at which every node is a leaf (the root has depth 0), 1..6."""
    min_children: int = 2
    """Fewest children a split may have."""
    max_children: int = 6
    """Most children a split may have."""
    max_revisions: int = 2
    """How often one decomposer may revise its rejected split of a node."""
    approve_threshold: float = 60.0
    """Combined score (0..100) at or above which a scorer approves."""
    select: Literal["best", "first"] = "best"
    """Which approved split of a node wins: ``best``, by the scorers' ranked ballots (Borda), or
    ``first``, the first to reach quorum (the rule of runs made before ballots)."""
    ballot_wait: float = 600.0
    """Seconds a scorer waits at most, once a split of a node is approved, for the node's live
    rival decomposers and the live scorers' votes before it casts its ballot anyway."""


@dataclass(frozen=True)
class Review:
    """What the scorers judge besides splits."""

    results: bool = True
    """Leaf results go through the board: the scorers vote on each one, a quorum of approvals
    accepts it, a rejected one is written again (up to ``revisions`` times, then the best
    rejected one counts). False: the first result under the winning claim counts unjudged (the
    rule of runs made before results were judged)."""
    revisions: int = 1
    """Times a rejected leaf result is written again (a run event made before this field used
    ``tree.max_revisions``). Each is a model call on the run's critical path: leaves are judged
    in tree order."""
    rivals: int = 1
    """Executors besides the holder that write a rejected leaf result again, each its own way
    (another sampling), where that many are live: the board's best revision counts
    (:mod:`specswarm.plan.results`). They write while the holder does, on generation slots that
    would wait otherwise: leaves are judged one at a time. 0: the holder alone (the rule of runs
    made before rivals)."""
    summaries: bool = True
    """Every split node gets a short summary, written by an executor once its children are done
    (bottom-up: the root's is the plan's overview); the plan is complete only with them. False:
    no summaries (the rule of runs made before them)."""


@dataclass(frozen=True)
class NetworkSettings:
    """How peers find each other."""

    listen: str = "/ip4/127.0.0.1/tcp/0"
    """Where launched peers listen (port 0: a free port each; P: ports P, P+1, ...)."""
    bootstrap: tuple[str, ...] = ()
    """Peer addresses every launched peer also dials."""
    mdns: bool = False
    """Launched peers also discover peers on the LAN with mDNS."""
    topic: str | None = None
    """GossipSub topic; None derives it from the run id."""


@dataclass(frozen=True)
class AccessSettings:
    """Who may join the run."""

    mode: Literal["launcher", "open", "allowlist", "secret"] = "launcher"
    """launcher (peers the launcher admits), open, allowlist (``peers``), secret (``secret_env``)."""
    peers: tuple[str, ...] = ()
    """libp2p peer ids admitted in allowlist mode."""
    secret_env: str = "SPECSWARM_SECRET"
    """Environment variable that holds the shared secret in secret mode."""


@dataclass(frozen=True)
class Budget:
    """Time limits, in seconds."""

    seconds: float = 900.0
    """Give up on the run after this long."""
    settle_seconds: float = 1.0
    """How long an executor waits after claiming a leaf before working on it, at most: once its
    model has answered, 5 % of what its latest model task took (at least 0.2 s); a swarm of more
    peers than announce at once waits its gossip round."""
    claim_timeout: float = 180.0
    """After this long without a result, a claim may be superseded."""


@dataclass(frozen=True)
class OutputSettings:
    """How the converged plan is rendered."""

    format: Literal["markdown", "json", "spec"] = "markdown"
    """markdown, json (plan.schema.json) or spec (a software specification)."""
    template: Path | None = None
    """A Jinja2 template (absolute) used instead of the built-in one; None for the built-in."""


LAUNCH_ORDER = ("observer", "scorer", "executor", "decomposer")
"""The order in which the launcher starts roles: listeners before talkers."""


@dataclass(frozen=True)
class Seat:
    """One declared peer of a run: its role, its index within the role, its strategy."""

    role: str
    """decomposer | scorer | executor | observer."""
    index: int
    """0-based index within the role (``scorer-1`` is index 1)."""
    strategy: str | None
    """The decomposer's strategy, the scorer's lens; None for other roles."""

    @property
    def name(self) -> str:
        return f"{self.role}-{self.index}"


@dataclass(frozen=True, kw_only=True)
class GoalSpec:
    """A validated goal spec. Build it with :func:`~specswarm.spec.load_spec`,
    :func:`~specswarm.spec.spec_from_json` or :func:`~specswarm.spec.spec_from_mapping`."""

    version: int = 1
    """Spec format version (always 1)."""
    name: str
    """Short name of the run (default: the spec file's stem)."""
    goal: str
    """The goal: the title of the root node."""
    context: str = ""
    """Background that every prompt sees."""
    language: str | None = field(default=None, metadata=OMITTED)
    """The language the plan is written in (a code such as ``hi`` or a name); None: the goal's
    own (see :mod:`specswarm.spec.language`)."""
    constraints: tuple[Constraint, ...] = ()
    """Declared constraints, checked mechanically by scorers."""
    quorum: Quorum = "majority"
    """The quorum rule as written; see :meth:`quorum_size`."""
    roles: Roles
    """Role counts and decomposer strategies."""
    prompts: Prompts
    """Prompt template text for each task."""
    tree: TreeLimits = TreeLimits()
    """Tree shape limits."""
    review: Review = Review()
    """What the scorers judge besides splits (leaf results)."""
    model: ModelSettings = ModelSettings()
    """The local model."""
    network: NetworkSettings = NetworkSettings()
    """Listen address, bootstrap peers, mDNS, topic."""
    access: AccessSettings = AccessSettings()
    """Who may join."""
    budget: Budget = Budget()
    """Time limits."""
    output: OutputSettings = OutputSettings()
    """Output format and template."""
    cache: Path | None = field(default=None, compare=False)
    """The answer cache directory (absolute); local: it does not travel in the run event."""
    source: Path | None = field(default=None, compare=False)
    """The file the spec was loaded from; None when it came from the swarm."""
    where: Where | None = field(default=None, compare=False, repr=False)
    """Where each value sits in the source file (for problems found after loading)."""

    def to_json(self) -> dict[str, Any]:
        """The normalized dict that travels in the run event (defaults filled, prompts inlined)."""
        return {
            f.name: _json(getattr(self, f.name))
            for f in dataclasses.fields(self)
            if f.compare and not (f.metadata.get("omitted") and getattr(self, f.name) == f.default)
        }

    def model_for(self, role: str) -> ModelSettings:
        """The model settings ``role``'s peers run: the role's own section, else ``model``."""
        own: ModelSettings | None = getattr(getattr(self.roles, role, None), "model", None)
        return own if own is not None else self.model

    def model_path(self, role: str | None, field: str | None = None) -> str:
        """Where ``role``'s model settings (or their ``field``) sit in the spec: in the role's own
        ``roles.ROLE.model`` when it has one and (for a field) it differs there, else in ``model``
        (always for ``role`` None)."""
        own = getattr(getattr(self.roles, role, None), "model", None) if role else None
        inherited = field is not None and getattr(own, field, None) == getattr(self.model, field, None)
        section = f"roles.{role}.model" if own is not None and not inherited else "model"
        return f"{section}.{field}" if field else section

    def quorum_size(self) -> int:
        """How many approving scorers accept a split (n = ``roles.scorer.count``)."""
        return quorum_size(self.quorum, self.roles.scorer.count)

    def strategy_for(self, index: int) -> str:
        """The strategy of decomposer number ``index`` (0-based; strategies repeat)."""
        strategies = self.roles.decomposer.strategies
        return strategies[index % len(strategies)]

    def lens_for(self, index: int) -> str:
        """The lens of scorer number ``index`` (0-based; lenses repeat)."""
        lenses = self.roles.scorer.lenses
        return lenses[index % len(lenses)]

    def roster(self, order: Sequence[str] = LAUNCH_ORDER) -> list[Seat]:
        """Every declared peer, role by role in ``order``: decomposer ``i`` gets
        :meth:`strategy_for` ``(i)``, scorer ``i`` :meth:`lens_for` ``(i)``, others nothing."""
        seats: list[Seat] = []
        for role in order:
            for index in range(getattr(self.roles, role).count):
                strategy = (
                    self.strategy_for(index)
                    if role == "decomposer"
                    else self.lens_for(index)
                    if role == "scorer"
                    else None
                )
                seats.append(Seat(role, index, strategy))
        return seats

    def problem(self, path: str, message: str) -> SpecProblem:
        """A located problem with the value at dotted ``path`` (e.g. ``roles.observer.count``),
        found after loading: the line comes from the file the spec was read from."""
        steps: DocPath = tuple(int(p) if p.isdigit() else p for p in path.split("."))
        where = self.where or Where(str(self.source) if self.source else "<run event>")
        return where.at(steps, message, mode="key")


def _json(value: Any) -> Any:
    if hasattr(value, "to_json"):
        return value.to_json()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: _json(getattr(value, f.name))
            for f in dataclasses.fields(value)
            if not (f.metadata.get("omitted") and getattr(value, f.name) == f.default)
        }
    if isinstance(value, tuple):
        return [_json(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    return value
