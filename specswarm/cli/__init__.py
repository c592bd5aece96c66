"""The ``specswarm`` command line: the one place where errors become red text and exit codes."""

from specswarm.cli.app import app as app
from specswarm.cli.app import main as main
