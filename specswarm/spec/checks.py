"""What a schema cannot say about a spec: semantic checks, prompt templates, named files."""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import jinja2
from jinja2.sandbox import SandboxedEnvironment

from specswarm import resources
from specswarm.errors import SpecProblem
from specswarm.spec._yaml import DocPath
from specswarm.spec.bounds import MAX_TEMPLATE_CHARS, amount, outside, read_at_most
from specswarm.spec.prompting import template_problem
from specswarm.spec.quorum import normal_quorum
from specswarm.spec.values import LATER_TASKS, TASKS, Prompts, TreeLimits
from specswarm.spec.wording import Where, schema_at, show

# --------------------------------------------------------------------------- semantic problems


def section(data: Mapping[str, Any], *keys: Any) -> Any:
    node: Any = data
    for key in keys:
        node = node.get(key) if isinstance(node, Mapping) else None
    return node


MODEL_ROLES = ("decomposer", "scorer", "executor")
"""The roles that run a model, and so may have a model section of their own."""


def model_sections(data: Mapping[str, Any]) -> list[tuple[DocPath, Mapping[str, Any]]]:
    """Where each model section sits, with the settings it stands for: the top-level ``model``,
    and each role's own ``model`` merged over it (what that role's peers run)."""
    top = data.get("model")
    top = top if isinstance(top, Mapping) else {}
    out: list[tuple[DocPath, Mapping[str, Any]]] = [(("model",), top)]
    for role in MODEL_ROLES:
        own = section(data, "roles", role, "model")
        if isinstance(own, Mapping):
            out.append((("roles", role, "model"), {**top, **own}))
    return out


def is_int(value: Any) -> bool:
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


def semantic_problems(data: Mapping[str, Any], where: Where) -> list[SpecProblem]:
    """What the schema cannot express. Each check skips values the schema already rejects."""
    problems = [
        where.at(at, f"{show(value)} is not allowed (expected a finite number)")
        for at, value in _non_finite(data)
    ]
    quorum = normal_quorum(data.get("quorum"))
    scorers = section(data, "roles", "scorer", "count")
    if isinstance(quorum, int) and not isinstance(quorum, bool) and is_int(scorers) and quorum > scorers >= 1:
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
        if is_int(low) and is_int(high) and low > high:
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

    for at, model in model_sections(data):
        own = section(data, *at)
        if model.get("backend") == "openai" and not model.get("base_url"):
            named = (*at, "backend") if isinstance(own, Mapping) and "backend" in own else at
            problems.append(
                where.at(
                    (*at, "base_url"),
                    "missing (backend 'openai' needs the endpoint's API root, e.g. http://localhost:11434/v1)",
                    line=where.line(named, "key"),
                )
            )
        runtime = own.get("runtime", "auto") if isinstance(own, Mapping) else "auto"
        backend = model.get("backend", "gpt4all")
        if runtime != "auto" and (backend != "gpt4all" or model.get("shared") is False):
            why = (
                "a model service's engine: it needs backend 'gpt4all' and model.shared"
                if backend == "gpt4all"
                else f"the engine of the gpt4all backend's model service, not of backend {backend!r}"
            )
            problems.append(
                where.at((*at, "runtime"), f"runtime {runtime!r} is {why} (expected auto, or remove it)")
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


def _read_text(path: Path, label: str, limit: int, why: str) -> tuple[str | None, str | None]:
    """(text, None) or (None, what is wrong) for a template file of at most ``limit``
    characters (``why``: the reason for the bound, in the message)."""
    if not path.is_file():
        return None, f"template file {label!r} not found (looked for {path})"
    try:
        raw, size = read_at_most(path, 4 * limit)  # UTF-8: at most 4 bytes a character
        text = raw.decode("utf-8") if size is None else None
    except (OSError, UnicodeDecodeError) as exc:
        return None, f"cannot read template file {label!r}: {exc}"
    if text is None or len(text) > limit:
        held = f"{len(text)} characters" if text is not None else amount(size or 0)
        return None, f"template file {label!r} holds {held} (expected at most {limit} characters: {why})"
    return text, None


def _read_template(path: Path, label: str) -> tuple[str | None, str | None]:
    """(text, None) or (text or None, what is wrong) for an output template that must parse."""
    text, problem = _read_text(path, label, MAX_TEMPLATE_CHARS, "a template, not a file of data")
    if text is not None:
        problem = _jinja_problem(text, label)
    return text, problem


def _default_prompt(task: str) -> Path:
    try:
        return resources.template_dir() / "prompts" / f"{task}.j2"
    except FileNotFoundError:
        return Path("templates") / "prompts" / f"{task}.j2"


def prompts_from_files(
    data: Mapping[str, Any], where: Where, base: Path, folders: Sequence[Path] | None = None
) -> tuple[Prompts, list[SpecProblem]]:
    """The prompt templates the spec names (relative to ``base``; the packaged ones for the
    tasks it does not name). ``folders``: where a named file may be (None: anywhere)."""
    given = data.get("prompts")
    given = given if isinstance(given, Mapping) else {}
    texts: dict[str, str] = {}
    problems: list[SpecProblem] = []
    for task in TASKS:
        if task in given:
            if not isinstance(given[task], str) or not given[task]:
                continue  # the schema reported it
            path, label = base / Path(given[task]).expanduser(), given[task]
            problem = outside(label, base, folders) if folders is not None else None
            if problem:
                problems.append(where.at(("prompts", task), problem))
                continue
        else:
            path, label = _default_prompt(task), f"templates/prompts/{task}.j2"
        limit = schema_at("prompts", task)["maxLength"]
        text, problem = _read_text(path, label, limit, "a prompt template travels in the run event")
        if text is not None:
            texts[task] = text
            problem = template_problem(text, task, label)
        if problem:
            problems.append(where.at(("prompts", task), problem))
    return Prompts(**{t: texts.get(t, "") for t in TASKS}), problems


def prompts_from_text(
    data: Mapping[str, Any], where: Where, *, rendered: bool = True
) -> tuple[Prompts, list[SpecProblem]]:
    """The prompt templates given as text. ``rendered``: checked by :func:`template_problem`
    (rendered on each task's samples); else only parsed (a run event of an older version
    may hold templates written for other variables; it still folds)."""
    given = data.get("prompts")
    given = given if isinstance(given, Mapping) else {}
    problems: list[SpecProblem] = []
    for task in TASKS:
        if task not in given and not rendered and task in LATER_TASKS:
            continue  # a run event of a version before this task: it never asks it
        if task not in given:
            problems.append(
                where.at(
                    ("prompts",),
                    f"missing required field {task!r} (expected the template text)",
                    mode="parent",
                )
            )
        elif isinstance(given[task], str):
            label = f"prompts.{task}"
            text = given[task]
            problem = template_problem(text, task, label) if rendered else _jinja_problem(text, label)
            if problem:
                problems.append(where.at(("prompts", task), problem))
    return Prompts(**{t: given.get(t) or "" for t in TASKS}), problems


def file_problems(
    data: Mapping[str, Any], where: Where, base: Path, folders: Sequence[Path] | None = None
) -> list[SpecProblem]:
    """Files the spec names that must exist: replay cassette, model file, output template (and
    the answer cache, when it exists, must be a directory). ``folders``: where the files whose
    content reaches the run or its plan (cassettes, the output template) may be (None: anywhere);
    the model file and the answer cache may be anywhere."""
    problems: list[SpecProblem] = []
    checks: list[tuple[DocPath, str]] = []
    confined: list[DocPath] = [("output", "template")]
    for at_model, model in model_sections(data):
        confined.append((*at_model, "cassette"))
        if model.get("backend") == "replay":
            checks.append(((*at_model, "cassette"), "cassette"))
        if model.get("backend", "gpt4all") in ("gpt4all", "llama"):
            checks.append(((*at_model, "file"), "model file"))
    refused: set[DocPath] = set()
    for at in confined:
        value = section(data, *at)
        problem = outside(value, base, folders) if folders is not None and isinstance(value, str) else None
        if problem:
            problems.append(where.at(at, problem))
            refused.add(at)
    for at, what in checks:
        value = section(data, *at)
        if isinstance(value, str) and value and at not in refused:
            path = (base / Path(value).expanduser()).resolve()
            if not path.is_file():
                problems.append(where.at(at, f"{what} {value!r} not found (looked for {path})"))
    cache = data.get("cache")
    if isinstance(cache, str) and cache:
        path = (base / Path(cache).expanduser()).resolve()
        if path.exists() and not path.is_dir():
            problems.append(where.at(("cache",), f"cache {cache!r} is not a directory ({path} is a file)"))
    template = section(data, "output", "template")
    if isinstance(template, str) and template and ("output", "template") not in refused:
        _, problem = _read_template(base / Path(template).expanduser(), template)
        if problem:
            problems.append(where.at(("output", "template"), problem))
    return problems
