// Node.js entry point of a sandbox container (see containers/cs-run, "preload" mode), for
// JavaScript and, with the argument "typescript", TypeScript.
//
// Node starts (and, for TypeScript, loads the compiler) while the container waits in the pool;
// the program then arrives on stdin as "<nonce> <size>\n<source>" and runs as the main module
// /sandbox/main.js or /sandbox/main.ts. Before it, the pool may send a "preload" line: modules
// to require while waiting (see preload below). cs-run reports the exit status after node exits;
// the nonce (and " compile" when TypeScript could not parse the program), then this loader's
// flags (what was preloaded, what the program required), go through the file named by
// CS_PRELOAD.
//
// With CS_SESSION=1 this is a live interpreter that serves one call ("cell") after another, like
// Node's REPL: see serve() below.
//
// All of it is inside a function: node -e runs this text as a script, whose top-level
// declarations would be globals, which a cell could not declare again (const fs = require("fs"))
// and a program could use by mistake.
(() => {
const fs = require("fs");
const Module = require("module");

const typescript = process.argv[1] === "typescript";
// TypeScript is run the way tsx, Deno and Bun do: types are stripped, not checked, so a program
// runs as soon as it parses. Syntax errors are reported like a compiler's.
const ts = typescript ? require("typescript") : null;
const compilerOptions = ts && {
  module: ts.ModuleKind.CommonJS,
  target: ts.ScriptTarget.ES2022,
  esModuleInterop: true,
  inlineSourceMap: true,
};
if (ts) {
  process.setSourceMapsEnabled(true);
  // require() of other .ts files (input files, say) goes through the same transpiler.
  Module._extensions[".ts"] = (module, filename) => {
    const out = ts.transpileModule(fs.readFileSync(filename, "utf8"), {
      compilerOptions,
      fileName: filename,
    });
    module._compile(out.outputText, filename);
  };
}

// Node 18's fetch ignores HTTP(S)_PROXY. In the allow-list network mode the proxy is the only
// way out, so fetch goes through it: Debian's undici (which npm brings along) tunnels http: and
// https: URLs alike. Loaded while the sandbox waits in the pool, not on the call's path.
const proxy = process.env.HTTPS_PROXY || process.env.HTTP_PROXY;
if (proxy) {
  try {
    const { ProxyAgent, setGlobalDispatcher } = require("/usr/share/nodejs/undici");
    const url = new URL(proxy);
    const auth = Buffer.from(
      decodeURIComponent(url.username) + ":" + decodeURIComponent(url.password),
    ).toString("base64");
    url.username = url.password = "";
    setGlobalDispatcher(new ProxyAgent({ uri: url.toString(), auth }));
  } catch (e) {
    process.stderr.write("cs-run: fetch cannot use the proxy: " + e.message + "\n");
  }
}

if (process.env.CS_SESSION === "1") return serve();

const statusFile = process.env.CS_PRELOAD;
delete process.env.CS_PRELOAD; // for cs-run, not for the program (nor what is preloaded for it)
const main = typescript ? "/sandbox/main.ts" : "/sandbox/main.js";
// (set before preloading: what a module reads of it when loaded is what it would read later)
process.argv[1] = main;

// What preloading did (see preload), for the result line; and a byte of the program's header
// that it read while looking for it.
const report = { done: [], dropped: [], files: [] };
let early = null;

let head = readLine();
if (head.startsWith("preload ")) {
  preload(head.split(" ").slice(1));
  head = readLine();
}
const [nonce, size] = head.split(" ");
if (!/^[0-9a-f]+$/.test(nonce || "") || !/^[0-9]+$/.test(size || "")) {
  process.stderr.write("cs-run: bad header\n");
  process.exit(90);
}
const src = Buffer.alloc(Number(size));
for (let got = 0; got < src.length; ) {
  const n = fs.readSync(0, src, got, src.length - got, null);
  if (n <= 0) break;
  got += n;
}
fs.writeFileSync(main, src);
unshadow();

// "<nonce>[ compile]" for cs-run's result line, written again with this loader's flags (see
// exitFlags) when the process exits: in the first exit handler (the program's come after it),
// also after process.exit() or an uncaught error. A process that is killed leaves the nonce.
let status = nonce;
if (ts) {
  const out = ts.transpileModule(src.toString("utf8"), {
    compilerOptions,
    fileName: "main.ts",
    reportDiagnostics: true,
  });
  const errors = (out.diagnostics || []).filter((d) => d.category === ts.DiagnosticCategory.Error);
  if (errors.length > 0) {
    const host = {
      getCanonicalFileName: (f) => f,
      getCurrentDirectory: () => "/sandbox",
      getNewLine: () => "\n",
    };
    process.stderr.write(ts.formatDiagnostics(errors, host));
    status = nonce + " compile";
  }
}
fs.writeFileSync(statusFile, status + "\n");
process.on("exit", () => {
  try {
    const flags = exitFlags();
    if (flags) fs.writeFileSync(statusFile, status + flags + "\n");
  } catch {} // (/tmp full, or a module graph the program broke: the line goes without them)
});
if (status !== nonce) process.exit(1);

// The lowest free descriptor is reused: this puts /dev/null on stdin, as for other programs.
// cs-run keeps its own copy of the attached stdin.
fs.closeSync(0);
fs.openSync("/dev/null", "r");
Module.runMain();

// One line of stdin, read a byte at a time (a header is some 30 bytes): nothing of the program
// after it is consumed.
function readLine() {
  const byte = Buffer.alloc(1);
  let line = "";
  for (;;) {
    if (early !== null) {
      byte[0] = early;
      early = null;
    } else if (fs.readSync(0, byte, 0, 1, null) !== 1) {
      return line;
    }
    if (byte[0] === 10) return line;
    line += String.fromCharCode(byte[0]);
  }
}

// Preloading: while the sandbox waits in the pool, the server may send
//   preload <budget bytes> <slow ms> <module>[:<expected bytes>] ...
// before the program's header (as to the Python loader, see PreloadPlanner): the image's modules
// that most recent calls required (learned from the "imports" this loader reports), most used
// first. Each is required as the program would find it in the image, stopping when the program
// arrives (it waits at most for the require under way), and before a module whose expected
// memory (what it cost an earlier sandbox) would take what preloading added past the budget, or
// once past it. The result line says what was preloaded with what each cost, and which modules
// failed or took longer than <slow ms>, so that the server stops asking for them.
//
// A module's cost is the growth of the process's resident set (RSS) while it loads: that is what
// counts against the sandbox's memory limit (V8's heap pages and code, Buffers' native memory),
// where heapUsed + external would leave out the pages the heap grew by but has not filled yet.
// The budget bounds what preloading adds, not the process: Node itself (and, for TypeScript, the
// compiler) takes what it takes whether or not anything is preloaded.
//
// What a program can observe: those modules (and theirs) in require.cache before its first line,
// the memory they take (process.memoryUsage(), the peak), and require() of them returning at
// once with the preloaded module itself (Node's cache is by file name), as a second require()
// would. They are the image's own (found in its module folders, never in the workdir or /tmp),
// loaded in this fresh process with the program's environment, argv and working directory
// before any of its code: nothing of another call is in them; what they tell is only that recent
// calls on this server required them. Not as without preloading: their module.parent is the
// loader's, their require.main is undefined, and what they read when loaded (process.env,
// globals) is what was there before the program could change it. A program that brings a module
// of the same name gets its own wherever Node's resolution picks it (./lodash.js,
// /sandbox/node_modules/lodash): the preloaded one is cached under another file name, and no
// lookup made while preloading is reused for the program's (see unshadow).
function preload(words) {
  if (!/^[0-9]+$/.test(words[0] || "") || !/^[0-9]+$/.test(words[1] || "")) return;
  const budget = Number(words[0]);
  const slow = Number(words[1]);
  // Whether the program has come, asked without blocking on a descriptor of our own: O_NONBLOCK
  // belongs to the open file, which fd 0 shares with cs-run. Where stdin cannot be opened again
  // (not a pipe), nothing is preloaded: a program must never wait for it.
  let poll;
  try {
    poll = fs.openSync("/proc/self/fd/0", fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  } catch {
    return;
  }
  const byte = Buffer.alloc(1);
  const arrived = () => {
    try {
      if (fs.readSync(poll, byte, 0, 1, null) === 1) early = byte[0];
      return true; // (or stdin is closed)
    } catch (e) {
      return e.code !== "EAGAIN";
    }
  };
  // Where the program's require() of a bare name looks, but for the folders it can write to
  // (where its input files may be arriving meanwhile): its node_modules, and Node's global
  // ~/.node_modules and ~/.node_libraries (HOME is the workdir).
  const dirs = ["/node_modules", ...Module.globalPaths].filter((d) => !writable(d));
  const exit = process.exit;
  process.exit = () => {
    throw new Error("process.exit() while being preloaded");
  };
  const parent = new Module("<preload>", null);
  const cached = new Set(Object.keys(Module._cache));
  const start = process.memoryUsage.rss();
  try {
    for (const word of words.slice(2, 16)) {
      const [name, expected] = word.split(":");
      if (!validName(name)) continue;
      if (arrived()) break;
      const cost = /^[0-9]+$/.test(expected || "") ? Number(expected) : 0;
      if (process.memoryUsage.rss() - start + cost > budget) continue; // (a smaller one may fit)
      const before = process.memoryUsage.rss();
      const t0 = process.hrtime.bigint();
      try {
        const file = Module._findPath(name, dirs);
        if (!file) throw new Error("not in the image");
        Module._load(file, parent, false);
      } catch {
        report.dropped.push(name);
        continue;
      }
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      const after = process.memoryUsage.rss();
      report.done.push(name + ":" + Math.max(0, after - before));
      if (ms > slow) report.dropped.push(name);
      if (after - start > budget) break;
    }
  } finally {
    process.exit = exit;
    fs.closeSync(poll);
  }
  report.files = Object.keys(Module._cache).filter((f) => !cached.has(f));
}

// A program that brings ~/.node_modules or ~/.node_libraries (where Node looks for a bare name
// that is not beside the module that requires it) gets everything loaded anew, as without
// preloading, so that a preloaded module's dependencies come from there where Node would take
// them from there: the preloaded modules leave the cache, and with them the lookups that led to
// them. (Debian's modules find each other beside them, in /usr/share/node_modules.)
function unshadow() {
  if (report.files.length === 0) return;
  if (!Module.globalPaths.some((d) => writable(d) && fs.existsSync(d))) return;
  for (const file of report.files) delete Module._cache[file];
  for (const key of Object.keys(Module._pathCache)) delete Module._pathCache[key];
}

// Folders the program can write to: the workdir and /tmp.
function writable(dir) {
  return /^\/(sandbox|tmp)(\/|$)/.test(dir);
}

// A module name as the server takes it (PreloadPlanner::isModuleName): an npm package's
// ("lodash", "js-yaml", "@scope/name") or a Python module's, at most 64 characters.
function validName(name) {
  return name.length <= 64 && /^(@[A-Za-z0-9_][\w.-]*\/)?[A-Za-z0-9_][\w.-]*$/.test(name);
}

// The result line's flags from this loader: " preloaded=name:bytes,...", " preload-dropped=..."
// and " imports=...", the packages the program required (their names, not its own files nor
// Node's builtins), as far as they were loaded when it ended, at most 16: what the server learns
// what to preload from. Imports are read from the module graph (the children of the program's
// own modules), not by wrapping require(): a wrapper would be one more frame in the stack of
// every error a require() throws, which programs print.
function exitFlags() {
  let flags = "";
  if (report.done.length > 0) flags += " preloaded=" + report.done.join(",");
  if (report.dropped.length > 0) flags += " preload-dropped=" + report.dropped.join(",");
  // Files are cached under their real paths, which need not be in a package's folder (Debian's
  // moment.js is a link to /usr/share/javascript/moment/moment.js): Node's lookup cache says
  // which bare name led to which file (not when the package's "exports" led there, but then the
  // file is in the package's folder).
  const requested = new Map();
  for (const key of Object.keys(Module._pathCache)) {
    const request = key.split("\x00")[0];
    if (/^[./]|^node:/.test(request)) continue;
    const parts = request.split("/");
    requested.set(Module._pathCache[key], parts.slice(0, request[0] === "@" ? 2 : 1).join("/"));
  }
  const names = [];
  const seen = new Set();
  const walk = (m) => {
    if (!m || seen.has(m) || seen.size > 1000) return;
    seen.add(m);
    for (const child of Array.isArray(m.children) ? m.children : []) {
      if (!child || !child.loaded) continue; // (it threw while loading)
      let name = packageOf(child.filename);
      if (name === null && requested.has(child.filename)) name = requested.get(child.filename);
      if (name === null) walk(child);
      else if (validName(name) && names.length < 16 && !names.includes(name)) names.push(name);
    }
  };
  walk(Module._cache[main]);
  if (names.length > 0) flags += " imports=" + names.join(",");
  return flags;
}

// The package a module's file belongs to: the folder after the last node_modules/ in its path,
// or after one of Node's global folders (Debian's /usr/share/nodejs), with its scope; null for a
// file in no such folder.
function packageOf(file) {
  if (typeof file !== "string") return "";
  let rest = null;
  const at = file.lastIndexOf("/node_modules/");
  if (at >= 0) rest = file.slice(at + "/node_modules/".length);
  else {
    const dir = Module.globalPaths.find((d) => file.startsWith(d + "/"));
    if (dir) rest = file.slice(dir.length + 1);
  }
  if (rest === null) return null;
  const parts = rest.split("/");
  return parts.slice(0, parts[0].startsWith("@") ? 2 : 1).join("/");
}

// A session (CS_SESSION=1): calls arrive one after another, each a cell run in this global
// context as in Node's REPL. Top-level var, let, const, function and class persist from cell to
// cell (and, as in the REPL, a let or const cannot be declared again); require, module, exports,
// __filename and __dirname are globals, as for /sandbox/main.js; a completion value other than
// undefined is printed with util.inspect. TypeScript cells are transpiled one by one, their
// imports turned into require()s, so that what one imports the next can use.
//
// cs-run passes the attached stdin on descriptor 3, with /dev/null as stdin (a cell that reads
// stdin cannot take the next call), and waits for this process, the leader of its own process
// group. Each result line is printed here once the cell's work is done: its code ran, the event
// loop ran dry ("beforeExit": timers, I/O and promises it started are finished), and the promise
// it evaluated to, if any, has settled (its value is printed then). An uncaught error, thrown,
// in a callback or an unhandled rejection, is printed as Node prints it and the status is 1; the
// session goes on. The host interrupts a call past its timeout with SIGINT: running code stops
// (vm's breakOnSigint), or, while the cell waits, its timers are cancelled and its handles
// unref'd (child processes killed); the status is 130. Between calls SIGINT is ignored.
// process.exit() ends the session; the call still gets its result line, from an exit handler.
function serve() {
  const vm = require("vm");
  const util = require("util");
  const path = require("path");
  const HOST = 3;
  const OUTPUTS = "/sandbox/outputs";
  const PLOTS = "/sandbox/.plots";
  // Written when a call ends (and shared with cs-run): what changes later belongs to the next.
  const MARK = "/tmp/.cs-mark";
  const START = "/tmp/.cs-start";
  const statusFile = process.env.CS_PRELOAD;
  delete process.env.CS_PRELOAD; // for cs-run, not for the program
  delete process.env.CS_SESSION;

  const main = typescript ? "/sandbox/main.ts" : "/sandbox/main.js";
  const mainModule = new Module(main, null);
  mainModule.filename = main;
  mainModule.paths = Module._nodeModulePaths("/sandbox");
  mainModule.loaded = true;
  process.mainModule = mainModule; // so that require.main === module, as in a program
  let globals = {
    require: Module.createRequire(main),
    module: mainModule,
    exports: mainModule.exports,
    __filename: main,
    __dirname: "/sandbox",
  };

  // The timers a cell sets, for an interrupt to cancel.
  const immediate = setImmediate;
  let timers = [];
  for (const [name, clear] of [
    ["setTimeout", clearTimeout],
    ["setInterval", clearInterval],
    ["setImmediate", clearImmediate],
  ]) {
    const real = globalThis[name];
    const wrapped = function (...args) {
      const timer = real(...args);
      timers.push([clear, timer]);
      return timer;
    };
    Object.defineProperty(wrapped, "name", { value: name });
    if (real[util.promisify.custom]) wrapped[util.promisify.custom] = real[util.promisify.custom];
    globalThis[name] = wrapped;
  }

  let call = null; // the call being served
  let cells = 0;
  let running = false; // a cell's code is on the stack (vm's breakOnSigint has SIGINT)
  let mark = touch(MARK);
  const sources = new Map(); // cell name -> { lines, map }, for error messages

  const exit = process.exit;
  process.exit = function (code) {
    // Added now, so that it runs after the program's own exit handlers.
    if (call) process.on("exit", (status) => report(call, status));
    return exit.call(process, code);
  };
  process.on("beforeExit", () => {
    if (call && call.started) finish();
  });
  process.on("uncaughtException", (e) => {
    printError(e);
    if (call && !call.rc) call.rc = 1;
  });
  process.on("SIGINT", () => {
    // Between calls (or before the cell began): nothing to interrupt.
    if (!call || !call.started || running) return;
    for (const [clear, timer] of timers) clear(timer);
    for (const handle of process._getActiveHandles()) {
      if (handle === process.stdout || handle === process.stderr) continue;
      try {
        if (typeof handle.kill === "function") handle.kill("SIGKILL");
        if (typeof handle.unref === "function") handle.unref();
      } catch {}
    }
    process.stderr.write("Script execution was interrupted by `SIGINT` (its timers cancelled)\n");
    call.rc = 130;
    call.settled = true;
    finish();
  });

  next();

  function next() {
    // File times advance in clock ticks (a few ms): a change in the tick of the mark would not be
    // newer than it. So the mark is written at the end of a call, and the next call waits for the
    // next tick, here while the host is still busy with the result line.
    for (let now = touch(START); now !== 0n && now <= mark; now = touch(START)) sleep(1);
    const head = readHeader();
    if (head === null) exit.call(process, 0);
    const [nonce, size, extra] = head.split(" ");
    if (!/^[0-9a-f]+$/.test(nonce || "") || !/^[0-9]+$/.test(size || "") || extra !== undefined) {
      process.stderr.write("cs-run: bad header\n");
      exit.call(process, 90);
    }
    const src = Buffer.alloc(Number(size));
    for (let got = 0; got < src.length; ) {
      const n = readHost(src, got, src.length - got);
      if (n <= 0) break;
      got += n;
    }
    try {
      fs.writeFileSync(statusFile, nonce + "\n");
    } catch {} // (/tmp full: only the answer for a call this process dies in is lost)
    for (const name of list(PLOTS)) {
      fs.rmSync(path.join(PLOTS, name), { recursive: true, force: true });
    }
    call = { nonce, rc: 0, flags: "", cpu: cpuMs(), cell: ++cells, started: false, settled: true };
    immediate(run, call, src.toString("utf8"));
  }

  function run(c, source) {
    c.started = true;
    // (set now: node -e puts its own "module" back after this script)
    if (globals) Object.assign(globalThis, globals);
    globals = null;
    const name = `<cell ${c.cell}>`;
    let script;
    try {
      script = compile(name, source);
    } catch (e) {
      if (e !== compile.failed) printError(e);
      else c.flags = " compile";
      c.rc = 1;
      return;
    }
    process.exitCode = undefined;
    try {
      running = true;
      c.value = script.runInThisContext({ breakOnSigint: true });
    } catch (e) {
      running = false;
      if (e && e.code === "ERR_SCRIPT_EXECUTION_INTERRUPTED") {
        process.stderr.write(e.message + "\n");
        c.rc = 130;
      } else {
        printError(e);
        c.rc = 1;
      }
      return;
    } finally {
      running = false;
    }
    if (util.types.isPromise(c.value)) {
      c.settled = false;
      c.value.then(
        (value) => {
          if (call !== c) return;
          c.settled = true;
          show(value);
        },
        (e) => {
          if (call !== c) return;
          c.settled = true;
          printError(e);
          c.rc = 1;
        }
      );
    } else {
      show(c.value);
    }
  }

  // A cell's script: as in Node's REPL, one that reads as an object literal is one.
  function compile(name, source) {
    if (/^\s*{/.test(source) && /}\s*$/.test(source)) {
      try {
        return script(name, `(${source}\n)`, false);
      } catch {}
    }
    return script(name, source, true);
  }
  compile.failed = new Error("TypeScript reported errors");

  function script(name, source, last) {
    let code = source;
    let map = null;
    if (ts) {
      const out = ts.transpileModule(requireImports(source), {
        compilerOptions: { ...compilerOptions, inlineSourceMap: false, sourceMap: true },
        fileName: name,
        reportDiagnostics: true,
      });
      const errors = (out.diagnostics || []).filter(
        (d) => d.category === ts.DiagnosticCategory.Error
      );
      if (errors.length > 0) {
        if (last) {
          const host = {
            getCanonicalFileName: (f) => f,
            getCurrentDirectory: () => "/sandbox",
            getNewLine: () => "\n",
          };
          process.stderr.write(ts.formatDiagnostics(errors, host));
        }
        throw compile.failed;
      }
      code = out.outputText.replace(/\/\/# sourceMappingURL=.*\s*$/, "");
      map = new Module.SourceMap(JSON.parse(out.sourceMapText));
    }
    sources.set(name, { lines: source.split("\n"), map });
    return new vm.Script(code, { filename: name });
  }

  // import declarations as require()s (var, so that a cell can import again): transpiled as they
  // are, they would be bound to names the next cell does not know, or left out when unused.
  // Line numbers stay.
  function requireImports(source) {
    const file = ts.createSourceFile("cell.ts", source, ts.ScriptTarget.ES2022, true);
    let text = source;
    for (const s of [...file.statements].reverse()) {
      if (!ts.isImportDeclaration(s)) continue;
      const from = `require(${JSON.stringify(s.moduleSpecifier.text)})`;
      const clause = s.importClause;
      let js = "";
      if (!clause) js = from + ";";
      else if (!clause.isTypeOnly) {
        const bound = [];
        if (clause.name)
          bound.push(`${clause.name.text} = ((m) => m && m.__esModule ? m.default : m)(${from})`);
        const named = clause.namedBindings;
        if (named && ts.isNamespaceImport(named)) bound.push(`${named.name.text} = ${from}`);
        else if (named) {
          const names = named.elements
            .filter((e) => !e.isTypeOnly)
            .map((e) => (e.propertyName ? `${e.propertyName.text}: ${e.name.text}` : e.name.text));
          if (names.length > 0) bound.push(`{ ${names.join(", ")} } = ${from}`);
        }
        if (bound.length > 0) js = `var ${bound.join(", ")};`;
      }
      const start = s.getStart(file);
      const lines = text.slice(start, s.end).split("\n").length - 1;
      text = text.slice(0, start) + js + "\n".repeat(lines) + text.slice(s.end);
    }
    return text;
  }

  function show(value) {
    if (value === undefined) return;
    try {
      process.stdout.write(util.inspect(value, { showProxy: true }) + "\n");
    } catch (e) {
      printError(e);
    }
  }

  // As Node prints an uncaught error: "<cell>:<line>", the line with a caret, the stack without
  // the frames of vm and of this loader (for TypeScript, at the positions in the cell's source).
  function printError(e) {
    let text;
    if (e instanceof Error || (e && typeof e.stack === "string")) text = errorText(e);
    else text = "Uncaught " + util.inspect(e);
    process.stderr.write(text + "\n");
  }

  function errorText(e) {
    const lines = String(e.stack).split("\n");
    const cut = lines.findIndex((l) => /^\s+at .*(\(node:vm:|\[eval\])/.test(l));
    if (cut >= 0) lines.length = cut;
    let where = null;
    const at = /^<cell (\d+)>:(\d+)$/.exec(lines[0]);
    if (at && lines.length > 3 && lines[3] === "") {
      where = [at[1], Number(at[2]), Math.max(lines[2].indexOf("^"), 0) + 1];
      lines.splice(0, 4);
    }
    let stack = lines.join("\n");
    if (ts) {
      stack = stack.replace(/<cell (\d+)>:(\d+):(\d+)/g, (m, n, line, column) => {
        const p = original(n, Number(line), Number(column));
        return p ? `<cell ${n}>:${p[0]}:${p[1]}` : m;
      });
      if (where) where = [where[0], ...(original(where[0], where[1], where[2]) || [0, 0])];
    }
    if (!where || !where[1]) {
      const frame = /<cell (\d+)>:(\d+):(\d+)/.exec(stack);
      where = frame && [frame[1], Number(frame[2]), Number(frame[3])];
    }
    const source = where && sources.get(`<cell ${where[0]}>`);
    const line = source && source.lines[where[1] - 1];
    if (line === undefined) return stack;
    return `<cell ${where[0]}>:${where[1]}\n${line}\n${" ".repeat(where[2] - 1)}^\n\n${stack}`;
  }

  function original(n, line, column) {
    const source = sources.get(`<cell ${n}>`);
    const entry = source && source.map && source.map.findEntry(line - 1, column - 1);
    if (!entry || entry.originalLine === undefined) return null;
    return [entry.originalLine + 1, entry.originalColumn + 1];
  }

  function finish() {
    const c = call;
    if (!c.settled) show(c.value); // Promise { <pending> }: what it waited for never came
    if (process.exitCode) {
      if (!c.rc) c.rc = process.exitCode;
      process.exitCode = undefined;
    }
    timers = [];
    report(c, c.rc);
    next();
  }

  function report(c, rc) {
    call = null;
    let flags = c.flags;
    if (!flags) {
      const images = workdirImages(mark);
      if (images.length > 0 || changedSince(OUTPUTS, mark)) flags += " out";
      if (list(PLOTS).length > 0) flags += " plots";
      if (flags) listFiles(images);
      flags += usage(c.cpu);
    }
    mark = touch(MARK);
    const line = Buffer.from(`${c.nonce} ${rc & 0xff}${flags}\n`);
    try {
      fs.unlinkSync(statusFile);
    } catch {}
    writeAll(1, line);
    writeAll(2, line);
  }

  function readHeader() {
    const byte = Buffer.alloc(1);
    let head = "";
    for (;;) {
      if (readHost(byte, 0, 1) !== 1) return null;
      if (byte[0] === 10) return head;
      head += String.fromCharCode(byte[0]);
    }
  }

  function readHost(buffer, offset, length) {
    for (;;) {
      try {
        return fs.readSync(HOST, buffer, offset, length, null);
      } catch (e) {
        if (e.code === "EAGAIN") sleep(5);
        else if (e.code !== "EINTR") throw e;
      }
    }
  }

  // (stdout may be non-blocking: libuv makes the pipes it opens so)
  function writeAll(fd, buffer) {
    for (let done = 0; done < buffer.length; ) {
      try {
        done += fs.writeSync(fd, buffer, done);
      } catch (e) {
        if (e.code !== "EAGAIN") return;
        sleep(1);
      }
    }
  }

  function sleep(ms) {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
  }

  // Writes file; returns its change time (ns), the file system's "now" (0 when /tmp is full:
  // every file counts as new).
  function touch(file) {
    try {
      fs.writeFileSync(file, "\n");
      return fs.statSync(file, { bigint: true }).ctimeNs;
    } catch {
      return 0n;
    }
  }

  // Whether anything under top but directories was created or changed after time ns.
  function changedSince(top, ns) {
    for (const entry of list(top, true)) {
      const file = path.join(top, entry.name);
      try {
        if (entry.isDirectory()) {
          if (changedSince(file, ns)) return true;
        } else if (fs.lstatSync(file, { bigint: true }).ctimeNs > ns) {
          return true;
        }
      } catch {}
    }
    return false;
  }

  // Image files at the top of the workdir that changed after time ns come back like those in
  // outputs/ (see workdir_images in cs-run, which has the same list): their listing records.
  function workdirImages(ns) {
    const records = [];
    for (const entry of list("/sandbox", true)) {
      if (entry.name.startsWith(".") || !entry.isFile()) continue;
      if (!/\.(png|jpe?g|gif|webp|svg|pdf)$/i.test(entry.name)) continue;
      try {
        const st = fs.lstatSync("/sandbox/" + entry.name, { bigint: true });
        if (st.mtimeNs > ns) records.push(Buffer.from(`f ${st.size} ${entry.name}\0`));
      } catch {}
    }
    return records;
  }

  // The listing of outputs/, .plots/ and the workdir's image files the host reads before it
  // fetches anything (as cs-run's list_files writes it): "<type> <size> <path>\0" per entry, at
  // most 20000 of them.
  function listFiles(images) {
    const records = [];
    const walk = (rel) => {
      for (const entry of list("/sandbox/" + rel, true)) {
        if (records.length >= 20000) return;
        const child = rel + "/" + entry.name;
        let st;
        try {
          st = fs.lstatSync("/sandbox/" + child);
        } catch {
          continue;
        }
        const kind = st.isFile() ? "f" : st.isDirectory() ? "d" : st.isSymbolicLink() ? "l" : "o";
        records.push(Buffer.from(`${kind} ${st.size} ${child}\0`));
        if (st.isDirectory()) walk(child);
      }
    };
    try {
      fs.unlinkSync("/sandbox/.cs-files");
    } catch {}
    walk("outputs");
    walk(".plots");
    records.push(...images.slice(0, Math.max(0, 20000 - records.length)));
    try {
      fs.writeFileSync("/sandbox/.cs-files", Buffer.concat(records));
    } catch {}
  }

  function list(dir, withFileTypes = false) {
    try {
      return fs.readdirSync(dir, { withFileTypes });
    } catch {
      return [];
    }
  }

  function cpuMs() {
    try {
      const ns = fs.readFileSync("/sys/fs/cgroup/cpuacct/cpuacct.usage", "utf8").trim();
      if (/^[0-9]+$/.test(ns)) return Math.floor(Number(ns) / 1e6);
    } catch {}
    try {
      const m = /^usage_usec (\d+)$/m.exec(fs.readFileSync("/sys/fs/cgroup/cpu.stat", "utf8"));
      if (m) return Math.floor(Number(m[1]) / 1000);
    } catch {}
    return null;
  }

  // " mem=<peak bytes> cpu=<ms>": the container's peak so far, the CPU time since the call began.
  function usage(cpuBefore) {
    let flags = "";
    const peaks = ["/sys/fs/cgroup/memory.peak", "/sys/fs/cgroup/memory/memory.max_usage_in_bytes"];
    for (const file of peaks) {
      try {
        const m = fs.readFileSync(file, "utf8").trim();
        if (/^[0-9]+$/.test(m)) {
          flags += " mem=" + m;
          break;
        }
      } catch {}
    }
    const cpu = cpuMs();
    if (cpu !== null && cpuBefore !== null) flags += " cpu=" + (cpu - cpuBefore);
    return flags;
  }
}
})();
