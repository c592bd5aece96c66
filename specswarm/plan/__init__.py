"""The plan: a pure fold of the event set, and its views."""

from specswarm.plan.fold import FoldState as FoldState
from specswarm.plan.fold import fold as fold
from specswarm.plan.views import ROOT as ROOT
from specswarm.plan.views import ClaimView as ClaimView
from specswarm.plan.views import NodeView as NodeView
from specswarm.plan.views import Plan as Plan
from specswarm.plan.views import ProposalView as ProposalView
from specswarm.plan.views import ResultView as ResultView
from specswarm.plan.views import VoteView as VoteView
from specswarm.plan.views import child_id as child_id
