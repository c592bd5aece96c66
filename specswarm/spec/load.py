"""Goal specs: a YAML file in, a validated, frozen :class:`GoalSpec` out.

``load_spec(path)`` reads the YAML a user writes (see ``goals/`` and
``schemas/goal.schema.json``), checks it against the schema and then for what
a schema cannot say (a quorum larger than the scorers, template files that are
missing or do not parse, ...), and raises one :class:`~specswarm.errors.SpecError`
listing *every* problem as ``FILE:LINE: field.path: what is wrong (expected ...)``.

``GoalSpec.to_json()`` gives the normalized dict of docs/ARCHITECTURE.md (all
defaults filled in, prompt templates inlined as text) that travels in the
``run`` event; ``spec_from_json()`` is its inverse, for peers that learn the
spec from the swarm, and validates just as strictly.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Literal, TypeVar, get_origin, get_type_hints

import jinja2
import yaml
from jinja2.sandbox import SandboxedEnvironment
from jsonschema import Draft202012Validator, ValidationError

from specswarm import resources
from specswarm.errors import SpecError, SpecProblem
from specswarm.spec._yaml import DocPath, Located, load_located

TASKS = ("decompose", "refine", "score", "execute")
"""The model tasks; each has a prompt template and a token limit."""
DEFAULT_STRATEGIES = ("by parts", "by sequence", "by theme")
"""Decomposer strategies used when a spec declares none."""
SCHEMA_NAME = "goal.schema.json"

Quorum = str | int | float
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


@dataclass(frozen=True)
class DecomposerRole:
    """The decomposers: how many, and the strategies they split by."""

    count: int
    """Number of decomposer peers."""
    strategies: tuple[str, ...] = DEFAULT_STRATEGIES
    """Splitting strategies; decomposer i uses ``strategies[i % len(strategies)]``."""


@dataclass(frozen=True)
class Roles:
    """Who takes part in a run."""

    decomposer: DecomposerRole
    """Peers that propose splits."""
    scorer: Role
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


@dataclass(frozen=True)
class TokenLimits:
    """Most tokens the model may generate, per task."""

    decompose: int = 400
    """Per split."""
    refine: int = 400
    """Per revised split."""
    score: int = 120
    """Per rating."""
    execute: int = 300
    """Per leaf."""


@dataclass(frozen=True)
class ModelSettings:
    """The local model every peer runs."""

    backend: Literal["gpt4all", "replay", "scripted", "llama"] = "gpt4all"
    """gpt4all (the embedded model), replay (a cassette), scripted (canned), llama."""
    file: Path | None = None
    """A GGUF file (absolute); None for the embedded default model."""
    name: str | None = None
    """A gpt4all catalogue name, used when ``file`` is None."""
    temperature: float = 0.0
    """Sampling temperature."""
    top_k: int = 1
    """Top-k sampling; 1 is greedy."""
    seed: int = 42
    """Random seed."""
    repeat_penalty: float = 1.1
    """Penalty on repeated tokens (stops small models from looping)."""
    threads: int = 2
    """CPU threads per model process."""
    cassette: Path | None = None
    """Recorded outputs (absolute): replayed by ``replay``, recorded into by real backends."""
    max_tokens: TokenLimits = TokenLimits()
    """Generation limits per task."""
    model_weight: float = 0.2
    """Weight (0..1) of the model's rating in a scorer's score; the rest is mechanical."""


@dataclass(frozen=True)
class NetworkSettings:
    """How peers find each other."""

    listen: str = "/ip4/127.0.0.1/tcp/0"
    """Listen multiaddr."""
    bootstrap: tuple[str, ...] = ()
    """Multiaddrs to dial first."""
    mdns: bool = False
    """Discover peers on the LAN with mDNS."""
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
    """How long an executor waits after claiming a leaf before working on it."""
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
    """The decomposer's strategy; None for other roles."""

    @property
    def name(self) -> str:
        return f"{self.role}-{self.index}"


@dataclass(frozen=True)
class GoalSpec:
    """A validated goal spec. Build it with :func:`load_spec` or :func:`spec_from_json`."""

    version: int
    """Spec format version (always 1)."""
    name: str
    """Short name of the run (default: the spec file's stem)."""
    goal: str
    """The goal: the title of the root node."""
    context: str
    """Background that every prompt sees."""
    constraints: tuple[Constraint, ...]
    """Declared constraints, checked mechanically by scorers."""
    quorum: Quorum
    """The quorum rule as written; see :meth:`quorum_size`."""
    roles: Roles
    """Role counts and decomposer strategies."""
    prompts: Prompts
    """Prompt template text for each task."""
    tree: TreeLimits
    """Tree shape limits."""
    model: ModelSettings
    """The local model."""
    network: NetworkSettings
    """Listen address, bootstrap peers, mDNS, topic."""
    access: AccessSettings
    """Who may join."""
    budget: Budget
    """Time limits."""
    output: OutputSettings
    """Output format and template."""
    source: Path | None = field(default=None, compare=False)
    """The file the spec was loaded from; None when it came from the swarm."""
    where: _Where | None = field(default=None, compare=False, repr=False)
    """Where each value sits in the source file (for problems found after loading)."""

    def to_json(self) -> dict[str, Any]:
        """The normalized dict of docs/ARCHITECTURE.md (defaults filled, prompts inlined)."""
        return {f.name: _json(getattr(self, f.name)) for f in dataclasses.fields(self) if f.name != "source"}

    def quorum_size(self) -> int:
        """How many approving scorers accept a split (n = ``roles.scorer.count``)."""
        return quorum_size(self.quorum, self.roles.scorer.count)

    def strategy_for(self, index: int) -> str:
        """The strategy of decomposer number ``index`` (0-based; strategies repeat)."""
        strategies = self.roles.decomposer.strategies
        return strategies[index % len(strategies)]

    def roster(self, order: Sequence[str] = LAUNCH_ORDER) -> list[Seat]:
        """Every declared peer, role by role in ``order``: decomposer ``i`` gets
        :meth:`strategy_for` ``(i)``, other roles no strategy."""
        seats: list[Seat] = []
        for role in order:
            for index in range(getattr(self.roles, role).count):
                strategy = self.strategy_for(index) if role == "decomposer" else None
                seats.append(Seat(role, index, strategy))
        return seats

    def problem(self, path: str, message: str) -> SpecProblem:
        """A located problem with the value at dotted ``path`` (e.g. ``roles.observer.count``),
        found after loading: the line comes from the file the spec was read from."""
        steps: DocPath = tuple(int(p) if p.isdigit() else p for p in path.split("."))
        where = self.where or _Where(str(self.source) if self.source else "<run event>")
        return where.at(steps, message, mode="key")


def quorum_size(quorum: Quorum, scorers: int) -> int:
    """majority = n//2+1, all = n, an int k = k, a fraction f = ceil(f*n).

    The fold (:mod:`specswarm.plan.fold`) owns this rule; this is the same function.
    """
    from specswarm.plan.fold import quorum_size as fold_quorum_size

    return fold_quorum_size(quorum, scorers)


def _json(value: Any) -> Any:
    if hasattr(value, "to_json"):
        return value.to_json()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _json(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple):
        return [_json(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    return value


# --------------------------------------------------------------------------- public loaders


def load_spec(path: str | os.PathLike[str]) -> GoalSpec:
    """Load and validate a YAML goal spec; raise SpecError listing every problem."""
    label = os.fspath(path)
    source = Path(path)
    try:
        raw = source.read_bytes()
        text = raw.decode("utf-8-sig")
    except OSError as exc:
        raise SpecError([_whole(label, f"cannot read the spec file: {exc.strerror or exc}")]) from exc
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise SpecError(
            [_whole(label, f"byte {raw[exc.start]:#04x} is not UTF-8 (expected a UTF-8 text file)", line)]
        ) from exc
    try:
        located = load_located(text)
    except yaml.YAMLError as exc:
        raise SpecError([_yaml_problem(label, exc)]) from exc
    if located is None:
        raise SpecError(
            [_whole(label, "the file is empty (expected a mapping with at least 'goal' and 'roles')")]
        )
    where = _Where(label, located)
    data = located.data
    if not isinstance(data, dict):
        raise SpecError(
            [
                where.at(
                    (),
                    f"the top level is {_kind(data)}, not a mapping "
                    "(expected fields such as 'goal:' and 'roles:')",
                )
            ]
        )

    problems = [
        where.at(d.path, f"duplicate key {d.path[-1]!r} (first defined on line {d.first_line})", line=d.line)
        for d in located.duplicates
    ]
    problems += _schema_problems(data, where)
    problems += _semantic_problems(data, where)
    base = source.resolve().parent
    prompts, prompt_problems = _prompts_from_files(data, where, base)
    problems += prompt_problems
    problems += _file_problems(data, where, base)
    if problems:
        raise SpecError(_unique(problems))
    return _build(
        data,
        default_name=source.stem,
        prompts=prompts,
        where=where,
        resolve=lambda p: (base / Path(p).expanduser()).resolve(),
        source=source,
    )


def spec_from_json(d: Mapping[str, Any], *, source: str = "<run event>") -> GoalSpec:
    """Rebuild a GoalSpec from ``GoalSpec.to_json()`` output; raise SpecError if it is invalid.

    File paths are taken as they are (they name files on the machine that
    started the run) and not checked here; ``source`` names the origin in messages.
    """
    where = _Where(source)
    if not isinstance(d, Mapping):
        raise SpecError([where.at((), f"the spec is {_kind(d)}, not a mapping")])
    data = dict(d)
    problems = _schema_problems(data, where) + _semantic_problems(data, where)
    if "name" not in data:
        problems.append(where.at((), "missing required field 'name'", mode="parent"))
    prompts, prompt_problems = _prompts_from_text(data, where)
    problems += prompt_problems
    if problems:
        raise SpecError(_unique(problems))
    return _build(data, default_name="", prompts=prompts, resolve=lambda p: Path(p), source=None)


# --------------------------------------------------------------------------- building


T = TypeVar("T")


def _make(cls: type[T], raw: Mapping[str, Any], **given: Any) -> T:
    """Build dataclass ``cls`` from validated ``raw``, coercing to the declared scalar types."""
    kwargs = dict(given)
    for name, hint in get_type_hints(cls).items():
        if name in kwargs or name not in raw:
            continue
        value = raw[name]
        if hint is float:
            value = float(value)
        elif hint is int:
            value = int(value)  # YAML/JSON 3.0 is a valid integer for the schema
        elif get_origin(hint) is tuple:
            value = tuple(value)
        kwargs[name] = value
    return cls(**kwargs)


def _normal_quorum(quorum: Any) -> Any:
    """A float quorum above 1 can only be a whole count (the schema saw to that)."""
    if isinstance(quorum, float) and quorum > 1 and quorum.is_integer():
        return int(quorum)
    return quorum


def _build(
    data: Mapping[str, Any],
    *,
    default_name: str,
    prompts: Prompts,
    resolve: Callable[[str], Path],
    source: Path | None,
    where: _Where | None = None,
) -> GoalSpec:
    roles = data["roles"]
    model = data.get("model", {})

    def path_or_none(section: Mapping[str, Any], key: str) -> Path | None:
        value = section.get(key)
        return resolve(value) if value else None

    output = data.get("output", {})
    return GoalSpec(
        version=1,
        name=data.get("name", default_name),
        goal=data["goal"],
        context=data.get("context", ""),
        constraints=tuple(_make(Constraint, c) for c in data.get("constraints", [])),
        quorum=_normal_quorum(data.get("quorum", "majority")),
        roles=Roles(
            decomposer=_make(DecomposerRole, roles["decomposer"]),
            scorer=_make(Role, roles["scorer"]),
            executor=_make(Role, roles["executor"]),
            observer=_make(Role, roles.get("observer", {})),
        ),
        prompts=prompts,
        tree=_make(TreeLimits, data.get("tree", {})),
        model=_make(
            ModelSettings,
            model,
            max_tokens=_make(TokenLimits, model.get("max_tokens", {})),
            file=path_or_none(model, "file"),
            cassette=path_or_none(model, "cassette"),
        ),
        network=_make(NetworkSettings, data.get("network", {})),
        access=_make(AccessSettings, data.get("access", {})),
        budget=_make(Budget, data.get("budget", {})),
        output=_make(OutputSettings, output, template=path_or_none(output, "template")),
        source=source,
        where=where,
    )


# --------------------------------------------------------------------------- locating problems


@dataclass
class _Where:
    """Turns a document path into a SpecProblem with the best line we know."""

    file: str
    located: Located | None = None

    def line(self, path: DocPath, mode: str = "value") -> int:
        """The line of the value at ``path`` (mode "value"), of its key ("key"), or of the
        key that holds the mapping ``path`` ("parent", for a field missing from it).

        Whatever is absent is placed at the key of its nearest present ancestor.
        """
        loc = self.located
        if loc is None:
            return 0
        if mode == "key" and path in loc.key_lines:
            return loc.key_lines[path]
        if path in loc.value_lines and (mode != "parent" or path not in loc.key_lines):
            return loc.value_lines[path]  # (a list item has no key: its own line)
        for end in range(len(path) if mode == "parent" else len(path) - 1, 0, -1):
            if path[:end] in loc.key_lines:
                return loc.key_lines[path[:end]]
        return loc.value_lines.get((), 1)

    def at(self, path: DocPath, message: str, *, mode: str = "value", line: int | None = None) -> SpecProblem:
        return SpecProblem(self.file, self.line(path, mode) if line is None else line, _dotted(path), message)


def _dotted(path: Sequence[Any]) -> str:
    out = ""
    for step in path:
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else str(step))
    return out or "(root)"


def _unique(problems: list[SpecProblem]) -> list[SpecProblem]:
    return list(dict.fromkeys(problems))


def _kind(value: Any) -> str:
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool | int | float):
        return "a number" if not isinstance(value, bool) else "a boolean"
    return f"a {type(value).__name__}"


def _whole(label: str, message: str, line: int = 1) -> SpecProblem:
    """A problem with the file as a whole (it cannot be read or parsed)."""
    return SpecProblem(label, line, "(root)", message)


def _yaml_problem(label: str, exc: yaml.YAMLError) -> SpecProblem:
    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem_mark is not None:
        message = f"invalid YAML: {exc.problem}"
        if exc.context and exc.context_mark is not None:
            message += f" ({exc.context}, which starts on line {exc.context_mark.line + 1})"
        return _whole(label, message, exc.problem_mark.line + 1)
    return _whole(label, f"invalid YAML: {exc}")


# --------------------------------------------------------------------------- schema problems


@cache
def _validator() -> Draft202012Validator:
    return Draft202012Validator(resources.load_schema(SCHEMA_NAME))


def _schema_problems(data: Any, where: _Where) -> list[SpecProblem]:
    problems: list[SpecProblem] = []
    for error in _validator().iter_errors(data):
        problems.extend(_explain(error, where))
    return problems


_TYPE_NAMES = {"object": "mapping", "array": "list"}


def _explain(error: ValidationError, where: _Where) -> Iterator[SpecProblem]:
    path: DocPath = tuple(error.absolute_path)
    instance, keyword = error.instance, error.validator
    if keyword == "additionalProperties":
        allowed = list(error.schema.get("properties", {}))
        for key in instance:
            if key not in allowed:
                yield where.at(
                    (*path, key),
                    f"unknown key (expected one of: {', '.join(allowed)}{_did_you_mean(key, allowed)})",
                    mode="key",
                )
        return
    hint = _then_hint(error)
    if keyword == "required":
        for name in error.validator_value:
            if name not in instance:
                suffix = f" ({hint})" if hint else ""
                yield where.at(path, f"missing required field {name!r}{suffix}", mode="parent")
        return
    shown, value = _show(instance), error.validator_value
    if keyword == "type":
        types = [value] if isinstance(value, str) else value
        text = f"{shown} is not of type {' or '.join(_TYPE_NAMES.get(t, t) for t in types)}"
    elif keyword == "enum":
        text = f"{shown} is not one of the allowed values"
    elif keyword == "const":
        text = f"{shown} is not supported"
    elif keyword == "minimum":
        text = f"{shown} is less than the minimum {value}"
    elif keyword == "maximum":
        text = f"{shown} is more than the maximum {value}"
    elif keyword == "exclusiveMinimum":
        text = f"{shown} is not more than {value}"
    elif keyword in ("minLength", "minItems"):
        text = f"{shown} is too short"
    elif keyword == "pattern":
        text = f"{shown} does not have the expected form"
    elif keyword in ("anyOf", "oneOf"):
        text = f"{shown} is not valid"
    else:  # pragma: no cover - every keyword the schema uses is handled above
        text = error.message
    expected = f"expected {_describe(error.schema)}"
    if keyword == "enum":
        expected += _did_you_mean(instance, [str(v) for v in value])
    if hint:
        expected += f"; {hint}"
    yield where.at(path, f"{text} ({expected})")


def _then_hint(error: ValidationError) -> str | None:
    """The ``description`` of an ``if``/``then`` branch the error came through, if any."""
    node: Any = _validator().schema
    hint = None
    for step in error.schema_path:
        if isinstance(node, dict) and step not in node:
            node = _deref(node)  # jsonschema leaves "$ref" out of the path
        try:
            node = node[step]
        except (KeyError, IndexError, TypeError):
            return hint
        if step == "then" and isinstance(node, dict):
            hint = node.get("description")
    return hint


def _deref(schema: Any) -> Any:
    ref = schema.get("$ref") if isinstance(schema, dict) else None
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return _validator().schema["$defs"][ref.removeprefix("#/$defs/")]
    return schema


def _did_you_mean(word: Any, choices: list[str]) -> str:
    close = difflib.get_close_matches(str(word), choices, n=1, cutoff=0.6)
    return f"; did you mean {close[0]}?" if close else ""


def _show(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return repr(value if len(value) <= 40 else value[:37] + "...")
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        shown = "[" + ", ".join(_show(v) for v in value) + "]"
        return shown if len(shown) <= 40 else f"a list of {len(value)} items"
    return str(value)


def _join_or(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]


def _describe(schema: Any) -> str:
    """What a (sub)schema expects, in words: 'an integer >= 1', 'a non-empty string', ..."""
    return _join_or(_alternatives(_deref(schema)))


def _alternatives(schema: dict[str, Any]) -> list[str]:
    if "const" in schema:
        return [_show(schema["const"])]
    if "enum" in schema:
        return [_show(v) for v in schema["enum"]]
    if "anyOf" in schema:
        return [alt for branch in schema["anyOf"] for alt in _alternatives(_deref(branch))]
    types = schema.get("type", [])
    return [_describe_type(t, schema) for t in ([types] if isinstance(types, str) else types)]


def _describe_type(kind: str, schema: dict[str, Any]) -> str:
    if kind in ("integer", "number"):
        noun = "an integer" if kind == "integer" else "a number"
        low, high = schema.get("minimum"), schema.get("maximum")
        xlow = schema.get("exclusiveMinimum")
        if xlow is not None and high is not None:
            return f"{noun} in ({xlow}, {high}]"
        if low is not None and high is not None:
            return f"{noun} from {low} to {high}"
        if xlow is not None:
            return f"{noun} > {xlow}"
        if low is not None:
            return f"{noun} >= {low}"
        return noun
    if kind == "string":
        if "pattern" in schema:
            return f"a string matching {schema['pattern']}"
        return "a non-empty string" if schema.get("minLength") else "a string"
    if kind == "array":
        items = _deref(schema.get("items", {}))
        noun = {"string": "strings", "object": "mappings"}.get(items.get("type"), "values")
        return f"a {'non-empty ' if schema.get('minItems') else ''}list of {noun}"
    if kind == "object":
        return f"a mapping with fields: {', '.join(schema.get('properties', {}))}"
    if kind == "boolean":
        return "true or false"
    return kind


# --------------------------------------------------------------------------- semantic problems


def _section(data: Mapping[str, Any], *keys: Any) -> Any:
    node: Any = data
    for key in keys:
        node = node.get(key) if isinstance(node, Mapping) else None
    return node


def _is_int(value: Any) -> bool:
    return (isinstance(value, int) and not isinstance(value, bool)) or (
        isinstance(value, float) and value.is_integer()
    )


def _non_finite(value: Any, path: DocPath = ()) -> Iterator[tuple[DocPath, float]]:
    """YAML's .inf / .nan and where they are: no field accepts them (canonical JSON cannot)."""
    if isinstance(value, float) and not math.isfinite(value):
        yield path, value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from _non_finite(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _non_finite(item, (*path, index))


def _semantic_problems(data: Mapping[str, Any], where: _Where) -> list[SpecProblem]:
    """What the schema cannot express. Each check skips values the schema already rejects."""
    problems = [
        where.at(at, f"{_show(value)} is not allowed (expected a finite number)")
        for at, value in _non_finite(data)
    ]
    quorum = _normal_quorum(data.get("quorum"))
    scorers = _section(data, "roles", "scorer", "count")
    if (
        isinstance(quorum, int)
        and not isinstance(quorum, bool)
        and _is_int(scorers)
        and quorum > scorers >= 1
    ):
        problems.append(
            where.at(
                ("quorum",),
                f"quorum {quorum} is larger than "
                f"roles.scorer.count {int(scorers)} (expected at most "
                f"{int(scorers)}, 'majority' or 'all')",
            )
        )

    tree = data.get("tree")
    if isinstance(tree, Mapping):
        low = tree.get("min_children", TreeLimits.min_children)
        high = tree.get("max_children", TreeLimits.max_children)
        if _is_int(low) and _is_int(high) and low > high:
            if "min_children" in tree:
                other = "max_children" if "max_children" in tree else "the default max_children"
                problems.append(
                    where.at(
                        ("tree", "min_children"),
                        f"min_children {low} is larger than {other} {high} (expected at most {high})",
                    )
                )
            else:
                problems.append(
                    where.at(
                        ("tree", "max_children"),
                        f"max_children {high} is smaller "
                        f"than the default min_children {low} (expected at least {low})",
                    )
                )

    for index, constraint in enumerate(data.get("constraints") or []):
        if not isinstance(constraint, Mapping):
            continue
        kind = constraint.get("kind")
        stray = ("terms",) if kind == "sum" else ("field", "total") if kind in ("mention", "forbid") else ()
        needs = "field and total" if kind == "sum" else "terms"
        for key in stray:
            if key in constraint:
                problems.append(
                    where.at(
                        ("constraints", index, key),
                        f"{key!r} does not apply to a {kind!r} constraint (expected {needs})",
                        mode="key",
                    )
                )

    access = data.get("access")
    if isinstance(access, Mapping) and access.get("mode") == "allowlist" and not access.get("peers"):
        problems.append(
            where.at(("access", "peers"), "mode 'allowlist' admits nobody (expected at least one peer id)")
        )
    return problems


# --------------------------------------------------------------------------- templates and files


@cache
def _jinja() -> SandboxedEnvironment:
    return SandboxedEnvironment(undefined=jinja2.StrictUndefined)


def _jinja_problem(text: str, label: str) -> str | None:
    try:
        _jinja().parse(text)
    except jinja2.TemplateSyntaxError as exc:
        return f"Jinja2 syntax error in {label}:{exc.lineno}: {exc.message}"
    return None


def _read_template(path: Path, label: str) -> tuple[str | None, str | None]:
    """(text, None) or (None, what is wrong) for a template file."""
    if not path.is_file():
        return None, f"template file {label!r} not found (looked for {path})"
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return None, f"cannot read template file {label!r}: {exc}"
    return text, _jinja_problem(text, label)


def _default_prompt(task: str) -> Path:
    try:
        return resources.template_dir() / "prompts" / f"{task}.j2"
    except FileNotFoundError:
        return Path("templates") / "prompts" / f"{task}.j2"


def _prompts_from_files(
    data: Mapping[str, Any], where: _Where, base: Path
) -> tuple[Prompts, list[SpecProblem]]:
    given = data.get("prompts")
    given = given if isinstance(given, Mapping) else {}
    texts: dict[str, str] = {}
    problems: list[SpecProblem] = []
    for task in TASKS:
        if task in given:
            if not isinstance(given[task], str) or not given[task]:
                continue  # the schema reported it
            path, label = base / Path(given[task]).expanduser(), given[task]
        else:
            path, label = _default_prompt(task), f"templates/prompts/{task}.j2"
        text, problem = _read_template(path, label)
        if problem:
            problems.append(where.at(("prompts", task), problem))
        if text is not None:
            texts[task] = text
    return Prompts(**{t: texts.get(t, "") for t in TASKS}), problems


def _prompts_from_text(data: Mapping[str, Any], where: _Where) -> tuple[Prompts, list[SpecProblem]]:
    given = data.get("prompts")
    given = given if isinstance(given, Mapping) else {}
    problems: list[SpecProblem] = []
    for task in TASKS:
        if task not in given:
            problems.append(
                where.at(
                    ("prompts",),
                    f"missing required field {task!r} (expected the template text)",
                    mode="parent",
                )
            )
        elif isinstance(given[task], str):
            problem = _jinja_problem(given[task], f"prompts.{task}")
            if problem:
                problems.append(where.at(("prompts", task), problem))
    return Prompts(**{t: given.get(t) or "" for t in TASKS}), problems


def _file_problems(data: Mapping[str, Any], where: _Where, base: Path) -> list[SpecProblem]:
    """Files the spec names that must exist: replay cassette, model file, output template."""
    problems: list[SpecProblem] = []
    model = data.get("model")
    model = model if isinstance(model, Mapping) else {}
    checks: list[tuple[DocPath, str]] = []
    if model.get("backend") == "replay":
        checks.append((("model", "cassette"), "cassette"))
    if model.get("backend", "gpt4all") in ("gpt4all", "llama"):
        checks.append((("model", "file"), "model file"))
    for at, what in checks:
        value = _section(data, *at)
        if isinstance(value, str) and value:
            path = (base / Path(value).expanduser()).resolve()
            if not path.is_file():
                problems.append(where.at(at, f"{what} {value!r} not found (looked for {path})"))
    template = _section(data, "output", "template")
    if isinstance(template, str) and template:
        _, problem = _read_template(base / Path(template).expanduser(), template)
        if problem:
            problems.append(where.at(("output", "template"), problem))
    return problems


__all__ = [
    "DEFAULT_STRATEGIES",
    "LAUNCH_ORDER",
    "Seat",
    "TASKS",
    "AccessSettings",
    "Budget",
    "Constraint",
    "DecomposerRole",
    "GoalSpec",
    "ModelSettings",
    "NetworkSettings",
    "OutputSettings",
    "Prompts",
    "Role",
    "Roles",
    "TokenLimits",
    "TreeLimits",
    "load_spec",
    "quorum_size",
    "spec_from_json",
]
