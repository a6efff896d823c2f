"""The profiling window: the thin Python layer over torch.profiler.

Called by the C collector (collector_step.c) from inside step() at the armed
step, at each step of the window and at its end; never on the idle step path.
Exceptions propagate to the C side, which logs them once and disables the
collector, so the training script never sees them.
"""

import os
import time

_prof = None
_rec = None
_first_step = None
_legacy = False
_t0_ns = 0
_c_on_kineto = False  # this window: the C tracer on a Kineto torch
_main_tid = 0         # native id of the thread that runs the window


# ---- Which Python tracer (PERFTRACKER_PYTHON_TRACER) ----------------------
# Set once by PerfTracker() (never on the step path).  "kineto": torch's own
# (with_stack=True); "c": our C tracer (collector_tracer.c), its events merged
# into Kineto's export (collector_export.c, merge_kineto); "auto": AUTO_MODE
# (docs/bench.md, "Python tracer on Kineto torch").  Without Kineto the C
# tracer runs whatever the setting.
MODES = ("auto", "kineto", "c")
AUTO_MODE = "c"
_mode = AUTO_MODE


def configure(mode):
    """Set the Python tracer mode; returns the mode in force ("kineto" or
    "c"), or raises ValueError for an unknown one."""
    global _mode
    m = (mode or "auto").strip().lower()
    if m not in MODES:
        raise ValueError("PERFTRACKER_PYTHON_TRACER=%r: expected one of %s" %
                         (mode, ", ".join(MODES)))
    _mode = AUTO_MODE if m == "auto" else m
    return _mode


def _use_c_tracer(kineto):
    """True when the C tracer records Python functions in this window."""
    return not kineto or _mode == "c"


def _record(name):
    import torch
    rec = torch.autograd.profiler.record_function(name)
    rec.__enter__()
    return rec


def start(step, path):
    """Start torch.profiler at global step `step`.  Returns True when the C
    tracer records Python functions (no Kineto, or PERFTRACKER_PYTHON_TRACER=c),
    False when torch does (with_stack=True)."""
    global _prof, _rec, _first_step, _legacy, _t0_ns, _c_on_kineto, _main_tid
    import threading
    import torch
    from torch.profiler import ProfilerActivity, profile

    acts = [ProfilerActivity.CPU]
    if torch.cuda.is_available():
        acts.append(ProfilerActivity.CUDA)
    kineto = bool(torch.autograd.kineto_available())
    _legacy = not kineto
    # with_stack makes Kineto record python_function events; the legacy
    # profiler would only attach stacks to ops (slow, not exported), so the
    # C tracer records Python functions instead.
    use_c = _use_c_tracer(kineto)
    _c_on_kineto = kineto and use_c
    _main_tid = threading.get_native_id()
    _prof = profile(activities=acts, with_stack=not use_c, record_shapes=False)
    _prof.start()
    _first_step = step
    _t0_ns = time.time_ns()
    # Our own step markers carry the global step number (torch 1.13's
    # profile.step() repeats the first number).  With the C tracer the C side
    # opens the first one through step(), once the tracer runs.
    _rec = None if use_c else _record("ProfilerStep#%d" % step)
    return use_c


def step(step):
    """Close the previous ProfilerStep span, open ProfilerStep#step."""
    global _rec
    if _rec is not None:
        _rec.__exit__(None, None, None)
    _rec = _record("ProfilerStep#%d" % step)


def close():
    """Close the last step span (before the C tracer stops; stop() then
    finds none open)."""
    global _rec
    if _rec is not None:
        _rec.__exit__(None, None, None)
        _rec = None


def _dist_info():
    backend, rank, world = "", None, None
    try:
        import torch.distributed as dist
        if dist.is_available() and dist.is_initialized():
            backend = str(dist.get_backend())
            rank = dist.get_rank()
            world = dist.get_world_size()
    except Exception:
        pass
    return backend, rank, world


def stop(step, path):
    """End the window and export the trace to `path`.  Returns
    (legacy, trace_start_ns, pid_token, tid_token, backend, rank, world, torch_version)
    for the C side, which merges the Python tracer's events into the file."""
    global _prof, _rec
    import torch
    prof, rec = _prof, _rec
    _prof = _rec = None
    if rec is not None:
        rec.__exit__(None, None, None)
    prof.stop()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    prof.export_chrome_trace(path)
    start_ns, pid_tok, tid_tok = 0, "", ""
    if _legacy:
        # The legacy export writes ts in µs relative to the profiler's start
        # on CLOCK_REALTIME, pid "CPU functions" and torch's own thread ids.
        pid_tok = '"CPU functions"'
        fe = prof.profiler.function_events if prof.profiler is not None else None
        marker = "ProfilerStep#%d" % _first_step
        tid = None
        rel_us = None
        for e in fe or ():
            if e.name == marker:
                tid, rel_us = e.thread, e.time_range.start
                break
        try:
            start_ns = int(prof.profiler.kineto_results.trace_start_us()) * 1000
        except Exception:
            # Fall back to our own clock reading next to the marker.
            start_ns = _t0_ns - int((rel_us or 0) * 1000)
        tid_tok = str(int(tid)) if tid is not None else "1"
    elif _c_on_kineto:
        pid_tok, tid_tok = _kineto_tokens()
    backend, rank, world = _dist_info()
    return (1 if _legacy else 0, start_ns, pid_tok, tid_tok, backend, rank, world,
            str(getattr(torch, "__version__", "")))


def _kineto_tokens():
    """pid and tid tokens under which Kineto writes the training thread's
    CPU ops (the process id, the thread's native id): the C tracer's events
    go there, so the analyzer nests them with the ops.  Their time base is
    the export's baseTimeNanoseconds, read by the C side."""
    return str(os.getpid()), str(int(_main_tid))


def abort():
    """Stop whatever runs, ignoring errors (the collector is going quiet)."""
    global _prof, _rec
    prof, rec = _prof, _rec
    _prof = _rec = None
    try:
        if rec is not None:
            rec.__exit__(None, None, None)
    except Exception:
        pass
    try:
        if prof is not None:
            prof.stop()
    except Exception:
        pass
