"""Goal specs: a YAML file in, a validated, frozen :class:`GoalSpec` out.

``load_spec(path)`` reads the YAML a user writes (see ``goals/`` and
``schemas/goal.schema.json``), checks it against the schema and then for what
a schema cannot say (a quorum larger than the scorers, template files that are
missing, do not parse or fail on their task's sample data, ...), and raises one
:class:`~specswarm.errors.SpecError` listing *every* problem as
``FILE:LINE: field.path: what is wrong (expected ...)``. The work and what is read are
bounded (``bounds`` and ``_yaml``): a file too large is not parsed, the YAML loader stops at
too many values or alias copies, and a spec too large for the run event or naming files
outside its folder is a problem like any other.

``GoalSpec.to_json()`` gives the normalized dict of docs/ARCHITECTURE.md (all
defaults filled in, prompt templates inlined as text) that travels in the
``run`` event; ``spec_from_json()`` is its inverse, for peers that learn the
spec from the swarm, and validates just as strictly (but only parses the
prompt templates: see its docstring).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar, get_origin, get_type_hints

import yaml

from specswarm.errors import SpecError
from specswarm.spec._yaml import load_located
from specswarm.spec.addresses import network_problems
from specswarm.spec.bounds import MAX_SPEC_FILE_BYTES, allowed_folders, file_too_large, oversize, read_at_most
from specswarm.spec.checks import file_problems, prompts_from_files, prompts_from_text, semantic_problems
from specswarm.spec.quorum import normal_quorum
from specswarm.spec.values import (
    TASKS,
    AccessSettings,
    Budget,
    Constraint,
    DecomposerRole,
    GoalSpec,
    ModelSettings,
    NetworkSettings,
    OutputSettings,
    Prompts,
    Review,
    Role,
    Roles,
    ScorerRole,
    TokenLimits,
    TreeLimits,
)
from specswarm.spec.wording import Where, kind_of, schema_problems, unique, whole, yaml_problem

# --------------------------------------------------------------------------- public loaders


def load_spec(path: str | os.PathLike[str], *, allow_outside: bool = False) -> GoalSpec:
    """Load and validate a YAML goal spec; raise SpecError listing every problem.

    ``allow_outside``: the files whose content reaches the run or its plan (prompt templates,
    the output template, cassettes) may be anywhere; by default they must be in the spec's
    folder (or below it) or among specswarm's packaged templates, symlinks resolved.
    """
    label = os.fspath(path)
    source = Path(path)
    try:
        raw, size = read_at_most(source, MAX_SPEC_FILE_BYTES)
        if size is not None:
            raise SpecError([whole(label, file_too_large(size))])
        text = raw.decode("utf-8-sig")
    except OSError as exc:
        raise SpecError([whole(label, f"cannot read the spec file: {exc.strerror or exc}")]) from exc
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise SpecError(
            [whole(label, f"byte {raw[exc.start]:#04x} is not UTF-8 (expected a UTF-8 text file)", line)]
        ) from exc
    try:
        located = load_located(text)
    except yaml.YAMLError as exc:
        raise SpecError([yaml_problem(label, exc)]) from exc
    if located is None:
        raise SpecError(
            [whole(label, "the file is empty (expected a mapping with at least 'goal' and 'roles')")]
        )
    where = Where(label, located)
    data = located.data
    if not isinstance(data, dict):
        raise SpecError(
            [
                where.at(
                    (),
                    f"the top level is {kind_of(data)}, not a mapping "
                    "(expected fields such as 'goal:' and 'roles:')",
                )
            ]
        )

    problems = [
        where.at(d.path, f"duplicate key {d.path[-1]!r} (first defined on line {d.first_line})", line=d.line)
        for d in located.duplicates
    ]
    problems += schema_problems(data, where)
    problems += semantic_problems(data, where)
    base = source.resolve().parent
    folders = None if allow_outside else allowed_folders(base)
    prompts, prompt_problems = prompts_from_files(data, where, base, folders)
    problems += prompt_problems
    problems += file_problems(data, where, base, folders)
    problems += network_problems(data, where)
    if problems:
        raise SpecError(unique(problems))
    spec = _build(
        data,
        default_name=source.stem,
        prompts=prompts,
        where=where,
        resolve=lambda p: (base / Path(p).expanduser()).resolve(),
        source=source,
    )
    too_large = oversize(spec.to_json())
    if too_large:
        raise SpecError([where.at((), too_large)])
    return spec


def spec_from_json(d: Mapping[str, Any], *, source: str = "<run event>") -> GoalSpec:
    """Rebuild a GoalSpec from ``GoalSpec.to_json()`` output; raise SpecError if it is invalid.

    File paths are taken as they are (they name files on the machine that
    started the run) and not checked here; prompt templates are parsed, not rendered on the
    samples (a run recorded by an older version may give its templates other variables; it
    still folds, and a template that fails at run time raises PromptTemplateError then);
    ``source`` names the origin in messages.
    """
    where = Where(source)
    if not isinstance(d, Mapping):
        raise SpecError([where.at((), f"the spec is {kind_of(d)}, not a mapping")])
    data = dict(d)
    problems = schema_problems(data, where) + semantic_problems(data, where)
    if "name" not in data:
        problems.append(where.at((), "missing required field 'name'", mode="parent"))
    if "cache" in data:  # a local setting: to_json() never writes it, a run never carries it
        problems.append(where.at(("cache",), "the answer cache is a local setting, not part of a run"))
    prompts, prompt_problems = prompts_from_text(data, where, rendered=False)
    problems += prompt_problems
    if problems:
        raise SpecError(unique(problems))
    return _build(data, default_name="", prompts=prompts, resolve=Path, source=None)


def spec_from_mapping(data: Mapping[str, Any], *, name: str = "spec", source: str = "<mapping>") -> GoalSpec:
    """A GoalSpec from a plain mapping shaped like the YAML a user writes (defaults filled in);
    prompts not given are the built-in templates, given ones are template *text*. For tests,
    benchmarks and programs that build specs in code. Raise SpecError if it is invalid."""
    where = Where(source)
    raw = dict(data)
    given = raw.pop("prompts", None) or {}
    problems = schema_problems(raw, where) + semantic_problems(raw, where)
    texts = {t: given[t] for t in TASKS if given.get(t)}
    if len(texts) < len(TASKS):  # read the built-in templates only when some are needed
        defaults, prompt_problems = prompts_from_files({}, where, Path("."))
        texts = {t: texts.get(t) or getattr(defaults, t) for t in TASKS}
        problems += prompt_problems
    problems += prompts_from_text({"prompts": texts}, where)[1]
    if problems:
        raise SpecError(unique(problems))
    return _build(raw, default_name=name, prompts=Prompts(**texts), resolve=Path, source=None)


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


def _build(
    data: Mapping[str, Any],
    *,
    default_name: str,
    prompts: Prompts,
    resolve: Callable[[str], Path],
    source: Path | None,
    where: Where | None = None,
) -> GoalSpec:
    """The GoalSpec of validated ``data``: what it gives, the dataclasses' defaults for the rest."""

    def sub(cls: type[T], key: str, **given: Any) -> T:
        return _make(cls, data.get(key) or {}, **given)

    def paths(raw: Mapping[str, Any], *keys: str) -> dict[str, Path | None]:
        return {k: resolve(raw[k]) if raw.get(k) else None for k in keys}

    roles, model, output = data["roles"], data.get("model") or {}, data.get("output") or {}
    top: dict[str, Any] = {k: data[k] for k in ("context", "language", "quorum") if k in data}
    if "quorum" in top:
        top["quorum"] = normal_quorum(top["quorum"])

    def model_of(raw: Mapping[str, Any]) -> ModelSettings:
        return _make(
            ModelSettings,
            raw,
            max_tokens=_make(TokenLimits, raw.get("max_tokens") or {}),
            **paths(raw, "file", "cassette"),
        )

    def role(cls: type[T], name: str) -> T:
        raw = roles.get(name) or {}
        own = raw.get("model")
        if own is None:
            return _make(cls, raw, model=None)
        # the role's fields replace the top-level ones (max_tokens field by field)
        limits = {**(model.get("max_tokens") or {}), **(own.get("max_tokens") or {})}
        return _make(cls, raw, model=model_of({**model, **own, "max_tokens": limits}))

    return GoalSpec(
        name=data.get("name") or default_name,
        goal=data["goal"],
        constraints=tuple(_make(Constraint, c) for c in data.get("constraints") or ()),
        roles=Roles(
            decomposer=role(DecomposerRole, "decomposer"),
            scorer=role(ScorerRole, "scorer"),
            executor=role(Role, "executor"),
            observer=_make(Role, roles.get("observer") or {}),
        ),
        prompts=prompts,
        tree=sub(TreeLimits, "tree"),
        review=sub(Review, "review"),
        model=model_of(model),
        network=sub(NetworkSettings, "network"),
        access=sub(AccessSettings, "access"),
        budget=sub(Budget, "budget"),
        output=sub(OutputSettings, "output", **paths(output, "template")),
        cache=resolve(data["cache"]) if data.get("cache") else None,
        source=source,
        where=where,
        **top,
    )
