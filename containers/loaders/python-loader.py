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
# a notebook kernel: see _session.
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
        if len(head) != 2 or not head[1].isdigit():
            sys.stderr.write("cs-run: bad header\n")
            _flush()
            os._exit(90)
        nonce = head[0]
        src = host.read(int(head[1]))
        try:
            with open(status_file, "wb") as f:
                f.write(nonce)
        except OSError:  # (/tmp full: only the answer for a call the kernel dies in is lost)
            pass
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
