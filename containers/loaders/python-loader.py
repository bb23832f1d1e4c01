# Python entry point of a sandbox container (see containers/cs-run, "preload" mode).
#
# The interpreter starts while the container waits in the pool; the program then arrives on stdin
# as "<nonce> <size>\n<source>", runs as __main__ from /sandbox/main.py with tracebacks as
# `python3 main.py` would print them, and the result line "<nonce> <rc>[ flags]" is printed here
# as soon as it ends, without waiting for interpreter teardown.
#
# Every matplotlib figure the program creates with pyplot is saved as a PNG under /sandbox/.plots
# when it is shown, closed or still open at exit, so the host can return it. This is done by a
# backend of the loader's that pyplot loads whichever backend the program selects (see
# _patch_pyplot), never by touching the program's source. Image files the program leaves at the
# top of its working directory come back too (see IMAGES); a figure saved to one that comes back
# as an image is not returned a second time.
#
# With CS_SESSION=1 this is a live interpreter that serves one call ("cell") after another, like
# a notebook kernel: see _session. Between calls the host may snapshot or restore a session's state
# (see _operation).
import os
import sys

WORKDIR = "/sandbox"
PLOTS = "/sandbox/.plots"
OUTPUTS = "/sandbox/outputs"
# The listing of outputs/, .plots/ and the workdir's new image files that the host reads before
# it fetches anything (as cs-run's list_files writes it): "<type> <size> <path>\0" per entry, at
# most LISTED of them.
LISTING = "/sandbox/.cs-files"
LISTED = 20000
# Image files at the top of the workdir that changed after the mark come back like those in
# outputs/ (a chart saved as chart.png, a picture PIL wrote): the formats an assistant's client
# shows as images, and the vector formats figures are saved in. Not hidden files, links or
# subfolders (where programs unpack data sets), and not the input files (written with the time
# 0). cs-run's workdir_images and the Node loader have the same list.
IMAGES = (b".png", b".jpg", b".jpeg", b".gif", b".webp", b".svg", b".pdf")
# Of those, the ones that come back as images.
SHOWN = (b".png", b".jpg", b".jpeg", b".gif", b".webp")
# The mark: written by cs-run when the sandbox starts, and in a session when each call ends (here,
# and shared with cs-run, which reports for a call the interpreter did not survive). Sessions: the
# attached stdin, handed over by cs-run.
MARK = "/tmp/.cs-mark"
START = "/tmp/.cs-start"
HOST_FD = 3
# Where a session's snapshot is handed over (see _operation): the state and record.json it leaves,
# the archive of the workdir and the state it restores from. In the workdir, whose volume the
# engine's archive endpoint reaches (not /tmp, a tmpfs it does not); left out of what a restore
# clears and extracts, and removed when the next call starts.
SNAPSHOT = "/sandbox/.cs-snapshot"
# What a restore neither clears nor extracts in the workdir: the handover, and the session's
# workspaces (/workspace leads to .cs-workspace), which are the folders' and not a snapshot's.
KEPT_IN_WORKDIR = (".cs-snapshot", ".cs-workspace")
# The names of the cells' module that are not the program's state, neither saved nor removed: the
# module's own, set when the session made it, and the warnings module's record of the warnings
# issued from it.
OWN_NAMES = frozenset(
    "__builtins__ __name__ __doc__ __package__ __loader__ __spec__ __warningregistry__".split()
)
# The backend that pyplot loads whatever the program selects.
BACKEND = "module://code_sandbox_mpl"


def _prepare_matplotlib_cache():
    # The image ships a prebuilt font list; without it matplotlib scans every font on first use.
    cache = os.environ.get("MPLCONFIGDIR")
    shipped = "/usr/local/share/code-sandbox/matplotlib"
    if not cache or not os.path.isdir(shipped):
        return
    try:
        os.makedirs(cache, exist_ok=True)
        for name in os.listdir(shipped):
            if name.endswith(".json"):
                with open(os.path.join(shipped, name), "rb") as src:
                    data = src.read()
                with open(os.path.join(cache, name), "wb") as dst:
                    dst.write(data)
    except OSError:
        pass


class _Plots:
    """Saves figures once each, named by creation order."""

    created = 0
    saved = 0

    @classmethod
    def save(cls, figure):
        if getattr(figure, "_cs_saved", False):
            return
        # A figure the program saved to a file that comes back as an image comes back as that
        # file only, as it was when saved (whether it changed since cannot be told: drawing
        # itself marks some figures as changed).
        shown = getattr(figure, "_cs_file", None)
        if shown is not None and os.path.isfile(shown):
            return
        figure._cs_saved = True
        seq = getattr(figure, "_cs_seq", None)
        if seq is None:
            cls.created += 1
            seq = cls.created
        try:
            os.makedirs(PLOTS, exist_ok=True)
            figure.savefig(os.path.join(PLOTS, "figure-%04d.png" % seq), format="png")
            cls.saved += 1
        except Exception as e:  # a figure that cannot be drawn must not hide the program's result
            sys.stderr.write("code-sandbox: could not save figure %d: %s\n" % (seq, e))

    @classmethod
    def save_open(cls):
        helpers = sys.modules.get("matplotlib._pylab_helpers")
        if helpers is None:
            return
        figures = [m.canvas.figure for m in helpers.Gcf.get_all_fig_managers()]
        figures.sort(key=lambda f: getattr(f, "_cs_seq", 0))
        for figure in figures:
            cls.save(figure)


def _define_backend(ns):
    # The module body of "module://code_sandbox_mpl": Agg rendering, and show() saves instead of
    # opening a window (then closes, as closing the windows of a blocking show would).
    from matplotlib.backend_bases import FigureManagerBase
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    class FigureManager(FigureManagerBase):
        def __init__(self, canvas, num):
            super().__init__(canvas, num)
            _Plots.created += 1
            canvas.figure._cs_seq = _Plots.created

        def destroy(self):
            _Plots.save(self.canvas.figure)
            super().destroy()

    class FigureCanvas(FigureCanvasAgg):
        manager_class = FigureManager

    def show(*args, **kwargs):
        _Plots.save_open()
        import matplotlib.pyplot as plt

        plt.close("all")

    ns.update(FigureCanvas=FigureCanvas, FigureManager=FigureManager, show=show,
              backend_version="code-sandbox")


def _patch_pyplot(plt):
    # pyplot loads a backend in one place, switch_backend: for its first figure (with the name
    # rcParams holds, which matplotlib.use(), MPLBACKEND or the program put there), and when
    # matplotlib.use() or the program switches later. Whatever name it is given, it loads the
    # loader's backend (which renders with Agg), and the name asked for is kept, so that the
    # program sees the backend it chose, and use() of that name again changes nothing, as usual.
    # The sandbox has no display, so an interactive backend would show nothing either.
    import functools

    import matplotlib
    from matplotlib import rcsetup
    from matplotlib.figure import Figure

    real_switch = plt.switch_backend

    @functools.wraps(real_switch)
    def switch_backend(newbackend):
        # (The automatic choice comes back here with the name it picks: "agg", without a display.)
        if newbackend is rcsetup._auto_backend_sentinel:
            return real_switch(newbackend)
        try:
            name = rcsetup.validate_backend(newbackend)
        except ValueError as e:  # as pyplot says of a name that is no backend
            raise ImportError(str(e)) from None
        real_switch(BACKEND)
        matplotlib.rcParams["backend"] = matplotlib.rcParamsDefault["backend"] = name
        sys.modules["matplotlib.backends"].backend = name

    plt.switch_backend = switch_backend

    real_savefig = Figure.savefig

    @functools.wraps(real_savefig)
    def savefig(self, fname, *args, **kwargs):
        real_savefig(self, fname, *args, **kwargs)
        path = _shown_file(fname, kwargs.get("format"))
        if path is not None:
            self._cs_file = path

    Figure.savefig = savefig

    import atexit

    atexit.register(_Plots.save_open)


def _shown_file(fname, fmt):
    """The file savefig(fname, format=fmt) wrote, when it comes back as an image; else None."""
    try:
        name = os.fsencode(fname)
    except TypeError:  # a file object
        return None
    ext = os.path.splitext(name)[1]
    if fmt is None and not ext:
        # (savefig then writes the name with the default format's extension)
        import matplotlib

        fmt = matplotlib.rcParams["savefig.format"]
        name = name.rstrip(b".") + b"." + os.fsencode(fmt)
    kind = b"." + os.fsencode(fmt).lower() if fmt else ext.lower()
    path = os.path.abspath(name)
    folder, base = os.path.split(path)
    if kind not in SHOWN or not base.lower().endswith(SHOWN):
        return None
    workdir, outputs = os.fsencode(WORKDIR), os.fsencode(OUTPUTS)
    if (folder == workdir and not base.startswith(b".")) or path.startswith(outputs + b"/"):
        return path
    return None


_PATCHES = {"matplotlib.pyplot": _patch_pyplot}


def _install_import_hooks():
    # (importlib.machinery is already loaded; importlib.abc would pull in importlib.resources,
    # pathlib and tempfile, 12 ms of every sandbox's start, for base classes the import system
    # does not need: a finder needs find_spec, a loader create_module and exec_module.)
    import importlib.machinery

    class Hooks:
        # What to do to a module once it has been loaded, before anyone uses it (once each).
        patches = _PATCHES

        def find_spec(self, name, path=None, target=None):
            if name == "code_sandbox_mpl":
                return importlib.machinery.ModuleSpec(name, self)
            patch = self.patches.pop(name, None)
            if patch is None:
                return None
            spec = importlib.machinery.PathFinder.find_spec(name, path)
            if spec is None or spec.loader is None:
                return spec
            real = spec.loader.exec_module

            def exec_module(module):
                real(module)
                try:
                    patch(module)
                except Exception as e:  # (a matplotlib the program installed, say)
                    sys.stderr.write("code-sandbox: figures may not come back: %s\n" % e)

            spec.loader.exec_module = exec_module
            return spec

        def create_module(self, spec):
            return None

        def exec_module(self, module):
            _define_backend(module.__dict__)

    sys.meta_path.insert(0, Hooks())


def _main():
    _prepare_matplotlib_cache()
    _install_import_hooks()

    # What reports the program's imports needs, imported while the sandbox waits.
    import opcode  # noqa: F401

    head, preloaded = _await_header()
    nonce = head[0]
    status_file = os.environ.pop("CS_PRELOAD")  # for cs-run, not for the program
    with open(status_file, "wb") as f:
        f.write(nonce)
    src = sys.stdin.buffer.read(int(head[1]))
    if preloaded:
        _unshadow(preloaded)
        if b"MPLBACKEND" in src:
            _forget_matplotlib()
    with open("main.py", "wb") as f:
        f.write(src)
    # The attached stdin stays open on a private descriptor: when files are to be fetched, the
    # container must live until the host has them. The program gets /dev/null as stdin.
    host = os.dup(0)
    null = os.open("/dev/null", os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    sys.argv = ["main.py"]
    sys.path[0] = "/sandbox"
    # The result line goes out on private copies of stdout and stderr: the program may close its
    # own.
    out, err = os.dup(1), os.dup(2)
    main_pid = os.getpid()

    rc, code = _run(src)
    if os.getpid() != main_pid:
        # A child the program forked returned from it: it ends as it would under
        # `python3 main.py`, and only the original process reports the result.
        for s in (sys.stdout, sys.stderr):
            try:
                s.flush()
            except Exception:
                pass
        os._exit(rc & 0xFF)
    # What normal interpreter exit would do (exit handlers, waiting for threads), then the result
    # line at once: tearing the interpreter down would only delay it.
    # (threading only when the program imported it: otherwise there is no thread to wait for.)
    import atexit

    threading = sys.modules.get("threading")
    try:
        if threading is not None:
            threading._shutdown()
    except Exception:
        pass
    atexit._run_exitfuncs()
    for s in (sys.stdout, sys.stderr):
        try:
            s.flush()
        except Exception:
            pass
    rc &= 0xFF
    flags = ""
    images = _workdir_images(_mtime(MARK))
    try:
        if images or os.listdir(OUTPUTS):
            flags += " out"
    except OSError:
        pass
    if _Plots.saved:
        flags += " plots"
    if flags:
        _list_files(images)
    flags += _usage_flags() + _preload_flags() + _imports_flag(code)
    line = nonce + b" " + str(rc).encode() + flags.encode() + b"\n"
    # For cs-run: the line is out (it must not print another: the status file goes), and the
    # container is to stay up until the host closes stdin (the marker: see its linger). A
    # supervisor from before the marker exits once the file is gone, as it always did.
    os.unlink(status_file)
    try:
        os.close(os.open(status_file + "-reported", os.O_WRONLY | os.O_CREAT, 0o600))
    except OSError:
        pass
    os.write(out, line)
    os.write(err, line)
    if " out" in flags or " plots" in flags:
        while os.read(host, 65536):
            pass
    os._exit(rc)


def _await_header():
    """The program's header ("<nonce> <size>"), split, and the modules preloaded before it came.
    The pool may send a "preload" line first (see _preload). Both lines are read a byte at a
    time, so that nothing of the program is buffered while preloading looks for it."""
    line = _read_line(0)
    preloaded = ()
    if line.startswith(b"preload "):
        preloaded = _preload(line.split()[1:])
        line = _read_line(0)
    head = line.split()
    if len(head) != 2 or not head[1].isdigit():
        sys.stderr.write("cs-run: bad header\n")
        os._exit(90)
    return head, preloaded


def _read_line(fd):
    """One line of fd, read a byte at a time (a header is some 30 bytes): nothing after it is
    consumed."""
    line = bytearray()
    while True:
        b = os.read(fd, 1)
        line += b
        if not b or b == b"\n":
            return bytes(line)


# Preloading: while the sandbox waits in the pool, the server may send
#   preload <budget bytes> <slow ms> <module>[:<expected bytes>] ...
# before the program's header: the modules most recent calls imported (the server learns them
# from the "imports" this loader reports, see _imports_flag), most used first. Each is imported
# as the program's own `import` would, stopping when the program arrives (it is not kept
# waiting for more than the import under way), and before a module whose expected memory (what
# it cost an earlier sandbox) would take the sandbox past the budget, or once past it. The
# result line says what was preloaded with what each cost, and which modules failed or took
# longer than <slow ms>, so the server stops asking for them.
#
# What a program sees of it: those modules in sys.modules, imported before it ran. They are
# the image's own libraries (the server asks for no other) imported in this fresh interpreter
# with the program's environment, before any of its code: nothing of another call is in them.
# What they tell is only that recent calls on this server imported them. A program that brings
# a module of the same name (a file or folder of that name in its workdir) gets its own: the
# preloaded one is forgotten before it runs (_unshadow).
_preload_report = {"done": [], "dropped": []}


def _preload(words):
    import select
    import time

    try:
        budget, slow = int(words[0]), int(words[1])
    except (IndexError, ValueError):
        return ()
    done = []
    for word in words[2:16]:
        name, _, expected = word.decode("ascii", "replace").partition(":")
        if len(name) > 64 or not name.replace(".", "").replace("_", "").isalnum():
            continue
        if select.select([0], [], [], 0)[0]:
            break  # the program is here
        before = _memory_now()
        if before is not None and before + (int(expected) if expected.isdigit() else 0) > budget:
            continue  # (a smaller one may still fit)
        start = time.monotonic()
        try:
            __import__(name)
        except BaseException:  # (a module may raise anything, SystemExit included)
            _preload_report["dropped"].append(name)
            continue
        ms = (time.monotonic() - start) * 1000
        after = _memory_now()
        cost = max(0, after - before) if before is not None and after is not None else 0
        done.append(name)
        _preload_report["done"].append("%s:%d" % (name, cost))
        if ms > slow:
            _preload_report["dropped"].append(name)
        if after is not None and after > budget:
            break
        if name == "matplotlib.pyplot" and not select.select([0], [], [], 0)[0]:
            _warm_matplotlib()
    return done


def _warm_matplotlib():
    # What a first figure costs beyond any other, done ahead on one throwaway figure kept out of
    # pyplot: the Agg backend and the loader's, PIL's PNG writer and plugins, DejaVu Sans, the
    # font lookup cache and the math-text parser (a first $x$ label or log axis costs 30 ms
    # more). The program's figures come out byte for byte the same, and it sees no figure, no
    # figure number, no chosen backend, the same rcParams. About 0.1 s of CPU, 4 MB.
    try:
        import gc
        import importlib
        import io

        from matplotlib import text
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
        from matplotlib.mathtext import MathTextParser

        importlib.import_module("code_sandbox_mpl")
        figure = Figure()
        FigureCanvasAgg(figure)
        axes = figure.add_subplot()
        axes.plot([1, 2, 3])
        axes.set_xlabel("$x$")
        figure.savefig(io.BytesIO(), format="png")
        # (Entries keyed by the throwaway renderer and parser, of no use again.)
        text._get_text_metrics_with_cache_impl.cache_clear()
        MathTextParser._parse_cached.cache_clear()
        del figure, axes
        gc.collect()
    except Exception:  # (another matplotlib: the first figure pays, as without preloading)
        pass


def _memory_now():
    """What the sandbox's cgroup holds now, in bytes (v2, then v1); None if it cannot be read."""
    for path in ("/sys/fs/cgroup/memory.current", "/sys/fs/cgroup/memory/memory.usage_in_bytes"):
        try:
            with open(path) as f:
                return int(f.read())
        except (OSError, ValueError):
            pass
    return None


def _unshadow(preloaded):
    # A module the program brings itself (main.py's folder comes first on sys.path) wins over a
    # preloaded one of the same name, as it would have without preloading.
    tops = {name.partition(".")[0] for name in preloaded}
    mine = [t for t in tops if os.path.exists(t + ".py") or os.path.isdir(t)]
    for name in list(sys.modules):
        if name.partition(".")[0] in mine:
            del sys.modules[name]


def _forget_matplotlib():
    # matplotlib reads MPLBACKEND when it is imported: a program that sets it first must get a
    # matplotlib imported after that. Its Python modules are imported again (about 0.4 s); its
    # compiled ones stay, as they hold no state of its own. So do those of the libraries that
    # hold matplotlib's modules (seaborn, pandas' plotting, the loader's backend).
    family = ("matplotlib", "mpl_toolkits", "seaborn", "pandas.plotting._matplotlib",
              "code_sandbox_mpl")
    for name in list(sys.modules):
        if not any(name == f or name.startswith(f + ".") for f in family):
            continue
        if not (getattr(sys.modules[name], "__file__", None) or "").endswith(".so"):
            del sys.modules[name]
    _PATCHES["matplotlib.pyplot"] = _patch_pyplot


def _preload_flags():
    flags = ""
    if _preload_report["done"]:
        flags += " preloaded=" + ",".join(_preload_report["done"])
    if _preload_report["dropped"]:
        flags += " preload-dropped=" + ",".join(_preload_report["dropped"])
    return flags


def _imports_flag(code, limit=16):
    """ imports=<names>: the modules the program's code imports (its import statements, in
    functions too), as far as they were imported when it ended, at most two levels deep
    ("matplotlib.pyplot", also for `from matplotlib import pyplot`), without the standard
    library's and relative imports: what the server learns what to preload from."""
    if code is None:
        return ""
    import opcode  # (imported while the sandbox waited: see _main)

    import_name, load_const = opcode.opmap["IMPORT_NAME"], opcode.opmap["LOAD_CONST"]
    extended = opcode.EXTENDED_ARG
    stdlib = getattr(sys, "stdlib_module_names", ())
    names = []

    def scan(co):
        raw, arg, consts = co.co_code, 0, []
        for i in range(0, len(raw) - 1, 2):
            op = raw[i]
            if op == extended:
                arg = (arg | raw[i + 1]) << 8
                continue
            arg |= raw[i + 1]
            if op == load_const:
                consts = (consts + [co.co_consts[arg]])[-2:]
            elif op == import_name:
                level, fromlist = consts if len(consts) == 2 else (0, None)
                name = co.co_names[arg]
                top = name.partition(".")[0]
                if level == 0 and 0 < len(name) <= 64 and top not in stdlib:
                    name = ".".join(name.split(".")[:2])
                    subs = [name + "." + f for f in fromlist or () if isinstance(f, str)]
                    found = [m for m in subs if "." not in name and m in sys.modules]
                    for m in found or [name]:
                        if m not in names and m in sys.modules and len(m) <= 64:
                            names.append(m)
            if op != 0:  # (CACHE entries come between an instruction and the next)
                consts = consts if op == load_const else []
            arg = 0
        for c in co.co_consts:
            if hasattr(c, "co_code") and len(names) < limit:
                scan(c)

    try:
        scan(code)
    except Exception:  # (another interpreter's bytecode: nothing learned)
        return ""
    return " imports=" + ",".join(names[:limit]) if names else ""


def _list_files(images):
    import stat

    records = []
    try:
        os.unlink(LISTING)
    except OSError:
        pass
    for top in (b"outputs", b".plots"):
        for root, dirs, files in os.walk(b"/sandbox/" + top):
            rel = os.path.relpath(root, b"/sandbox")
            for name in dirs + files:
                if len(records) >= LISTED:
                    break
                path = os.path.join(rel, name)
                try:
                    st = os.lstat(b"/sandbox/" + path)
                except OSError:
                    continue
                kind = (b"f" if stat.S_ISREG(st.st_mode) else b"d" if stat.S_ISDIR(st.st_mode)
                        else b"l" if stat.S_ISLNK(st.st_mode) else b"o")
                records.append(kind + b" " + str(st.st_size).encode() + b" " + path + b"\0")
    records += images[: LISTED - len(records)]
    try:
        with open(LISTING, "wb") as f:
            f.write(b"".join(records))
    except OSError:
        pass


def _workdir_images(since):
    """The listing's records of the image files at the top of the workdir that changed after time
    since (ns): see IMAGES."""
    import stat

    records = []
    try:
        entries = list(os.scandir(os.fsencode(WORKDIR)))
    except OSError:
        return records
    for entry in entries:
        if entry.name.startswith(b".") or not entry.name.lower().endswith(IMAGES):
            continue
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode) and st.st_mtime_ns > since:
            records.append(b"f " + str(st.st_size).encode() + b" " + entry.name + b"\0")
    return records


def _mtime(path):
    try:
        return os.stat(path).st_mtime_ns
    except OSError:  # (no mark: /tmp was full; input files still have the time 0)
        return 0


def _usage_flags(cpu_before=0):
    """ mem=<peak bytes> cpu=<ms> of this container, from its cgroup (v2, then v1); the CPU time
    counted from cpu_before."""
    flags = ""
    for path in ("/sys/fs/cgroup/memory.peak", "/sys/fs/cgroup/memory/memory.max_usage_in_bytes"):
        try:
            with open(path) as f:
                flags += " mem=%d" % int(f.read())
            break
        except (OSError, ValueError):
            pass
    cpu = _cpu_ms()
    if cpu is not None:
        flags += " cpu=%d" % (cpu - cpu_before)
    return flags


def _cpu_ms():
    try:
        with open("/sys/fs/cgroup/cpuacct/cpuacct.usage") as f:
            return int(f.read()) // 1000000
    except (OSError, ValueError):
        try:
            with open("/sys/fs/cgroup/cpu.stat") as f:
                for line in f:
                    key, _, value = line.partition(" ")
                    if key == "usage_usec":
                        return int(value) // 1000
        except (OSError, ValueError):
            pass
    return None


def _exit_status(e):
    """The status sys.exit(e.code) gives, as the interpreter would set it."""
    if e.code is None or isinstance(e.code, int):
        return e.code or 0
    print(e.code, file=sys.stderr)
    return 1


def _run(src):
    """Runs the program as __main__; returns its exit status and its code object (None when it
    did not compile)."""
    # traceback only when there is one to print: importing it costs the call 3 ms.
    g = {"__name__": "__main__", "__file__": "/sandbox/main.py", "__builtins__": __builtins__}
    try:
        code = compile(src, "/sandbox/main.py", "exec")
    except SyntaxError as e:
        import traceback

        traceback.print_exception(type(e), e, None)
        return 1, None
    try:
        exec(code, g)
    except SystemExit as e:
        return _exit_status(e), code
    except BaseException as e:
        import traceback

        traceback.print_exception(type(e), e, e.__traceback__.tb_next)
        return 1, code
    return 0, code


def _session():
    """Serves calls one after another (CS_SESSION=1), each as a cell of one __main__: variables,
    imports and functions persist. cs-run passes the attached stdin on HOST_FD, with /dev/null as
    stdin, and waits for this process (the leader of its own process group) to end; every call
    gets its result line here, and the next header is read at once: nothing waits for the host
    to close stdin (the host fetches files before it sends the next call). The end of stdin ends
    the session.

    The host interrupts a call past its timeout with SIGINT: the cell ends with KeyboardInterrupt
    (rc 130) and the session goes on; between calls the signal is ignored.
    """
    import signal
    import types

    _prepare_matplotlib_cache()
    _install_import_hooks()
    status_file = os.environ.pop("CS_PRELOAD")  # for cs-run, not for the program
    os.environ.pop("CS_SESSION", None)
    os.set_inheritable(HOST_FD, False)
    host = os.fdopen(HOST_FD, "rb")
    out, err = os.dup(1), os.dup(2)
    kernel = os.getpid()
    # The cells' module is the __main__ that pickle (multiprocessing) looks functions up in; this
    # one stays referenced here, for the functions defined in it.
    loader = sys.modules["__main__"]
    main = types.ModuleType("__main__")
    main.__builtins__ = loader.__builtins__
    sys.modules["__main__"] = main
    sys.argv = [""]
    sys.path[0] = "/sandbox"

    mark = _next_tick(_touch(MARK))
    number = 0
    while True:
        # Installed anew before each call: a cell may have replaced it.
        signal.signal(signal.SIGINT, _interrupt)
        head = host.readline()
        if not head:
            _flush()
            os._exit(0)
        head = head.split()
        if len(head) < 2 or not head[1].isdigit():
            sys.stderr.write("cs-run: bad header\n")
            _flush()
            os._exit(90)
        nonce = head[0]
        src = host.read(int(head[1]))
        if len(head) > 2:
            # Not a call: the cell counter, the mark, the status file and .plots stay as they are
            # (a restore re-arms the mark: the files it brings back are not the next call's).
            rc = _operation(head[2:], src, main.__dict__)
            line = nonce + b" " + str(rc).encode() + b"\n"
            if head[2:] == [b"restore"]:
                mark = _touch(MARK)
            os.write(out, line)
            os.write(err, line)
            if head[2:] == [b"restore"]:
                _next_tick(mark)
            continue
        try:
            with open(status_file, "wb") as f:
                f.write(nonce)
        except OSError:  # (/tmp full: only the answer for a call the kernel dies in is lost)
            pass
        # The last snapshot's handover is the host's by now; its room is the program's again.
        _remove(SNAPSHOT)
        for name in _listdir(PLOTS):
            _remove(os.path.join(PLOTS, name))
        _Plots.created = _Plots.saved = 0
        cpu = _cpu_ms() or 0
        number += 1
        try:
            rc = _cell(src, "<cell %d>" % number, main.__dict__)
        except KeyboardInterrupt:  # came just after the cell's own handling
            rc = 130
        _running[0] = False
        signal.signal(signal.SIGINT, _interrupt)
        if os.getpid() != kernel:
            # A child the cell forked returned from it: only the kernel reports.
            _flush()
            os._exit(rc & 0xFF)
        # Figures still open are this cell's: saved now, and closed so that no later cell saves
        # them again.
        try:
            _Plots.save_open()
            plt = sys.modules.get("matplotlib.pyplot")
            if plt is not None:
                plt.close("all")
        except Exception as e:
            sys.stderr.write("code-sandbox: could not save figures: %s\n" % e)
        _flush()
        rc &= 0xFF
        flags = ""
        images = _workdir_images(mark)
        if images or _changed_since(OUTPUTS, mark):
            flags += " out"
        if _listdir(PLOTS):
            flags += " plots"
        if flags:
            _list_files(images)
        flags += _usage_flags(cpu)
        mark = _touch(MARK)
        line = nonce + b" " + str(rc).encode() + flags.encode() + b"\n"
        try:
            os.unlink(status_file)
        except OSError:
            pass
        os.write(out, line)
        os.write(err, line)
        _next_tick(mark)


# Snapshots. A header with a third word, between calls, asks the session for an operation on its
# state instead of a call (answered "<nonce> <rc>" on both streams like one, rc 0 done, 1 failed, 2
# an operation this loader does not know), with record.json in SNAPSHOT saying what was done:
#   "<nonce> <size> snapshot" and {"max_bytes": N}: the cells' variables, each pickled on its own
#     with dill, into SNAPSHOT/state (the host then takes the workdir's files itself);
#   "<nonce> <size> restore" (no body): the workdir's files from SNAPSHOT/files.tar (the engine's
#     archive of /sandbox) and the variables from SNAPSHOT/state, both put there by the host.
# What the objects themselves print meanwhile (a __reduce__, a __setstate__, a __del__, a warning)
# goes nowhere: between calls the streams carry the answer only.


class _Refused(Exception):
    """What an operation refuses (an archive's entry, a snapshot it cannot read), and why: the
    message is the reason."""


class _OverCap(BaseException):
    """The snapshot passed its cap. (Not an Exception: no handler of a library or of the
    program's objects that the pickler runs may take it for a value that cannot be pickled.)"""


def _operation(words, body, g):
    """Runs the operation a header's third word names on the cells' globals g; returns the
    answer's status. Whatever goes wrong (MemoryError too) is in record.json, and the session goes
    on."""
    if words == [b"snapshot"]:
        run = _snapshot
    elif words == [b"restore"]:
        run = _restore
    else:
        return 2
    import json
    import warnings

    _flush()
    saved = []
    null = os.open(os.devnull, os.O_WRONLY)
    for fd in (1, 2):
        try:
            saved.append((fd, os.dup(fd)))
            os.dup2(null, fd)
        except OSError:  # (a descriptor the program closed)
            pass
    os.close(null)
    try:
        # (The program's warning filters stay as they were.)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                record = run(body, g)
            except BaseException as e:
                record = {"kind": "python", "error": _why(e)}
            try:
                os.makedirs(SNAPSHOT, 0o700, exist_ok=True)
                with open(os.path.join(SNAPSHOT, "record.json"), "w") as f:
                    json.dump(record, f)
            except BaseException:  # (/tmp full: the host finds no record, and says so)
                return 1
            return 1 if "error" in record else 0
    finally:
        _flush()
        for fd, copy in saved:
            os.dup2(copy, fd)
            os.close(copy)


def _why(e):
    """A short reason for a record: the exception's type and message."""
    try:
        text = str(e)
    except Exception:
        text = ""
    if not isinstance(e, (_Refused, _OverCap)):
        text = type(e).__name__ + (": " + text if text else "")
    return text[:200]


def _snapshot(body, g):
    """Pickles the cells' globals g into SNAPSHOT/state; returns the record."""
    import json
    import shutil

    shutil.rmtree(SNAPSHOT, ignore_errors=True)
    os.mkdir(SNAPSHOT, 0o700)
    try:
        cap = json.loads(body)["max_bytes"]
    except Exception as e:
        raise _Refused("the request has no max_bytes: %s" % _why(e)) from None
    if not isinstance(cap, int) or isinstance(cap, bool) or cap < 0:
        raise _Refused("max_bytes is no size: %.50r" % (cap,))
    path = os.path.join(SNAPSHOT, "state")
    try:
        try:
            with open(path, "wb") as f:
                kept, not_kept = _write_state(g, cap, f)
                size = f.tell()
        except _OverCap as e:
            if e.args:
                raise
            raise _OverCap(
                "the session's state is more than %d bytes, the cap for a snapshot" % cap
            ) from None
    except BaseException:
        try:
            os.unlink(path)
        except OSError:
            pass
        raise
    return {"kind": "python", "kept": kept, "not_kept": not_kept, "bytes": size}


def _write_state(g, cap, f):
    """Writes into f what stdlib pickle makes of {"version": 1, "python": sys.version, "globals":
    {name: dill's pickle of the global}}, at most cap bytes (else _OverCap). Written by hand, so
    that each global's pickle goes straight into f as it is made: neither a second copy of it
    nor the others' are held in memory. A global that cannot be pickled costs only itself.
    Returns the names kept and those not, as {"name", "type", "why"}."""
    import io
    import struct

    dump = _dill_dump()
    out = _StateFile(f, cap)
    not_kept = []

    def refuse(name, why):
        not_kept.append({"name": name, "type": type(g[name]).__name__, "why": why})

    def over(name):
        return _OverCap(
            "the session's state is more than %d bytes, the cap for a snapshot (it passed it at "
            "%s, a %s)" % (cap, name, type(g[name]).__name__)
        )

    # (PROTO 4, a dict and its items: the version, the Python, the globals' dict.)
    head = b"\x80\x04}(" + _pickled_str("version") + b"K\x01" + _pickled_str("python")
    out.write(head + _pickled_str(sys.version) + _pickled_str("globals") + b"}(")
    names = sorted(n for n in g if isinstance(n, str) and n not in OWN_NAMES)
    # The cells' classes first (see _restore), made in memory (they are small): one that refers
    # to another that is not kept (its base) is not kept either.
    held, refers = {}, {}
    for name in [n for n in names if isinstance(g[n], type)]:
        buf = _StateFile(io.BytesIO(), cap - out.size - sum(map(len, held.values())))
        try:
            refers[name] = dump(g[name], buf)
        except _OverCap:
            raise over(name) from None
        except BaseException as e:  # (a __reduce__ may raise anything, SystemExit too)
            refuse(name, _why(e))
            continue
        held[name] = buf.file.getvalue()
    dropped = True
    while dropped:
        dropped = False
        for name in list(held):
            missing = sorted(refers[name].difference(held))
            if missing:
                del held[name]
                refuse(name, "it needs %s, which is not kept" % missing[0])
                dropped = True
    try:
        for name, data in held.items():
            out.write(_pickled_str(name) + b"\x8e" + struct.pack("<Q", len(data)) + data)
    except _OverCap:
        raise over(name) from None
    kept = list(held)
    del held
    for name in [n for n in names if not isinstance(g[n], type)]:
        # BINBYTES8, its length written once its bytes are.
        start = out.size
        entry = _pickled_str(name) + b"\x8e"
        try:
            out.write(entry + bytes(8))
            mark = out.size
            try:
                refers = _plain_dump(g[name], out)
            except _OverCap:
                raise
            except BaseException:
                out.cut(mark)
                refers = dump(g[name], out)
            missing = sorted(refers.difference(kept))
            if missing:
                raise _Refused("it needs %s, which is not kept" % missing[0])
        except _OverCap:
            raise over(name) from None
        except BaseException as e:
            out.cut(start)
            refuse(name, _why(e))
            continue
        out.patch(start + len(entry), struct.pack("<Q", out.size - start - len(entry) - 8))
        kept.append(name)
    out.write(b"uu.")
    not_kept.sort(key=lambda n: n["name"])
    return sorted(kept), not_kept


def _plain_dump(value, out):
    """Pickles value into out with the C pickler, five to ten times dill's speed on a DataFrame
    (dill's is the pure-Python one), when it refers to nothing of the cells' own: a function or
    a class defined in a cell (an instance of one refers to its class) is pickled by name there,
    which a fresh session cannot look up, so that raises here and dill, which pickles them by
    value, takes the value instead; so does whatever the C pickler cannot take (a module, a
    lambda). Returns the cells' names the pickle refers to: none."""
    import pickle

    class Plain(pickle.Pickler):
        def reducer_override(self, obj):
            if isinstance(obj, type) or callable(obj):
                if getattr(obj, "__module__", None) == "__main__":
                    raise pickle.PicklingError("a cell's own")
            return NotImplemented

    Plain(out, protocol=5).dump(value)
    return set()


def _pickled_str(text):
    # (BINUNICODE, as pickle writes a str.)
    import struct

    data = text.encode("utf-8", "surrogatepass")
    return b"X" + struct.pack("<I", len(data)) + data


class _StateFile:
    """The file a global is pickled into: it refuses to grow past the cap (at the first byte
    over it, so that a value over the cap is not pickled whole first), and takes back what a
    global that could not be pickled wrote."""

    def __init__(self, file, cap):
        self.file, self.cap, self.size = file, cap, 0

    def write(self, data):
        n = memoryview(data).nbytes
        if self.size + n > self.cap:
            raise _OverCap()
        self.file.write(data)
        self.size += n
        return n

    def cut(self, size):
        self.file.seek(size)
        self.file.truncate()
        self.size = size

    def patch(self, at, data):
        self.file.seek(at)
        self.file.write(data)
        self.file.seek(self.size)


def _dill_dump():
    """A function that pickles a value into a file with dill (else _Refused: this Python has no
    dill), and returns the names of the cells' classes that the pickle refers to."""
    import importlib
    import pickle
    import struct
    import types
    import warnings

    try:
        import dill
    except ImportError as e:
        raise _Refused("this image's Python has no dill, which snapshots need: %s" % e) from None

    class Dispatch(dict):
        """dill's table of what pickles each type, which it adds to as it meets new types; but
        for save_picklebuffer."""

        def get(self, t, default=None):
            if t is pickle.PickleBuffer:
                return save_picklebuffer
            return dill.Pickler.dispatch.get(t, default)

    class Pickler(dill.Pickler):
        """dill's, with the settings below: functions of the cells by value, with a reference to
        the cells' globals (dill's way for those of __main__ without recurse), so that restored
        they see the restored globals as they saw these; an open file by name and position,
        opened again without truncating it (CONTENTS_FMODE: a file open for writing would
        otherwise lose what the restored workdir holds). Protocol 5 (Python 3.8 on): an array's
        data (a DataFrame's too) goes into the file as it is (see save_picklebuffer)."""

        dispatch = Dispatch()

        def __init__(self, file, top, by_name):
            super().__init__(file, 5, byref=False, recurse=False, fmode=dill.CONTENTS_FMODE)
            self.top, self.by_name, self.refers = top, by_name, set()

        def reducer_override(self, obj):
            # dill pickles a module by name only when it lies under sys.prefix: one the program
            # wrote, or pip put in /opt/cs-libs, would go with its whole namespace (and, restored,
            # overwrite the module's). Every module imported under its name is pickled as that
            # import, done again when it is restored (after the workdir's files).
            if isinstance(obj, types.ModuleType):
                name = getattr(obj, "__name__", None)
                if isinstance(name, str) and sys.modules.get(name) is obj:
                    return importlib.import_module, (name,)
            # A class of the cells is pickled by value as a global of its own, and by name
            # anywhere else (an instance's class, a subclass's base), so that an instance is still
            # one of the class restored under that name. (save_global fails for a class not
            # there under its name: defined in a function, or redefined since.)
            elif (
                self.by_name
                and isinstance(obj, type)
                and obj is not self.top
                and getattr(obj, "__module__", None) == "__main__"
            ):
                self.refers.add(obj.__qualname__.partition(".")[0])
                return obj.__qualname__
            # A plain numpy array as numpy pickles it, its data in a PickleBuffer: dill's way
            # (for subclasses, whose __dict__ it keeps too) copies the data first.
            elif type(obj) is getattr(sys.modules.get("numpy"), "ndarray", None):
                return obj.__reduce_ex__(5)
            return NotImplemented

    def save_picklebuffer(pickler, obj):
        # The pure-Python pickler (dill's) copies a buffer's data before it writes it, and
        # memoizes the copy, which then goes (another's may get its id): the data is written from
        # where it is, as the C pickler does.
        with obj.raw() as m:
            if not m.contiguous:
                raise pickle.PicklingError("a buffer that is not contiguous")
            head = (pickle.BINBYTES8 if m.readonly else pickle.BYTEARRAY8) + struct.pack(
                "<Q", m.nbytes
            )
            if m.nbytes < 65536:
                pickler.write(head + m.tobytes())
            else:
                pickler._write_large_bytes(head, m)

    def dump(value, file):
        # A value whose classes cannot be referred to by name carries its own copies of them.
        start = file.size
        for by_name in (True, False):
            pickler = Pickler(file, value, by_name)
            try:
                with warnings.catch_warnings(record=True) as warned:
                    warnings.simplefilter("always")
                    pickler.dump(value)
            except pickle.PicklingError:
                if not by_name:
                    raise
                file.cut(start)
                continue
            # dill warns where it fell back to a reference it cannot restore (a class that
            # refers to itself, as an Enum's members do, is pickled by a name it does not have
            # yet when it is restored).
            for w in warned:
                if issubclass(w.category, dill.PicklingWarning):
                    raise pickle.PicklingError(str(w.message))
            return pickler.refers

    return dump


def _restore(body, g):
    """Brings back the workdir's files and the globals g from a snapshot; returns the record."""
    import pickle
    import tarfile

    files = os.path.join(SNAPSHOT, "files.tar")
    path = os.path.join(SNAPSHOT, "state")
    tar = None
    try:
        # Both read before anything changes: a restore refused for them leaves the session as it
        # was.
        try:
            tar = tarfile.open(files)
            members = tar.getmembers()
        except (OSError, tarfile.TarError, EOFError) as e:
            raise _Refused("the snapshot's files.tar cannot be read: %s" % _why(e)) from None
        try:
            with open(path, "rb") as f:
                state = pickle.load(f)
            os.unlink(path)  # (its memory, for the globals)
            saved = state["globals"]
            if state.get("version") != 1 or not isinstance(saved, dict):
                raise ValueError("not a state of version 1")
        except Exception as e:
            raise _Refused("the snapshot's state cannot be read: %s" % _why(e)) from None
        if saved:
            try:
                import dill
            except ImportError as e:
                raise _Refused(
                    "this image's Python has no dill, which snapshots need: %s" % e
                ) from None
        try:
            cwd = os.getcwd()
        except OSError:
            cwd = WORKDIR
        skipped = _extract_workdir(tar, members)
        tar.close()
        os.unlink(files)
        try:
            os.chdir(cwd)
        except OSError:
            os.chdir(WORKDIR)
        # Modules imported from the workdir are imported again, from the files now there (the
        # directory's restored time could make the import system trust its old listing).
        import importlib

        for name, module in list(sys.modules.items()):
            file = getattr(module, "__file__", None)
            if isinstance(file, str) and file.startswith(WORKDIR + "/"):
                del sys.modules[name]
        importlib.invalidate_caches()
        for name in [n for n in g if n not in OWN_NAMES]:
            del g[name]
        # In the snapshot's order, classes first: a value refers to its class by name. What fails
        # is tried again once the others are in (a class whose base came after it). Each pickle
        # goes once loaded.
        del state
        restored, pending, failed = [], list(saved), {}
        while pending:
            failed = {}
            for name in pending:
                try:
                    # (ignore: an instance keeps the class it was pickled with, rather than dill
                    # giving it the class of the cells' that has its name.)
                    g[name] = dill.loads(saved[name], ignore=True)
                    del saved[name]
                    restored.append(name)
                except BaseException as e:  # (a __setstate__ may raise anything)
                    failed[name] = e
            if len(failed) == len(pending):
                break
            pending = list(failed)
        record = {"kind": "python", "restored": sorted(restored)}
        record["not_restored"] = [{"name": n, "why": _why(e)} for n, e in failed.items()]
        if skipped:
            record["skipped"] = skipped
        return record
    finally:
        if tar is not None:
            tar.close()
        for p in (files, path):
            try:
                os.unlink(p)
            except OSError:
                pass


def _extract_workdir(tar, members):
    """Empties the workdir and extracts into it the engine's archive of it (entries "sandbox/...",
    see _safe_member); returns the entries left out, as {"name", "why"} (at most 100)."""
    import tarfile

    # (Every failure raises, to be reported; the other entries are still extracted.)
    tar.errorlevel = 2
    # Checked here already: a Python that has filters must not apply its default one.
    trusted = {"filter": "fully_trusted"} if hasattr(tarfile, "data_filter") else {}
    _wipe(WORKDIR, keep=KEPT_IN_WORKDIR)
    skipped, folders, links = [], [], []
    for member in members:
        try:
            safe = _safe_member(member)
            if safe is None:
                continue
            target = os.path.join(WORKDIR, safe.name)
            # Never through a link, nor into a file: what is there (the archive's own earlier
            # entry of that name) goes first.
            if os.path.islink(target) or (os.path.lexists(target) and not os.path.isdir(target)):
                os.unlink(target)
            elif os.path.isdir(target) and not safe.isdir():
                _wipe(target)
                os.rmdir(target)
            tar.extract(safe, WORKDIR, set_attrs=not safe.isdir(), **trusted)
        except Exception as e:
            skipped.append({"name": member.name, "why": _why(e)})
            continue
        if safe.isdir():
            folders.append(safe)
        elif safe.issym():
            links.append(target)
    # A link checked when it was made may lead out through one made after it: it goes.
    for link in links:
        if not _in_workdir(os.path.realpath(link)):
            try:
                os.unlink(link)
            except OSError:
                pass
            name = "sandbox/" + os.path.relpath(link, WORKDIR)
            skipped.append({"name": name, "why": "a link to outside the workdir"})
    # Folders' times and modes last, as tarfile's extractall sets them: their files changed them.
    for info in sorted(folders, key=lambda m: m.name, reverse=True):
        folder = os.path.join(WORKDIR, info.name)
        try:
            os.chmod(folder, info.mode)
            os.utime(folder, (info.mtime, info.mtime))
        except OSError:
            pass
    if len(skipped) > 100:
        skipped[99:] = [{"name": "", "why": "and %d more" % (len(skipped) - 99)}]
    return skipped


def _safe_member(member):
    """The archive's entry as it is to be extracted into the workdir (named without "sandbox/"),
    None for the workdir itself; raises _Refused for an entry that must not be: outside sandbox/,
    with an absolute name or "..", in a folder that leads out of the workdir (through a link),
    a link (symbolic or hard) to outside the workdir, a device file or a FIFO. Modes lose
    set-uid, set-gid and sticky bits and group and others' write bits, and files and folders stay
    the user's to read and write: what tarfile's "data" filter does (Python 3.12, 3.11.4; not
    bookworm's 3.11.2), which where this Python has it checks the entry too, but for a symbolic
    link to an absolute path in the workdir, which it refuses."""
    import copy
    import tarfile

    parts = _archive_parts(member.name)
    if not parts:
        return None
    safe = copy.copy(member)
    safe.name = "/".join(parts)
    target = os.path.join(WORKDIR, safe.name)
    if not _in_workdir(os.path.realpath(os.path.dirname(target))):
        raise _Refused("its folder leads out of the workdir")
    if member.issym():
        linked = os.path.join(os.path.dirname(target), member.linkname)
        if not _in_workdir(os.path.realpath(linked)):
            raise _Refused("a link to outside the workdir")
    elif member.islnk():
        # (A hard link names its target as the archive does: "sandbox/...".)
        linked = _archive_parts(member.linkname)
        safe.linkname = "/".join(linked)
        if not linked or not _in_workdir(os.path.realpath(os.path.join(WORKDIR, safe.linkname))):
            raise _Refused("a link to outside the workdir")
    elif not (member.isreg() or member.isdir()):
        raise _Refused("a device file or FIFO")
    mode = member.mode & 0o755
    if member.isdir():
        mode |= 0o700
    elif not member.issym():
        if not mode & 0o100:
            mode &= ~0o111
        mode |= 0o600
    safe.mode = mode
    data_filter = getattr(tarfile, "data_filter", None)
    if data_filter is not None and not (member.issym() and os.path.isabs(member.linkname)):
        try:
            data_filter(safe, WORKDIR)
        except tarfile.FilterError as e:
            raise _Refused(str(e)) from None
    return safe


def _archive_parts(name):
    """The components of an archive entry's name after "sandbox" (none for the folder itself);
    raises _Refused for any other name: absolute, with a "..", or outside sandbox/."""
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if name.startswith("/") or ".." in parts or not parts or parts[0] != "sandbox":
        raise _Refused("not a name in sandbox/")
    if len(parts) > 1 and parts[1] in KEPT_IN_WORKDIR:
        raise _Refused("not the session's own: the snapshot's handover or the workspaces")
    return parts[1:]


def _in_workdir(path):
    return path == WORKDIR or path.startswith(WORKDIR + "/")


def _wipe(top, keep=()):
    """Removes everything in the folder top (not top itself, nor its entries named in keep), as
    far as it can: folders the program made unwritable too; what cannot go (a mount, a read-only
    workspace) stays."""
    try:
        entries = list(os.scandir(top))
    except OSError:
        return
    for entry in entries:
        if entry.name in keep:
            continue
        try:
            if entry.is_dir(follow_symlinks=False):
                if not os.access(entry.path, os.R_OK | os.W_OK | os.X_OK):
                    try:
                        os.chmod(entry.path, 0o700)
                    except OSError:
                        pass
                _wipe(entry.path)
                os.rmdir(entry.path)
            else:
                os.unlink(entry.path)
        except OSError:
            pass


_running = [False]


def _interrupt(signum, frame):
    # SIGINT is a KeyboardInterrupt while a cell runs, and nothing between calls.
    if _running[0]:
        raise KeyboardInterrupt


def _cell(src, name, g):
    """Runs one cell in g, REPL-style: the value of a last expression statement is printed (and
    kept in _). Tracebacks name the cell. Returns the exit status."""
    import ast
    import linecache
    import traceback

    text = src.decode("utf-8", "replace")
    linecache.cache[name] = (len(text), None, text.splitlines(True), name)
    # A cell may await at top level, as in a notebook.
    flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    try:
        tree = compile(src, name, "exec", ast.PyCF_ONLY_AST | flags, dont_inherit=True)
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = ast.Expression(tree.body.pop().value)
            last = compile(last, name, "eval", flags, dont_inherit=True)
        code = compile(tree, name, "exec", flags, dont_inherit=True)
    except Exception as e:  # SyntaxError, or ValueError for a NUL byte
        traceback.print_exception(type(e), e, None)
        return 1
    _restore_stdin()
    try:
        _running[0] = True
        try:
            _run_code(code, g)
            value = _run_code(last, g) if last is not None else None
            if value is not None:
                g["_"] = value
                sys.displayhook(value)
        finally:
            _running[0] = False
    except SystemExit as e:
        return _exit_status(e)
    except BaseException as e:
        _running[0] = False
        # The loader's own frames (and asyncio's, for a cell that awaits) are not the program's,
        # nor is the signal handler that raised KeyboardInterrupt.
        tb = e.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename != name:
            tb = tb.tb_next
        last_tb = tb
        while last_tb is not None and last_tb.tb_next is not None:
            if last_tb.tb_next.tb_frame.f_code is _interrupt.__code__:
                last_tb.tb_next = None
            else:
                last_tb = last_tb.tb_next
        traceback.print_exception(type(e), e, tb or e.__traceback__)
        return 130 if isinstance(e, KeyboardInterrupt) else 1
    return 0


_loop = []


def _run_code(code, g):
    import inspect

    result = eval(code, g)
    if code.co_flags & inspect.CO_COROUTINE:
        # One event loop for all the cells that await, so that what one creates (a queue, a
        # task) works in the next.
        if not _loop:
            import asyncio

            _loop.append(asyncio.new_event_loop())
        result = _loop[0].run_until_complete(result)
    return result


def _restore_stdin():
    # exit() and quit() close sys.stdin (and so descriptor 0) before they raise SystemExit; the
    # next cell gets /dev/null again.
    if sys.stdin is not None and not sys.stdin.closed:
        return
    try:
        os.fstat(0)
    except OSError:
        null = os.open("/dev/null", os.O_RDONLY)
        if null != 0:
            os.dup2(null, 0)
            os.close(null)
    sys.stdin = open(0, closefd=False)


def _flush():
    for s in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            s.flush()
        except Exception:
            pass


def _next_tick(mark):
    # File times advance in clock ticks (a few ms): a change in the tick of the mark would not be
    # newer than it. So the mark is written at the end of a call, and the next call waits for the
    # next tick, here while the host is still busy with the result line.
    import time

    while True:
        now = _touch(START)
        if now == 0 or now > mark:
            return mark
        time.sleep(0.001)


def _touch(path):
    """Writes path; returns its change time (ns), the file system's "now" (0 when /tmp is full:
    every file counts as new)."""
    try:
        with open(path, "wb") as f:
            f.write(b"\n")
        return os.stat(path).st_ctime_ns
    except OSError:
        return 0


def _changed_since(top, ns):
    """Whether anything under top but directories was created or changed after time ns."""
    try:
        entries = list(os.scandir(top))
    except OSError:
        return False
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False):
                if _changed_since(entry.path, ns):
                    return True
            elif entry.stat(follow_symlinks=False).st_ctime_ns > ns:
                return True
        except OSError:
            pass
    return False


def _listdir(path):
    try:
        return os.listdir(path)
    except OSError:
        return []


def _remove(path):
    import shutil

    try:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            os.unlink(path)
    except OSError:
        pass


if os.environ.get("CS_SESSION") == "1":
    _session()
else:
    _main()
