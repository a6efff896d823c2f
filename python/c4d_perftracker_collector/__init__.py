"""Compatibility import path of the original product's collector.

Scripts written for it do

    from c4d_perftracker_collector.PerfTracker import PerfTracker

and get perftracker.PerfTracker unchanged (the submodule PerfTracker holds
the class, as in the original package).
"""
from perftracker import __version__  # noqa: F401
