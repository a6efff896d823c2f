"""c4d_perftracker_collector.PerfTracker: the original module path of the
PerfTracker class (see the package docstring)."""
from perftracker import PerfTracker  # noqa: F401

__all__ = ["PerfTracker"]
