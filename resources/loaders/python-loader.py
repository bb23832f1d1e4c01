# Python entry point of a sandbox container (see containers/cs-run, "preload" mode).
#
# The interpreter starts while the container waits in the pool; the program then arrives on stdin
# as "<nonce> <size>\n<source>", runs as __main__ from /sandbox/main.py with tracebacks as
# `python3 main.py` would print them, and the result line "<nonce> <rc>[ flags]" is printed here
# as soon as it ends, without waiting for interpreter teardown.
#
# Every matplotlib figure the program creates is saved as a PNG under /sandbox/.plots when it is
# shown, closed or still open at exit, so the host can return it. This is done by a backend that
# is selected when matplotlib is imported, never by touching the program's source.
import os
import sys

PLOTS = "/sandbox/.plots"
OUTPUTS = "/sandbox/outputs"


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


def _install_import_hooks():
    import importlib.abc
    import importlib.machinery

    class Hooks(importlib.abc.MetaPathFinder, importlib.abc.Loader):
        seen = False

        def find_spec(self, name, path=None, target=None):
            if name == "code_sandbox_mpl":
                return importlib.machinery.ModuleSpec(name, self)
            if name != "matplotlib" or self.seen:
                return None
            self.seen = True
            spec = importlib.machinery.PathFinder.find_spec(name, path)
            if spec is None or spec.loader is None:
                return spec
            real = spec.loader.exec_module

            def exec_module(module):
                real(module)
                try:
                    module.rcParams["backend"] = "module://code_sandbox_mpl"
                except Exception:
                    pass
                import atexit

                atexit.register(_Plots.save_open)

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

    head = sys.stdin.buffer.readline().split()
    if len(head) != 2 or not head[1].isdigit():
        sys.stderr.write("cs-run: bad header\n")
        os._exit(90)
    nonce = head[0]
    status_file = os.environ.pop("CS_PRELOAD")  # for cs-run, not for the program
    with open(status_file, "wb") as f:
        f.write(nonce)
    src = sys.stdin.buffer.read(int(head[1]))
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

    rc = _run(src)
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
    import atexit
    import threading

    try:
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
    try:
        if os.listdir(OUTPUTS):
            flags += " out"
    except OSError:
        pass
    if _Plots.saved:
        flags += " plots"
    flags += _usage_flags()
    line = nonce + b" " + str(rc).encode() + flags.encode() + b"\n"
    os.unlink(status_file)
    os.write(out, line)
    os.write(err, line)
    if " out" in flags or " plots" in flags:
        while os.read(host, 65536):
            pass
    os._exit(rc)


def _usage_flags():
    """ mem=<peak bytes> cpu=<ms> of this container, from its cgroup (v2, then v1)."""
    flags = ""
    for path in ("/sys/fs/cgroup/memory.peak", "/sys/fs/cgroup/memory/memory.max_usage_in_bytes"):
        try:
            with open(path) as f:
                flags += " mem=%d" % int(f.read())
            break
        except (OSError, ValueError):
            pass
    try:
        with open("/sys/fs/cgroup/cpuacct/cpuacct.usage") as f:
            flags += " cpu=%d" % (int(f.read()) // 1000000)
    except (OSError, ValueError):
        try:
            with open("/sys/fs/cgroup/cpu.stat") as f:
                for line in f:
                    key, _, value = line.partition(" ")
                    if key == "usage_usec":
                        flags += " cpu=%d" % (int(value) // 1000)
                        break
        except (OSError, ValueError):
            pass
    return flags


def _run(src):
    import traceback

    g = {"__name__": "__main__", "__file__": "/sandbox/main.py", "__builtins__": __builtins__}
    try:
        code = compile(src, "/sandbox/main.py", "exec")
    except SyntaxError as e:
        traceback.print_exception(type(e), e, None)
        return 1
    try:
        exec(code, g)
    except SystemExit as e:
        if e.code is None or isinstance(e.code, int):
            return e.code or 0
        print(e.code, file=sys.stderr)
        return 1
    except BaseException as e:
        traceback.print_exception(type(e), e, e.__traceback__.tb_next)
        return 1
    return 0


_main()
