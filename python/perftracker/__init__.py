"""PerfTracker collector: add two lines to a training script.

    from perftracker import PerfTracker      # or c4d_perftracker_collector.PerfTracker
    tracer = PerfTracker()
    ...
    tracer.step()                             # once per iteration

PerfTracker() registers the process in the control directory
($PERFTRACKER_CONTROL_DIR, default: the job's own, docs/collector.md); step() is a C
function that counts iterations.  `perftracker --trigger-on` on the master
then profiles every worker for a few steps.  See docs/collector.md.

Nothing here raises into the training script: a problem is logged once to
stderr and the collector stays inert.
"""

import os
import shutil
import sys

__all__ = ["PerfTracker", "__version__"]
__version__ = "1.0.0"


def _log(msg):
    try:
        sys.stderr.write("perftracker: collector: %s\n" % msg)
    except Exception:
        pass


try:
    # Torch reads its Flight Recorder setting when the first process group
    # is made: ask for it at import, so that a script that imports us before
    # init_process_group has it even when it makes PerfTracker() after
    # (the watch and the profile's collectives read it; docs/watch.md).
    from . import _window as _w
    _w.enable_flight_recorder()
except Exception as _e:
    _log("flight recorder: %s" % _e)

try:
    from . import _collector
    _Base = _collector.Collector
except Exception as _e:  # extension not built: stay inert
    _collector = None
    _log("extension not available (%s); run 'make' in the PerfTracker tree" % _e)

    class _Base(object):
        def __init__(self, *a, **k):
            pass

        def step(self):
            pass


def _env_int(names, default):
    for n in names:
        v = os.environ.get(n)
        if v is None or v == "":
            continue
        try:
            return int(v)
        except ValueError:
            continue
    return default


def _env_float(name, default):
    try:
        return float(os.environ.get(name) or default)
    except ValueError:
        return default


def _find_binary():
    """The perftracker binary that runs the agent: $PERFTRACKER_BIN, the
    build tree next to this package, the environment's bin/ (pip install),
    or PATH."""
    b = os.environ.get("PERFTRACKER_BIN")
    if b:
        return b if os.access(b, os.X_OK) else None
    here = os.path.dirname(os.path.abspath(__file__))
    cand = os.path.join(os.path.dirname(os.path.dirname(here)), "build", "perftracker")
    if os.access(cand, os.X_OK):
        return cand
    # `pip install ./python` puts the command beside the environment's python
    cand = os.path.join(os.path.dirname(sys.executable), "perftracker")
    if os.access(cand, os.X_OK):
        return cand
    for name in ("perftracker", "c4d_perftracker"):
        p = shutil.which(name)
        if p:
            return p
    return None


def _agent_argv(control_dir, local_rank):
    if local_rank != 0 or os.environ.get("PERFTRACKER_AUTO_AGENT", "1") == "0":
        return None
    b = _find_binary()
    if not b:
        return None
    argv = [b, "agent", "--control-dir", control_dir, "--detach",
            "--exit-when-idle", os.environ.get("PERFTRACKER_AGENT_IDLE_EXIT", "5")]
    spool = os.environ.get("PERFTRACKER_SPOOL_DIR")
    if spool:
        argv += ["--spool-dir", spool]
    # Automatic profiling on slowdown (opt-in, docs/hang.md): the agent
    # watches the step times and starts a trigger by itself.
    if os.environ.get("PERFTRACKER_AUTO_PROFILE", "0") not in ("", "0"):
        argv.append("--auto-profile")
        for env, opt in (("PERFTRACKER_AUTO_WINDOW", "--auto-window"),
                         ("PERFTRACKER_AUTO_SLOWDOWN", "--auto-slowdown"),
                         ("PERFTRACKER_AUTO_COOLDOWN", "--auto-cooldown"),
                         ("PERFTRACKER_AUTO_WATCH_DEFER", "--auto-watch-defer"),
                         ("PERFTRACKER_AUTO_OUTPUT_DIR", "--auto-output-dir")):
            v = os.environ.get(env)
            if v:
                argv += [opt, v]
    return argv


def _configure_python_tracer(window):
    """PERFTRACKER_PYTHON_TRACER (auto, kineto, c), read once here: which
    tracer records Python functions on a torch with Kineto."""
    try:
        window.configure(os.environ.get("PERFTRACKER_PYTHON_TRACER", "auto"))
    except ValueError as e:
        _log("%s; using auto" % e)
        window.configure("auto")


_shutdown_registered = False


class PerfTracker(_Base):
    """The collector of this training process.  step() marks one iteration.

    Arguments (all optional; environment variables in brackets):
      control_dir  [PERFTRACKER_CONTROL_DIR] shared control directory
      rank, local_rank, world_size, local_world_size  [RANK, LOCAL_RANK, ...]
    Further knobs: PERFTRACKER_SPOOL_DIR, PERFTRACKER_HOST,
    PERFTRACKER_HEARTBEAT_MS (1000), PERFTRACKER_POLL_MS (250),
    PERFTRACKER_TRACE_EVENTS (2097152), PERFTRACKER_AUTO_AGENT (1),
    PERFTRACKER_HANG_S (0: automatic), PERFTRACKER_WATCHDOG (1),
    PERFTRACKER_AUTO_PROFILE (0), PERFTRACKER_PYTHON_TRACER (auto),
    PERFTRACKER_DISABLE (0), PERFTRACKER_DEBUG (0).
    """

    # No instance dict: `tracer.step` resolves straight to the C method.
    __slots__ = ()

    def __init__(self, control_dir=None, rank=None, local_rank=None, world_size=None,
                 local_world_size=None):
        global _shutdown_registered
        try:
            if os.environ.get("PERFTRACKER_DISABLE", "0") not in ("", "0") or _collector is None:
                return
            from . import _window
            _window.enable_flight_recorder()
            _configure_python_tracer(_window)
            # Without one: the job's own (MASTER_ADDR:MASTER_PORT, torchrun's
            # run id, ...; docs/collector.md "Jobs on one host").
            cdir = control_dir or os.environ.get("PERFTRACKER_CONTROL_DIR") or \
                _collector.default_control_dir()
            cdir = os.path.abspath(cdir)
            if rank is None:
                rank = _env_int(("RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"), 0)
            if local_rank is None:
                local_rank = _env_int(("LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK",
                                       "SLURM_LOCALID"), 0)
            if world_size is None:
                world_size = _env_int(("WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
                                       "SLURM_NTASKS"), 1)
            if local_world_size is None:
                local_world_size = _env_int(("LOCAL_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE"),
                                            1)
            spool = os.environ.get("PERFTRACKER_SPOOL_DIR") or None
            super().__init__(
                control_dir=cdir, spool_dir=spool, rank=int(rank), local_rank=int(local_rank),
                world_size=int(world_size), local_world_size=int(local_world_size),
                hook=_window, agent_argv=_agent_argv(cdir, int(local_rank)),
                heartbeat_ms=_env_int(("PERFTRACKER_HEARTBEAT_MS",), 1000),
                poll_ms=_env_int(("PERFTRACKER_POLL_MS",), 250),
                trace_events=_env_int(("PERFTRACKER_TRACE_EVENTS",), 1 << 21),
                hang_s=_env_float("PERFTRACKER_HANG_S", 0.0))
            if not _shutdown_registered:
                import atexit
                atexit.register(_collector.shutdown)
                _shutdown_registered = True
        except Exception as e:  # never into the training script
            _log("disabled: %s" % e)

    def info(self):
        """The collector's state (step count, worker id, state) as a dict;
        next_action is the step at which the next profiling window starts,
        None when none is planned."""
        try:
            d = _collector.info() if _collector else {}
            if d.get("next_action") == (1 << 63) - 1:  # the C side's "none"
                d["next_action"] = None
            return d
        except Exception:
            return {}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        """Leaving `with PerfTracker() as t:` stops the collector (the same
        as at interpreter exit); exceptions of the block pass through."""
        try:
            if _collector:
                _collector.shutdown()
        except Exception as e:
            _log("shutdown: %s" % e)
        return False
