"""Goal specs: a YAML file in, a validated, frozen :class:`GoalSpec` out.

``values`` holds the frozen dataclasses (and the only copy of every default),
``load`` the two loaders, ``wording`` how a problem is located and phrased, and
``checks`` what a schema cannot say. Import from here.
"""

from specswarm.spec.load import load_spec as load_spec
from specswarm.spec.load import spec_from_json as spec_from_json
from specswarm.spec.load import spec_from_mapping as spec_from_mapping
from specswarm.spec.quorum import Quorum as Quorum
from specswarm.spec.quorum import quorum_size as quorum_size
from specswarm.spec.values import DEFAULT_LENSES as DEFAULT_LENSES
from specswarm.spec.values import DEFAULT_STRATEGIES as DEFAULT_STRATEGIES
from specswarm.spec.values import LATER_TASKS as LATER_TASKS
from specswarm.spec.values import LAUNCH_ORDER as LAUNCH_ORDER
from specswarm.spec.values import TASKS as TASKS
from specswarm.spec.values import AccessSettings as AccessSettings
from specswarm.spec.values import Budget as Budget
from specswarm.spec.values import Constraint as Constraint
from specswarm.spec.values import DecomposerRole as DecomposerRole
from specswarm.spec.values import GoalSpec as GoalSpec
from specswarm.spec.values import ModelSettings as ModelSettings
from specswarm.spec.values import NetworkSettings as NetworkSettings
from specswarm.spec.values import OutputSettings as OutputSettings
from specswarm.spec.values import Prompts as Prompts
from specswarm.spec.values import Review as Review
from specswarm.spec.values import Role as Role
from specswarm.spec.values import Roles as Roles
from specswarm.spec.values import ScorerRole as ScorerRole
from specswarm.spec.values import Seat as Seat
from specswarm.spec.values import TokenLimits as TokenLimits
from specswarm.spec.values import TreeLimits as TreeLimits
