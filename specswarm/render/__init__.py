"""Rendering a folded plan: Markdown, JSON, a software spec, and the terminal tree."""

from specswarm.render.export import PlanSchemaError as PlanSchemaError
from specswarm.render.export import TemplateError as TemplateError
from specswarm.render.export import check_plan_json as check_plan_json
from specswarm.render.export import render_json as render_json
from specswarm.render.export import render_plan as render_plan
from specswarm.render.export import write_output as write_output
