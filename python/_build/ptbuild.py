"""ptbuild - the PEP 517 build backend of the PerfTracker collector.

`pip install ./python` (or `pip install .` at the repository root) runs it
in the interpreter pip belongs to: it compiles the C extension
perftracker._collector with the C compiler that interpreter was built with
(sysconfig CC, its own Python headers), adds the pure-Python files, and
writes a wheel.  It needs nothing but the standard library, so it works
offline with pip's default build isolation (no setuptools download).

When the repository's CLI is built (`make` wrote build/perftracker), the
wheel also carries it as a script: pip puts `perftracker` and
`c4d_perftracker` in the environment's bin/, where the collector and the
user find it (the node agent is that binary).
"""

import base64
import hashlib
import io
import os
import re
import shlex
import subprocess
import sys
import sysconfig
import tempfile
import zipfile

NAME = "perftracker"
PKGS = {
    "perftracker": ["__init__.py", "_window.py"],
    "c4d_perftracker_collector": ["__init__.py", "PerfTracker.py"],
}
# The control-directory protocol and the helpers the extension links from
# source: python/ext_sources.txt, the one list mk/python.mk reads too.
EXT_LIST = "ext_sources.txt"


def _ext_c(pyroot):
    with open(os.path.join(pyroot, EXT_LIST)) as f:
        return [l.strip() for l in f if l.strip() and not l.startswith("#")]


def _roots():
    """(the folder holding perftracker/, the repository root)."""
    here = os.path.abspath(os.getcwd())
    if os.path.isfile(os.path.join(here, "perftracker", "_collector.c")):
        return here, os.path.dirname(here)
    if os.path.isfile(os.path.join(here, "python", "perftracker", "_collector.c")):
        return os.path.join(here, "python"), here
    raise RuntimeError("ptbuild: run from the repository or its python/ folder (no "
                       "perftracker/_collector.c under %s)" % here)


def _version(pkg_root):
    with open(os.path.join(pkg_root, "perftracker", "__init__.py"), encoding="utf-8") as f:
        m = re.search(r'^__version__ = "([^"]+)"', f.read(), re.M)
    if not m:
        raise RuntimeError("ptbuild: no __version__ in perftracker/__init__.py")
    return m.group(1)


def _tag():
    impl = "cp%d%d" % sys.version_info[:2]
    abi = "cp%d%d%s" % (sys.version_info[0], sys.version_info[1], getattr(sys, "abiflags", ""))
    plat = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return "%s-%s-%s" % (impl, abi, plat)


def _metadata(version):
    return ("Metadata-Version: 2.1\nName: %s\nVersion: %s\n"
            "Summary: PerfTracker collector: profile a running PyTorch job on request "
            "(torch >= 1.13 at run time)\n"
            "License: same as PerfTracker\nRequires-Python: >=3.8\n" % (NAME, version))


def _compile(pkg_root, repo, out):
    cc = shlex.split(os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc")
    inc = sysconfig.get_paths()["include"]
    srcs = [os.path.join(pkg_root, "perftracker", "_collector.c")] + \
        [os.path.join(repo, s) for s in _ext_c(pkg_root)]
    for s in srcs:
        if not os.path.isfile(s):
            raise RuntimeError("ptbuild: missing source %s (install from a full PerfTracker "
                               "checkout)" % s)
    cmd = cc + ["-std=gnu11", "-O2", "-fPIC", "-shared", "-pthread", "-D_GNU_SOURCE",
                "-I" + os.path.join(repo, "src"), "-I" + inc, "-o", out] + srcs + ["-lpthread"]
    sys.stderr.write("ptbuild: %s\n" % " ".join(cmd))
    subprocess.check_call(cmd)


def _record_line(arc, data):
    h = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (arc, h, len(data))


def _write_wheel(wheel_directory, files, version):
    """files: (archive name, bytes, executable)."""
    tag = _tag()
    name = "%s-%s-%s.whl" % (NAME, version, tag)
    di = "%s-%s.dist-info" % (NAME, version)
    files = list(files) + [
        (di + "/METADATA", _metadata(version).encode(), False),
        (di + "/WHEEL", ("Wheel-Version: 1.0\nGenerator: ptbuild\nRoot-Is-Purelib: false\n"
                         "Tag: %s\n" % tag).encode(), False),
        (di + "/top_level.txt", "".join(p + "\n" for p in sorted(PKGS)).encode(), False),
    ]
    record = [_record_line(a, d) for a, d, _ in files] + [di + "/RECORD,,"]
    files.append((di + "/RECORD", ("\n".join(record) + "\n").encode(), False))
    path = os.path.join(wheel_directory, name)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for arc, data, exe in files:
            zi = zipfile.ZipInfo(arc, date_time=(2020, 1, 1, 0, 0, 0))
            # file type bits too: pip makes a file executable only when S_ISREG
            zi.external_attr = (0o100755 if exe else 0o100644) << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(zi, data)
    return name


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    pkg_root, repo = _roots()
    version = _version(pkg_root)
    files = []
    for pkg, names in sorted(PKGS.items()):
        for n in names:
            with open(os.path.join(pkg_root, pkg, n), "rb") as f:
                files.append(("%s/%s" % (pkg, n), f.read(), False))
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    with tempfile.TemporaryDirectory() as tmp:
        so = os.path.join(tmp, "_collector" + suffix)
        _compile(pkg_root, repo, so)
        with open(so, "rb") as f:
            files.append(("perftracker/_collector" + suffix, f.read(), True))
    cli = os.path.join(repo, "build", "perftracker")
    scripts = "%s-%s.data/scripts/" % (NAME, version)
    if os.access(cli, os.X_OK):
        with open(cli, "rb") as f:
            data = f.read()
        files.append((scripts + "perftracker", data, True))
        # the reference's command name, without a second copy of the binary
        files.append((scripts + "c4d_perftracker",
                      b'#!/bin/sh\nexec "$(dirname "$0")/perftracker" "$@"\n', True))
    else:
        sys.stderr.write("ptbuild: %s not built: the wheel has the collector only; run 'make' "
                         "first to install the perftracker command too\n" % cli)
    return _write_wheel(wheel_directory, files, version)


def build_sdist(sdist_directory, config_settings=None):
    """A source archive of the collector and the C files it compiles."""
    import tarfile
    pkg_root, repo = _roots()
    version = _version(pkg_root)
    base = "%s-%s" % (NAME, version)
    name = base + ".tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as t:
        for pkg, names in PKGS.items():
            for n in names:
                t.add(os.path.join(pkg_root, pkg, n), "%s/python/%s/%s" % (base, pkg, n))
        for n in ("_collector.c", "collector_internal.h"):
            t.add(os.path.join(pkg_root, "perftracker", n), base + "/python/perftracker/" + n)
        t.add(os.path.join(pkg_root, "_build", "ptbuild.py"), base + "/python/_build/ptbuild.py")
        t.add(os.path.join(pkg_root, "pyproject.toml"), base + "/python/pyproject.toml")
        if os.path.isfile(os.path.join(repo, "pyproject.toml")):
            t.add(os.path.join(repo, "pyproject.toml"), base + "/pyproject.toml")
        t.add(os.path.join(pkg_root, EXT_LIST), base + "/python/" + EXT_LIST)
        for s in _ext_c(pkg_root):
            t.add(os.path.join(repo, s), base + "/" + s)
            h = s[:-2] + ".h"
            if os.path.isfile(os.path.join(repo, h)):
                t.add(os.path.join(repo, h), base + "/" + h)
        t.add(os.path.join(repo, "src", "util", "xalloc.h"), base + "/src/util/xalloc.h")
        info = ("Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (NAME, version)).encode()
        ti = tarfile.TarInfo(base + "/PKG-INFO")
        ti.size = len(info)
        t.addfile(ti, io.BytesIO(info))
    return name
