"""``specswarm plan``: launch the declared peers as processes (on loopback, or where the spec's
``network.listen`` says) and watch them converge.

The launcher is not a coordinator: it generates the peers' keys and the run
event, starts one OS process per declared peer (each bootstrapping from two
others, so there is no hub), and then only *reads*: the peers' status lines
and the observer's event log, which it folds itself to show the tree growing.
When every peer reports the same complete plan it stops them, writes the
event log and renders the plan. On timeout it names the stuck nodes and why.

Modules, in the order a launch uses them: ``run`` (:func:`run_plan` and its steps),
``prepare`` (a new or resumed run: keys, run event, preload), ``procs`` (the peer
processes; ``network``: where they listen, whom they dial, whom the run admits), ``watch``
(start them and watch until done), ``progress`` (the lines on
stderr), ``eventlog`` (following and collecting event logs) and ``diagnose`` (why a run
is stuck; the JSON report).
"""

from specswarm.swarm.launcher.diagnose import diagnose as diagnose
from specswarm.swarm.launcher.diagnose import write_report as write_report
from specswarm.swarm.launcher.procs import PeerProc as PeerProc
from specswarm.swarm.launcher.procs import PeerStatus as PeerStatus
from specswarm.swarm.launcher.procs import free_port as free_port
from specswarm.swarm.launcher.procs import peer_command as peer_command
from specswarm.swarm.launcher.progress import Progress as Progress
from specswarm.swarm.launcher.progress import event_count as event_count
from specswarm.swarm.launcher.run import run_plan as run_plan
