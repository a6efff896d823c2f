"""The profiling window: the thin Python layer over torch.profiler.

Called by the C collector (collector_step.c) from inside step() at the armed
step, at each step of the window and at its end; never on the idle step path.
Exceptions propagate to the C side, which logs them once and disables the
collector, so the training script never sees them.
"""

import json
import os
import re
import time

_prof = None
_rec = None
_first_step = None
_legacy = False
_t0_ns = 0
_fr_t0_ns = 0
# The Flight Recorder's ring buffer size when the user set none: torch reads
# it when the first process group is made (docs/collector.md, "Collectives").
FR_BUFFER_DEFAULT = "2000"
FR_ENV = ("TORCH_FR_BUFFER_SIZE", "TORCH_NCCL_TRACE_BUFFER_SIZE")
fr_state = ""
_c_on_kineto = False  # this window: the C tracer on a Kineto torch
_main_tid = 0         # native id of the thread that runs the window


def enable_flight_recorder():
    """Called at `import perftracker` and by PerfTracker() (not on the step path): ask torch to keep its
    Flight Recorder (every collective's process group, sequence number and
    times; gloo too since torch 2.8) unless the user chose a size or
    PERFTRACKER_FLIGHT_RECORDER=0.  Returns a word for the log: "on",
    "user" (the user's setting stands), "off" or "late" (a process group
    exists already: torch has read its setting); kept in fr_state."""
    global fr_state
    import sys
    if fr_state == "on" and os.environ.get("TORCH_FR_BUFFER_SIZE") == FR_BUFFER_DEFAULT:
        return fr_state  # set at import (__init__.py), before any process group
    dist = sys.modules.get("torch.distributed")
    if os.environ.get("PERFTRACKER_FLIGHT_RECORDER", "1") == "0":
        fr_state = "off"
    elif any(os.environ.get(n) for n in FR_ENV):
        fr_state = "user"
    else:
        fr_state = "on"
        try:
            if dist is not None and dist.is_available() and dist.is_initialized():
                fr_state = "late"
        except Exception:
            pass
        if fr_state == "on":
            os.environ["TORCH_FR_BUFFER_SIZE"] = FR_BUFFER_DEFAULT
    return fr_state


# ---- Which Python tracer (PERFTRACKER_PYTHON_TRACER) ----------------------
# Set once by PerfTracker() (never on the step path).  "kineto": torch's own
# (with_stack=True); "c": our C tracer (collector_tracer.c), its events merged
# into Kineto's export (collector_export.c, merge_kineto); "auto": AUTO_MODE
# (docs/bench.md, "Python tracer on Kineto torch").  Without Kineto the C
# tracer runs whatever the setting.
MODES = ("auto", "kineto", "c")
AUTO_MODE = "kineto"
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
    global _fr_t0_ns
    _fr_t0_ns = time.time_ns()
    _prof.start()
    _first_step = step
    _t0_ns = time.time_ns()
    # Our own step markers carry the global step number (torch 1.13's
    # profile.step() repeats the first number).
    # With the C tracer the C side opens the first one through step(), once
    # the tracer runs.
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


def _check_written(path):
    """Kineto's export logs a failed write and returns: raise the reason
    (a full disk, a file size limit) so that the collector goes quiet with
    it, as the legacy export's exception does."""
    try:
        if os.path.getsize(path) > 0:
            return
    except OSError:
        pass
    with open(path, "wb") as f:   # the write's own error, if it has one
        f.write(b" " * 65536)
        f.flush()
        os.fsync(f.fileno())
    os.unlink(path)
    raise OSError("torch.profiler wrote no trace to %s" % path)


_BASE_RE = re.compile(rb'"baseTimeNanoseconds"\s*:\s*(\d+)')


def _base_ns(path):
    """Kineto's baseTimeNanoseconds (near the head of its export), or 0."""
    try:
        with open(path, "rb") as f:
            m = _BASE_RE.search(f.read(1 << 16))
        return int(m.group(1)) if m else 0
    except (OSError, ValueError):
        return 0


def _fr_entry(e, base_ns):
    pg = e.get("process_group") or ("", "")
    ins, outs = e.get("input_sizes") or [], e.get("output_sizes") or []

    def nelems(sizes):
        n = 0
        for s in sizes:
            k = 1
            for d in s or ():
                k *= int(d)
            n += k
        return n
    dt = e.get("input_dtypes") or e.get("output_dtypes") or [""]
    return {"pg": str(pg[0]), "pg_desc": str(pg[1]) if len(pg) > 1 else "",
            "seq": int(e.get("p2p_seq_id") if e.get("is_p2p") else e.get("collective_seq_id") or 0),
            "name": str(e.get("profiling_name") or ""),
            "ts": (int(e["time_created_ns"]) - base_ns) / 1000.0,
            "in_nelems": nelems(ins), "out_nelems": nelems(outs), "dtype": str(dt[0] if dt else ""),
            "p2p": bool(e.get("is_p2p"))}


def flight_recorder(t0_ns, t1_ns, base_ns):
    """torch's Flight Recorder entries made in [t0_ns, t1_ns] (CLOCK_REALTIME,
    as torch stamps them) as a JSON list with ts in µs after base_ns, the
    trace's own time base; "" when torch has none or keeps none."""
    import pickle
    import torch
    c = getattr(torch._C, "_distributed_c10d", None)
    dumps = []
    for fn, kw in (("_dump_fr_trace", {"backend": "gloo"}), ("_dump_nccl_trace", {})):
        f = getattr(c, fn, None)
        if f is None or (fn == "_dump_nccl_trace" and not torch.cuda.is_available()):
            continue
        try:
            dumps.append(f(includeStackTraces=False, **kw))
        except Exception:
            try:
                dumps.append(f(includeStackTraces=False))
            except Exception:
                pass
    out, seen = [], set()
    for raw in dumps:
        # torch's own pickle of its own ring buffer, made in this process
        for e in pickle.loads(raw).get("entries", ()):
            ns = e.get("time_created_ns") or 0
            key = (e.get("process_group") and e["process_group"][0], e.get("record_id"), ns)
            if ns < t0_ns or ns > t1_ns or key in seen:
                continue
            seen.add(key)
            out.append(_fr_entry(e, base_ns))
    out.sort(key=lambda x: x["ts"])
    return json.dumps(out, separators=(",", ":")) if out else ""


def stop(step, path):
    """End the window and export the trace to `path`.  Returns
    (legacy, trace_start_ns, pid_token, tid_token, backend, rank, world,
    torch_version, collectives_json) for the C side, which writes its header
    into the file and merges the Python tracer's events."""
    global _prof, _rec
    import torch
    prof, rec = _prof, _rec
    _prof = _rec = None
    if rec is not None:
        rec.__exit__(None, None, None)
    prof.stop()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    prof.export_chrome_trace(path)
    _check_written(path)
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
    colls = ""
    if backend:
        try:
            colls = flight_recorder(_fr_t0_ns, time.time_ns(),
                                    start_ns if _legacy else _base_ns(path))
        except Exception:
            colls = ""
    return (1 if _legacy else 0, start_ns, pid_tok, tid_tok, backend, rank, world,
            str(getattr(torch, "__version__", "")), colls)


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
