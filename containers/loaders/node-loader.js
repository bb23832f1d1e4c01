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
// Between calls the host may ask for a snapshot of the session, or to restore one into a new
// session (see operation).
function serve() {
  const vm = require("vm");
  const v8 = require("v8");
  const util = require("util");
  const path = require("path");
  const HOST = 3;
  const OUTPUTS = "/sandbox/outputs";
  const PLOTS = "/sandbox/.plots";
  // Written when a call ends (and shared with cs-run): what changes later belongs to the next.
  const MARK = "/tmp/.cs-mark";
  const START = "/tmp/.cs-start";
  // Where snapshots are written and restored from (see operation), and their state's format.
  // In the workdir, whose volume the engine's archive endpoint reaches (not /tmp, a tmpfs it does
  // not); left out of what a restore clears and extracts, and removed when the next call starts.
  const SNAPSHOT = "/sandbox/.cs-snapshot";
  const FORMAT = "cs-javascript-1";
  // Classes whose instances v8.serialize gives back as they were (see dataKind).
  const errorClasses = [Error, EvalError, RangeError, ReferenceError, SyntaxError, TypeError];
  errorClasses.push(URIError);
  const boxClasses = [Number, String, Boolean, BigInt];
  const viewClasses = [Buffer, DataView, Int8Array, Uint8Array, Uint8ClampedArray, Int16Array];
  viewClasses.push(Uint16Array, Int32Array, Uint32Array, Float32Array, Float64Array);
  viewClasses.push(BigInt64Array, BigUint64Array);
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
  // A snapshot saves the names the cells made (see takeState): not the global object's properties
  // that are there before the first cell (Node's, node -e's require, module and builtin modules)
  // unless a cell gave one another value, nor the globals this loader sets (here, and the timers
  // below).
  const baseline = new Map();
  for (const key of Reflect.ownKeys(globalThis)) {
    baseline.set(key, Object.getOwnPropertyDescriptor(globalThis, key));
  }
  const loaderGlobals = new Set(Object.keys(globals));
  for (const name of ["setTimeout", "setInterval", "setImmediate"]) loaderGlobals.add(name);

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
    // (a snapshot leaves the mark as it was: the tick waited for is still the one after it)
    for (let tick = true; ; ) {
      // File times advance in clock ticks (a few ms): a change in the tick of the mark would not
      // be newer than it. So the mark is written at the end of a call, and the next call waits
      // for the next tick, here while the host is still busy with the result line.
      if (tick) {
        for (let now = touch(START); now !== 0n && now <= mark; now = touch(START)) sleep(1);
      }
      const head = readHeader();
      if (head === null) exit.call(process, 0);
      const [nonce, size, ...words] = head.split(" ");
      if (!/^[0-9a-f]+$/.test(nonce || "") || !/^[0-9]+$/.test(size || "")) {
        process.stderr.write("cs-run: bad header\n");
        exit.call(process, 90);
      }
      const src = Buffer.alloc(Number(size));
      for (let got = 0; got < src.length; ) {
        const n = readHost(src, got, src.length - got);
        if (n <= 0) break;
        got += n;
      }
      if (words.length > 0) {
        tick = operation(nonce, words.join(" "), src);
        continue;
      }
      try {
        fs.writeFileSync(statusFile, nonce + "\n");
      } catch {} // (/tmp full: only the answer for a call this process dies in is lost)
      // The last snapshot's handover is the host's by now; its room is the program's again.
      fs.rmSync(SNAPSHOT, { recursive: true, force: true });
      for (const name of list(PLOTS)) {
        fs.rmSync(path.join(PLOTS, name), { recursive: true, force: true });
      }
      const cell = ++cells;
      call = { nonce, rc: 0, flags: "", cpu: cpuMs(), cell, started: false, settled: true };
      immediate(run, call, src.toString("utf8"));
      return;
    }
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

  // Snapshots. Between calls the host may send, on the same stream as calls,
  //   "<nonce> <size> snapshot" with {"max_bytes": N}: the names the cells made, saved in
  //     /sandbox/.cs-snapshot/state (see takeState), with what was kept and what not in record.json;
  //   "<nonce> <size> restore" (its body unread): in a new session, before its first cell, the
  //     workdir from /sandbox/.cs-snapshot/files.tar (see extractWorkdir) and the names from state,
  //     declared again as they were (see bringBack);
  // or anything else, which is answered with status 2. Each is answered "<nonce> <rc>" on both
  // streams (0 done, 1 failed: record.json says why) and is no call: no cell runs, the counter,
  // the status file and .plots stay, and nothing else is printed. A restore writes the mark anew
  // (returns true), so that the files it brought back are not the next call's outputs.
  function operation(nonce, word, body) {
    let rc = 2;
    if (word === "snapshot") rc = snapshot(body);
    else if (word === "restore") rc = restore();
    const line = Buffer.from(`${nonce} ${rc}\n`);
    writeAll(1, line);
    writeAll(2, line);
    return word === "restore";
  }

  function snapshot(body) {
    let record;
    const stateFile = path.join(SNAPSHOT, "state");
    try {
      fs.rmSync(SNAPSHOT, { recursive: true, force: true });
      fs.mkdirSync(SNAPSHOT, { mode: 0o700 });
      let max = null;
      try {
        max = JSON.parse(body.toString("utf8")).max_bytes;
      } catch {}
      if (!Number.isSafeInteger(max) || max < 0) throw new Error('the request has no "max_bytes"');
      const state = takeState(max);
      fs.writeFileSync(stateFile, state.data, { mode: 0o600 });
      record = { kind: "javascript", kept: state.kept, not_kept: state.notKept };
      record.bytes = state.data.length;
      record.declared = state.declared;
    } catch (e) {
      try {
        fs.unlinkSync(stateFile);
      } catch {}
      record = { kind: "javascript", error: errorMessage(e) };
    }
    return writeRecord(record) && !record.error ? 0 : 1;
  }

  function restore() {
    let record;
    try {
      const state = readState(path.join(SNAPSHOT, "state"));
      const skipped = extractWorkdir(path.join(SNAPSHOT, "files.tar"));
      const names = bringBack(state);
      record = { kind: "javascript", restored: names.restored, not_restored: names.notRestored };
      if (skipped.length > 0) record.files_skipped = skipped;
    } catch (e) {
      record = { kind: "javascript", error: errorMessage(e) };
    }
    for (const name of ["state", "files.tar"]) {
      try {
        fs.unlinkSync(path.join(SNAPSHOT, name));
      } catch {}
    }
    mark = touch(MARK);
    return writeRecord(record) && !record.error ? 0 : 1;
  }

  function writeRecord(record) {
    try {
      const text = JSON.stringify(record) + "\n";
      fs.writeFileSync(path.join(SNAPSHOT, "record.json"), text, { mode: 0o600 });
      return true;
    } catch {
      return false;
    }
  }

  // What a snapshot keeps of the session, as the cells left it: the global object's properties
  // they made (var, function, and what was assigned to globalThis) and the global lexical
  // declarations (let, const, class: not properties of it; V8's inspector lists them), each with
  // the way it was declared (a const is one that cannot be assigned) and its value, made again
  // in one of three ways:
  //   data, all of it in one v8.serialize (so that two names for one object stay one object):
  //     plain data (see dataProblem), with which objects were frozen or sealed (see integrity);
  //   source: a function or a class, evaluated again from its source text in the global scope
  //     (functions that call one another, or use other names, find them there once restored):
  //     only one that uses no variables around it but global ones (the inspector lists the
  //     scopes it closes over), and whose properties and prototype hold what its source makes,
  //     or data it was given since (f.cache = {}, a static field's value now), which is carried
  //     as data; made once for all the names it has (the others are "same" as the first);
  //   module: a module's exports or one of their properties (const fs = require("fs"), a
  //     TypeScript import), required again (loaded anew: what was changed in it is not kept).
  // Anything else is not kept, with why: an instance of a class (as data it would lose its
  // class, and its private fields are out of reach), an object that holds functions, a Promise,
  // a handle, a Symbol, a getter, a let or const whose declaration failed. Nothing is run nor
  // changed to find this out: values are read with property descriptors, never through getters
  // or Proxies. Throws when the state would take more than max bytes.
  function takeState(max) {
    const session = new (require("inspector").Session)();
    session.connect();
    try {
      const state = { format: FORMAT, entries: [], values: [], integrity: [] };
      const exported = moduleExports();
      const found = { state, session, exported, made: new Map(), bytes: 0, max };
      const notKept = [];
      const keep = (name, decl, value, expression, attributes) => {
        const entry = { name, decl };
        if (attributes) entry.attributes = attributes;
        const why = describe(entry, value, expression, found);
        if (why) notKept.push({ name, type: typeName(value), why });
        else state.entries.push(entry);
      };
      for (const key of Reflect.ownKeys(globalThis)) {
        if (loaderGlobals.has(key) || !changedGlobal(key)) continue;
        if (typeof key === "symbol") {
          const why = "a property of globalThis keyed by a Symbol, which is this process's own";
          notKept.push({ name: String(key), type: "symbol", why });
          continue;
        }
        const d = Object.getOwnPropertyDescriptor(globalThis, key);
        if (!d) continue;
        if (!("value" in d)) {
          notKept.push({ name: key, type: "accessor", why: "a getter or setter of globalThis" });
          continue;
        }
        // var and function declarations make properties that cannot be deleted; an assignment
        // to an undeclared name (or to globalThis.name) one that can: kept as such ("global"),
        // as is a property of Node's that was given another value (it replaces Node's).
        if (baseline.has(key)) {
          const { writable, enumerable, configurable } = d;
          const attributes = { writable, enumerable, configurable, replaces: true };
          keep(key, "global", d.value, `this[${JSON.stringify(key)}]`, attributes);
        } else if (!d.configurable && d.writable && d.enumerable) {
          keep(key, declaredFunction(d.value, key) ? "function" : "var", d.value, key);
        } else {
          const { writable, enumerable, configurable } = d;
          const expression = `this[${JSON.stringify(key)}]`;
          keep(key, "global", d.value, expression, { writable, enumerable, configurable });
        }
      }
      for (const name of post(session, "Runtime.globalLexicalScopeNames", {}).names) {
        let value;
        try {
          value = new vm.Script(name).runInThisContext();
        } catch {
          const why = "its declaration failed, so it never had a value";
          notKept.push({ name, type: "uninitialized", why });
          continue;
        }
        // Assigning its own value changes nothing, and a const refuses it.
        let decl = "let";
        try {
          new vm.Script(`${name} = ${name};`).runInThisContext();
        } catch {
          decl = "const";
        }
        if (decl === "let" && typeof value === "function" && !util.types.isProxy(value)) {
          const own = Object.getOwnPropertyDescriptor(value, "name");
          if (/^class\b/.test(sourceText(value)) && own && own.value === name) decl = "class";
        }
        keep(name, decl, value, name);
      }
      state.integrity = integrity(state.values);
      const data = v8.serialize(state);
      if (data.length > max) throw overMax(data.length, max);
      const kept = state.entries.map((e) => e.name);
      const declared = Object.fromEntries(state.entries.map((e) => [e.name, e.decl]));
      return { data, kept, notKept, declared };
    } finally {
      try {
        post(session, "Runtime.releaseObjectGroup", { objectGroup: "cs-snapshot" });
      } catch {}
      session.disconnect();
    }
  }

  // Whether the global property key is not as it was before the first cell: a new one, or one of
  // Node's with another value. (node -e's builtin modules are getters that load them, and become
  // values when assigned: var fs = require("fs") leaves fs as it was.)
  function changedGlobal(key) {
    const before = baseline.get(key);
    if (!before) return true;
    const now = Object.getOwnPropertyDescriptor(globalThis, key);
    if (!now || !("value" in now)) return false; // (a getter is read by no one here)
    if ("value" in before) return !Object.is(now.value, before.value);
    if (typeof key !== "string" || !Module.builtinModules.includes(key)) return true;
    return !loadedBuiltins().has(key) || !Object.is(now.value, require(key));
  }

  // The builtin modules this process has loaded (to load one to compare would change it).
  function loadedBuiltins() {
    const loaded = new Set();
    for (const line of process.moduleLoadList) {
      if (line.startsWith("NativeModule ")) loaded.add(line.slice("NativeModule ".length));
    }
    return new Set(Module.builtinModules.filter((name) => loaded.has(name)));
  }

  function overMax(bytes, max) {
    return new Error(`the state takes ${bytes} bytes or more, more than max_bytes (${max})`);
  }

  // Fills in how entry's value is made again (see takeState); returns why it cannot be, if so.
  function describe(entry, value, expression, found) {
    const { state } = found;
    const add = (bytes) => {
      found.bytes += bytes;
      if (found.bytes > found.max) throw overMax(found.bytes, found.max);
    };
    if (typeof value === "symbol") return "a Symbol, which is this process's own";
    if (typeof value !== "function") {
      const data = dataProblem(value);
      if (data.why === null) {
        add(data.bytes);
        entry.how = "data";
        entry.index = state.values.push(value) - 1;
        return null;
      }
      if (value === null || typeof value !== "object" || !found.exported.has(value)) {
        return data.why;
      }
    }
    // (one function under two names is made once)
    if (found.made.has(value)) {
      Object.assign(entry, { how: "same", as: found.made.get(value) });
      return null;
    }
    // (a function that needs no more than its source is taken from it, even if a module's
    // exports have it too: a cell may have given it to one)
    const exported = found.exported.get(value);
    const text = typeof value === "function" ? sourceText(value) : "";
    const made = text && sourceProblem(value, text, expression, found.session);
    if (exported && (!text || typeof made === "string")) {
      Object.assign(entry, { how: "module" }, exported);
      return null;
    }
    if (typeof made === "string") return made;
    add(text.length);
    entry.how = "source";
    entry.text = text;
    found.made.set(value, entry.name);
    // (an arrow function or a class expression has the name of what it was declared as)
    const name = Object.getOwnPropertyDescriptor(value, "name");
    if (name && typeof name.value === "string") entry.fnName = name.value;
    if (made.length > 0) entry.statics = [];
    for (const [key, d, bytes] of made) {
      add(bytes);
      const { writable, enumerable, configurable } = d;
      const index = state.values.push(d.value) - 1;
      entry.statics.push([key, index, { writable, enumerable, configurable }]);
    }
    return null;
  }

  // Why fn cannot be made again from its source text, or the data it was given since that its
  // source does not make (f.cache = {}, a static field's value), [key, descriptor, bytes]: a
  // function or a getter is only if a class's source declares it static, and its prototype's
  // members only if the class's source declares them.
  function sourceProblem(fn, text, expression, session) {
    if (util.types.isProxy(fn)) return "a Proxy";
    if (/\{\s*\[native code\]\s*\}$/.test(text)) {
      return "a built-in or bound function, which has no source text";
    }
    try {
      new vm.Script(`(${text}\n)`);
    } catch {
      return "its source text (a method's) cannot be evaluated on its own";
    }
    const isClass = /^class\b/.test(text);
    const data = [];
    const added = [];
    for (const key of Reflect.ownKeys(fn)) {
      if (["length", "name", "prototype", "arguments", "caller"].includes(key)) continue;
      const d = Object.getOwnPropertyDescriptor(fn, key);
      const value = "value" in d && typeof d.value !== "function" ? dataProblem(d.value) : null;
      if (value && value.why === null && typeof key === "string") data.push([key, d, value.bytes]);
      else if (!(isClass && declaredIn(text, key, true))) added.push(String(key));
    }
    if (added.length > 0) {
      return `it was given properties (${added.slice(0, 5).join(", ")}) its source does not make`;
    }
    const d = Object.getOwnPropertyDescriptor(fn, "prototype");
    const proto = d && d.value;
    if (proto !== null && typeof proto === "object") {
      if (util.types.isProxy(proto)) return "its prototype is a Proxy";
      const constructor = Object.getOwnPropertyDescriptor(proto, "constructor");
      if (!util.types.isGeneratorFunction(fn) && !(constructor && constructor.value === fn)) {
        return "its prototype was replaced";
      }
      const members = Reflect.ownKeys(proto).filter(
        (k) => k !== "constructor" && !(isClass && declaredIn(text, k, false))
      );
      if (members.length > 0) {
        return `its prototype was given members (${members.slice(0, 5).map(String).join(", ")})`;
      }
    }
    return closesOver(fn, expression, session) || data;
  }

  // Whether a class's source text declares a member of that name: static (a static method,
  // field, getter) or not (a method or accessor of its prototype). Found by its text, as a
  // method's or a field's head; a member named by a computed key only by the key's text.
  function declaredIn(text, key, isStatic) {
    if (typeof key === "symbol") {
      return key.description !== undefined && text.includes(`[${key.description}]`);
    }
    const name = key.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    const head = `(?:async\\s+|get\\s+|set\\s+|\\*\\s*)*(?:${name}|"${name}"|'${name}')`;
    if (isStatic) return new RegExp(`\\bstatic\\s+${head}(?![\\w$])`).test(text);
    return new RegExp(`(?:^|[\\s;{}])${head}\\s*\\(`).test(text.replace(/^class\b/, ""));
  }

  // Why fn uses variables of more than the global scope (its own name's, for a class or a
  // function that refers to itself, apart): the scopes V8's inspector says it closes over. What
  // those variables hold would be lost, or the function would not find them.
  function closesOver(fn, expression, session) {
    const evaluated = post(session, "Runtime.evaluate", {
      expression,
      objectGroup: "cs-snapshot",
      silent: true,
      throwOnSideEffect: true,
    });
    const id = evaluated.result && evaluated.result.objectId;
    if (evaluated.exceptionDetails || !id) return "its scopes cannot be read";
    const own = post(session, "Runtime.getProperties", { objectId: id, ownProperties: true });
    const scopes = (own.internalProperties || []).find((p) => p.name === "[[Scopes]]");
    if (!scopes || !scopes.value.objectId) return "its scopes cannot be read";
    const list = post(session, "Runtime.getProperties", {
      objectId: scopes.value.objectId,
      ownProperties: true,
    });
    const name = Object.getOwnPropertyDescriptor(fn, "name");
    for (const scope of list.result) {
      if (!/^[0-9]+$/.test(scope.name)) continue;
      const kind = scope.value.description || "";
      if (kind === "Script" || kind === "Global") continue;
      const names = post(session, "Runtime.getProperties", {
        objectId: scope.value.objectId,
        ownProperties: true,
      }).result.map((p) => p.name);
      if (names.every((n) => name && n === name.value)) continue;
      return `it uses variables around it that are not global (${names.slice(0, 5).join(", ")})`;
    }
    return null;
  }

  // The values that are modules' exports, or one of their properties, with the require() that
  // gives them back: the builtins this process has loaded and the modules in require's cache (to
  // load one to compare would change the process).
  function moduleExports() {
    const found = new Map();
    const add = (request, exports) => {
      const isObject = typeof exports === "object" || typeof exports === "function";
      if (exports === null || !isObject || util.types.isProxy(exports)) return;
      if (!found.has(exports)) found.set(exports, { module: request, key: null });
      for (const key of Object.keys(exports)) {
        const d = Object.getOwnPropertyDescriptor(exports, key);
        const value = d && d.value;
        if (value === null || (typeof value !== "object" && typeof value !== "function")) continue;
        if (!found.has(value)) found.set(value, { module: request, key });
      }
    };
    for (const name of loadedBuiltins()) add(name, require(name));
    for (const [file, m] of Object.entries(Module._cache)) if (m && m.loaded) add(file, m.exports);
    return found;
  }

  // Why v8.serialize would not give value back as it is (why null when it would), and the least
  // it takes there (bytes). It keeps plain data: primitives but Symbols; objects, arrays, Maps,
  // Sets, Dates, RegExps, errors, boxed primitives, ArrayBuffers, typed arrays, DataViews and
  // Buffers of the language's own classes, with their own enumerable properties. Not an instance
  // of another class (it would come back a plain object), nor a function, a Promise, a handle, a
  // Proxy, an object without a prototype, a getter, a property keyed by a Symbol or not
  // enumerable, a read-only property of an object that is not frozen.
  function dataProblem(root) {
    const seen = new Set();
    const stack = [root];
    let bytes = 0;
    const problem = (value, what) => {
      if (value !== root) return { why: `it holds ${what}, which cannot be saved as data` };
      if (what.startsWith("an instance")) {
        return { why: `${what}: as data it would come back without its class` };
      }
      return { why: what };
    };
    while (stack.length > 0) {
      const value = stack.pop();
      bytes += 1;
      if (typeof value === "string") bytes += value.length;
      if (typeof value === "symbol") return problem(value, "a Symbol");
      if (typeof value === "function") return problem(value, "a function");
      if (value === null || typeof value !== "object" || seen.has(value)) continue;
      seen.add(value);
      const kind = dataKind(value);
      if (kind === null) return problem(value, otherObject(value));
      if (kind === "bytes") bytes += value.byteLength;
      const why = ownProblem(value, kind, stack);
      if (why) return problem(value, why);
    }
    return { why: null, bytes };
  }

  // What an object that is not data is, for a record.
  function otherObject(value) {
    if (util.types.isProxy(value)) return "a Proxy";
    if (util.types.isPromise(value)) return "a Promise (what it waits for is this process's)";
    if (Object.getPrototypeOf(value) === null) return "an object without a prototype";
    return `an instance of ${typeName(value)}`;
  }

  function dataKind(value) {
    if (util.types.isProxy(value)) return null;
    const proto = Object.getPrototypeOf(value);
    const types = util.types;
    const of = (classes) => classes.some((c) => c.prototype === proto);
    if (proto === Object.prototype) return "object";
    if (proto === Array.prototype && Array.isArray(value)) return "array";
    if (proto === Map.prototype && types.isMap(value)) return "map";
    if (proto === Set.prototype && types.isSet(value)) return "set";
    if (proto === Date.prototype && types.isDate(value)) return "date";
    if (proto === RegExp.prototype && types.isRegExp(value)) return "regexp";
    if (types.isNativeError(value) && of(errorClasses)) return "error";
    if (types.isBoxedPrimitive(value) && of(boxClasses)) return "box";
    if (proto === ArrayBuffer.prototype && types.isArrayBuffer(value)) return "bytes";
    if (types.isArrayBufferView(value) && of(viewClasses)) {
      return types.isSharedArrayBuffer(value.buffer) ? null : "bytes";
    }
    return null;
  }

  // Why value's own properties would not come back (see dataProblem); puts the values they hold
  // on stack.
  function ownProblem(value, kind, stack) {
    if (kind === "map" || kind === "set") {
      if (Reflect.ownKeys(value).length > 0) return `a ${kind} with properties of its own`;
      if (kind === "map") Map.prototype.forEach.call(value, (v, k) => stack.push(k, v));
      else Set.prototype.forEach.call(value, (v) => stack.push(v));
      return null;
    }
    if (kind === "bytes") return null; // (their elements are the properties)
    const keys = Reflect.ownKeys(value);
    if (kind === "date" && keys.length > 0) return "a Date with properties of its own";
    if (kind === "regexp") {
      if (keys.length !== 1 || value.lastIndex !== 0) return "a RegExp in the middle of a search";
      return null;
    }
    if (kind === "error") {
      if (keys.some((k) => k !== "stack" && k !== "message")) return "an error with more to it";
      return null;
    }
    if (kind === "box") {
      const text = typeof value.valueOf() === "string";
      if (keys.some((k) => !text || (k !== "length" && !/^[0-9]+$/.test(k)))) {
        return "a boxed primitive with properties of its own";
      }
      return null;
    }
    const frozen = Object.isFrozen(value);
    const sealed = frozen || Object.isSealed(value);
    for (const key of keys) {
      if (kind === "array" && key === "length") continue;
      if (typeof key === "symbol") return "a property keyed by a Symbol";
      const d = Object.getOwnPropertyDescriptor(value, key);
      if (!("value" in d)) return "a getter or setter";
      if (!d.enumerable) return "a property that is not enumerable";
      if ((!d.writable && !frozen) || (!d.configurable && !sealed)) return "a read-only property";
      stack.push(d.value);
    }
    return null;
  }

  // The objects and arrays of values that are frozen, sealed or not extensible, which
  // v8.serialize does not say: [place, "freeze" | "seal" | "preventExtensions"], by their place in
  // a walk of values that goes the same way through what v8.deserialize gives back (see
  // bringBack, which passes apply to do it).
  function integrity(values, apply) {
    const found = [];
    const places = new Map(apply ? apply.map(([place, how]) => [place, how]) : []);
    const seen = new Set();
    const stack = [...values].reverse();
    for (let place = 0; stack.length > 0; ) {
      const value = stack.pop();
      if (value === null || typeof value !== "object" || seen.has(value)) continue;
      seen.add(value);
      const here = place++;
      const children = [];
      if (util.types.isMap(value)) Map.prototype.forEach.call(value, (v, k) => children.push(k, v));
      else if (util.types.isSet(value)) Set.prototype.forEach.call(value, (v) => children.push(v));
      else if (Array.isArray(value) || Object.getPrototypeOf(value) === Object.prototype) {
        for (const key of Object.keys(value)) children.push(value[key]);
        const how = places.get(here);
        if (apply && ["freeze", "seal", "preventExtensions"].includes(how)) Object[how](value);
        else if (!apply && !Object.isExtensible(value)) {
          const how = Object.isFrozen(value) ? "freeze" : Object.isSealed(value) ? "seal" : null;
          found.push([here, how || "preventExtensions"]);
        }
      }
      for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]);
    }
    return found;
  }

  function declaredFunction(value, key) {
    if (typeof value !== "function" || util.types.isProxy(value)) return false;
    const name = Object.getOwnPropertyDescriptor(value, "name");
    return /^(async\s+)?function\b/.test(sourceText(value)) && name && name.value === key;
  }

  function sourceText(fn) {
    return Function.prototype.toString.call(fn);
  }

  // What value is, for a record: its type, or its class's name (read without running anything).
  function typeName(value) {
    if (value === null) return "null";
    if (typeof value === "function") {
      if (util.types.isProxy(value)) return "Proxy";
      return /^class\b/.test(sourceText(value)) ? "class" : "function";
    }
    if (typeof value !== "object") return typeof value;
    for (let o = value, n = 0; o !== null && n < 100; n++) {
      if (util.types.isProxy(o)) return "Proxy";
      o = Object.getPrototypeOf(o);
      const d = o && Object.getOwnPropertyDescriptor(o, "constructor");
      const maker = d && typeof d.value === "function" && !util.types.isProxy(d.value);
      const name = maker && Object.getOwnPropertyDescriptor(d.value, "name");
      if (name && typeof name.value === "string" && name.value) return name.value;
    }
    return "object without a prototype";
  }

  // The answer to an inspector request, which an in-process session gives at once.
  function post(session, method, params) {
    let answer = null;
    session.post(method, params, (error, result) => {
      answer = { error, result };
    });
    if (answer === null) throw new Error(`the inspector did not answer ${method}`);
    if (answer.error) throw answer.error;
    return answer.result;
  }

  function readState(file) {
    let data;
    try {
      data = fs.readFileSync(file, { flag: fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW });
    } catch (e) {
      throw new Error(`no state to restore (${e.code || e.message})`);
    }
    let state = null;
    try {
      state = v8.deserialize(data);
    } catch {}
    const ok = state && state.format === FORMAT && Array.isArray(state.entries);
    if (!ok || !Array.isArray(state.values) || !Array.isArray(state.integrity)) {
      throw new Error("the state is corrupt");
    }
    return state;
  }

  // The names of a snapshot's state declared again in the global scope as they were (see
  // takeState): var and function as var (a function declaration makes the same binding), let
  // and class as let (a class declaration's binding is a let's), const as const, so that later
  // cells use them as they would have. Each is declared by a script of its own that takes the
  // value from a hidden property of globalThis, so that it cannot fail halfway (a let whose
  // initializer throws stays undeclarable for good). Classes (and the second names of functions)
  // come last, again while some are made: one may extend another, or use any name in a static
  // initializer. Output of what runs meanwhile (a static block, a module loaded again) is
  // dropped.
  function bringBack(state) {
    const restored = [];
    const notRestored = [];
    const slot = `cs restore ${process.pid}`;
    const requireAgain = Module.createRequire(mainModule.filename);
    const made = new Map(); // name -> function or class made from its source
    const make = (entry) => {
      if (entry.how === "data") return state.values[entry.index];
      if (entry.how === "same") {
        if (!made.has(entry.as)) throw new Error(`${entry.as} is not made`);
        return made.get(entry.as);
      }
      if (entry.how === "module") {
        const exports = requireAgain(entry.module);
        return entry.key === null ? exports : exports[entry.key];
      }
      if (entry.how !== "source") throw new Error("the state is corrupt");
      const filename = `<restored ${entry.name}>`;
      const value = new vm.Script(`(${entry.text}\n)`, { filename }).runInThisContext();
      const name = Object.getOwnPropertyDescriptor(value, "name");
      if (typeof entry.fnName === "string" && (!name || name.value !== entry.fnName)) {
        if (!name || "value" in name) {
          Object.defineProperty(value, "name", { value: entry.fnName, configurable: true });
        }
      }
      for (const [key, index, attributes] of entry.statics || []) {
        Object.defineProperty(value, key, { value: state.values[index], ...attributes });
      }
      made.set(entry.name, value);
      return value;
    };
    const declare = (entry, value) => {
      const { name, decl } = entry;
      if (decl === "global") {
        const { replaces, ...attributes } = entry.attributes || {};
        if (!replaces && Object.hasOwn(globalThis, name)) {
          throw new Error("globalThis has a property of that name already");
        }
        Object.defineProperty(globalThis, name, { value, ...attributes });
        return;
      }
      if (!/^[\p{ID_Start}$_][\p{ID_Continue}$\u200c\u200d]*$/u.test(name)) {
        throw new Error("not a name");
      }
      const keyword = { var: "var", function: "var", let: "let", class: "let", const: "const" };
      if (!Object.hasOwn(keyword, decl)) throw new Error("the state is corrupt");
      if (keyword[decl] === "var" && Object.hasOwn(globalThis, name)) {
        throw new Error("it is declared already");
      }
      globalThis[slot] = value;
      const source = `${keyword[decl]} ${name} = this[${JSON.stringify(slot)}];`;
      new vm.Script(source, { filename: "<restore>" }).runInThisContext();
    };
    const streams = [process.stdout, process.stderr];
    const writes = streams.map((s) => Object.getOwnPropertyDescriptor(s, "write"));
    for (const s of streams) s.write = () => true;
    Object.defineProperty(globalThis, slot, { writable: true, configurable: true });
    try {
      integrity(state.values, state.integrity);
      const classes = []; // (and second names of what is made from source)
      for (const entry of state.entries) {
        if ((entry.how === "source" && /^class\b/.test(entry.text)) || entry.how === "same") {
          classes.push(entry);
          continue;
        }
        try {
          declare(entry, make(entry));
          restored.push(entry.name);
        } catch (e) {
          notRestored.push({ name: entry.name, why: errorMessage(e) });
        }
      }
      for (let made = true; made; ) {
        made = false;
        for (const entry of [...classes]) {
          let value;
          try {
            value = make(entry);
          } catch (e) {
            entry.error = e;
            continue;
          }
          made = true;
          classes.splice(classes.indexOf(entry), 1);
          try {
            declare(entry, value);
            restored.push(entry.name);
          } catch (e) {
            notRestored.push({ name: entry.name, why: errorMessage(e) });
          }
        }
      }
      for (const entry of classes) {
        notRestored.push({ name: entry.name, why: errorMessage(entry.error) });
      }
    } finally {
      delete globalThis[slot];
      streams.forEach((s, i) => {
        if (writes[i]) Object.defineProperty(s, "write", writes[i]);
        else delete s.write;
      });
    }
    return { restored, notRestored };
  }

  function errorMessage(e) {
    try {
      return e instanceof Error ? e.message : String(e);
    } catch {
      return "an error";
    }
  }
}

// The workdir of a snapshot, for a restore (see restore in serve): what /sandbox holds goes, and
// the entries of file take its place. file is the archive Docker's archive endpoint made of the
// old sandbox's /sandbox: POSIX ustar with PAX extended headers, names "sandbox/...". Read here
// rather than by GNU tar, whose listing would have to be parsed (names with newlines, " -> ") and
// trusted to match what it then does: here every entry is checked as it is written. Only entries
// under sandbox/ are; not one with an absolute name or "..", a device, FIFO or socket, nor what
// would be written through a link or into another file system (a mount under /sandbox, which
// stays as it is, as clearing leaves it). A hard link becomes a copy of the file it links to,
// if that is the archive's; a symbolic link stays only if it leads somewhere in /sandbox. Modes
// are kept without set-user-ID and set-group-ID, and modification times (of folders once their
// content is in). Files are written as they are read, a MiB at a time. Throws, before anything
// is removed, when file is missing or corrupt; returns the entries left out, {path, why}.
function extractWorkdir(file) {
  const path = require("path");
  const root = "/sandbox";
  let fd;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  } catch (e) {
    throw new Error(`no files.tar to restore (${e.code || e.message})`);
  }
  try {
    const entries = tarEntries(fd, fs.fstatSync(fd).size);
    const dev = fs.lstatSync(root).dev;
    const skipped = [];
    const skip = (where, why) => {
      if (skipped.length < 100) skipped.push({ path: where, why });
    };
    clearFolder(root, dev, skip);
    const folders = [];
    const links = [];
    const files = new Map(); // regular files written, for hard links to them
    const checked = new Set([root]); // folders known to be this file system's, not links
    for (const entry of entries) {
      const where = workdirPath(entry.name, root);
      if (where === root) continue; // (the folder itself stays)
      if (where.why) {
        skip(entry.name, where.why);
        continue;
      }
      try {
        const why = makeFolders(path.dirname(where), dev, checked);
        if (why) {
          skip(where, why);
          continue;
        }
        const mode = entry.mode & 0o1777;
        const kind = entry.type;
        if (kind === "5") {
          const st = lstatOrNull(where);
          if (st && (!st.isDirectory() || st.dev !== dev)) {
            skip(where, "there is another file of that name");
            continue;
          }
          if (!st) fs.mkdirSync(where, { mode: 0o700 });
          checked.add(where);
          folders.push([where, mode, entry.mtime]);
          continue;
        }
        let from = entry;
        if (kind === "1") {
          const target = workdirPath(entry.link, root);
          from = files.get(target);
          if (!from) {
            skip(where, "a hard link to a file the archive does not have");
            continue;
          }
        } else if (kind !== "0" && kind !== "7" && kind !== "2") {
          skip(where, kind >= "3" && kind <= "6" ? "a device, FIFO or socket" : "an odd entry");
          continue;
        }
        const st = lstatOrNull(where);
        if (st && st.isDirectory()) {
          skip(where, "there is a folder of that name");
          continue;
        }
        if (st) fs.unlinkSync(where);
        files.delete(where);
        if (kind === "2") {
          fs.symlinkSync(entry.link, where);
          fs.lutimesSync(where, entry.mtime, entry.mtime);
          links.push(where);
          continue;
        }
        writeEntry(fd, from, where, mode, entry.mtime);
        files.set(where, from);
      } catch (e) {
        skip(where, `could not be written (${e.code || e.message})`);
      }
    }
    for (const link of links) {
      const st = lstatOrNull(link);
      if (!st || !st.isSymbolicLink() || leadsInto(link, root)) continue;
      fs.unlinkSync(link);
      skip(link, "a link that leads out of /sandbox");
    }
    for (const [where, mode, mtime] of folders.reverse()) {
      try {
        fs.utimesSync(where, mtime, mtime);
        fs.chmodSync(where, mode);
      } catch {}
    }
    return skipped;
  } finally {
    fs.closeSync(fd);
  }
}

// The entries of a tar archive: {name, type, mode, mtime, size, data (where it starts), link}.
// POSIX ustar, with PAX extended headers (path, linkpath, size, mtime) and GNU long names;
// numbers in octal or base-256. Throws when the archive is cut short (it has no end) or a
// header's checksum is wrong.
function tarEntries(fd, size) {
  const header = Buffer.alloc(512);
  const entries = [];
  let pax = {};
  let globalPax = {};
  let longName = null;
  let longLink = null;
  const read = (buffer, at) => {
    for (let done = 0; done < buffer.length; ) {
      const n = fs.readSync(fd, buffer, done, buffer.length - done, at + done);
      if (n <= 0) throw new Error("files.tar is cut short");
      done += n;
    }
  };
  const text = (buffer) => {
    const end = buffer.indexOf(0);
    return buffer.toString("utf8", 0, end < 0 ? buffer.length : end);
  };
  for (let at = 0; at + 512 <= size; ) {
    read(header, at);
    if (header.every((b) => b === 0)) return entries;
    if (tarNumber(header, 148, 8) !== tarChecksum(header)) {
      throw new Error(`files.tar is corrupt (a bad header at byte ${at})`);
    }
    const type = header[156] === 0 ? "0" : String.fromCharCode(header[156]);
    const ext = { ...globalPax, ...pax };
    const length = "size" in ext ? Number(ext.size) : tarNumber(header, 124, 12);
    const data = at + 512;
    at = data + Math.ceil(length / 512) * 512;
    if (!Number.isSafeInteger(length) || length < 0 || at > size) {
      throw new Error("files.tar is cut short");
    }
    if (type === "x" || type === "g" || type === "L" || type === "K") {
      if (length > 1 << 20) throw new Error("files.tar is corrupt (a header of a MiB or more)");
      const body = Buffer.alloc(length);
      read(body, data);
      if (type === "L") longName = text(body);
      else if (type === "K") longLink = text(body);
      else Object.assign(type === "x" ? pax : globalPax, paxRecords(body));
      continue;
    }
    let name = text(header.subarray(0, 100));
    const prefix = text(header.subarray(345, 500));
    if (header.toString("latin1", 257, 263) === "ustar\0" && prefix) name = prefix + "/" + name;
    const mtime = Number("mtime" in ext ? ext.mtime : tarNumber(header, 136, 12));
    const linkName = header.subarray(157, 257);
    entries.push({
      name: longName !== null ? longName : "path" in ext ? ext.path : name,
      type,
      mode: tarNumber(header, 100, 8),
      mtime: Number.isFinite(mtime) ? mtime : 0,
      size: length,
      data,
      link: longLink !== null ? longLink : "linkpath" in ext ? ext.linkpath : text(linkName),
    });
    pax = {};
    longName = longLink = null;
  }
  // (an archive ends with blocks of zeros: one cut between two entries has none)
  throw new Error("files.tar is cut short");
}

// A number field of a tar header: octal text, or base-256 when its first byte's top bit is set.
function tarNumber(header, at, length) {
  if (header[at] & 0x80) {
    let value = header[at] & 0x3f;
    for (let i = 1; i < length; i++) value = value * 256 + header[at + i];
    return header[at] & 0x40 ? -value : value;
  }
  const digits = header.toString("latin1", at, at + length).replace(/[\0 ]+$/, "");
  return /^ *[0-7]*$/.test(digits) ? parseInt(digits.trim() || "0", 8) : NaN;
}

function tarChecksum(header) {
  let sum = 0;
  for (let i = 0; i < 512; i++) sum += i >= 148 && i < 156 ? 32 : header[i];
  return sum;
}

// The records of a PAX extended header, "<length> <key>=<value>\n" each.
function paxRecords(body) {
  const records = {};
  for (let at = 0; at < body.length; ) {
    const space = body.indexOf(32, at);
    const length = space < 0 ? NaN : parseInt(body.toString("latin1", at, space), 10);
    if (!(length > 0) || at + length > body.length) throw new Error("files.tar is corrupt (PAX)");
    const record = body.toString("utf8", space + 1, at + length - 1);
    const equals = record.indexOf("=");
    if (equals > 0) records[record.slice(0, equals)] = record.slice(equals + 1);
    at += length;
  }
  return records;
}

// Where an archive's entry goes: "sandbox/a/b" is /sandbox/a/b; {why} for another name.
function workdirPath(name, root) {
  if (name.startsWith("/")) return { why: "an absolute name" };
  const parts = name.split("/").filter((p) => p !== "" && p !== ".");
  if (parts.includes("..")) return { why: "a name with .." };
  if (parts[0] !== "sandbox") return { why: "a name outside sandbox/" };
  // (The snapshot's handover, and the session's workspaces, which are the folders' and not a
  // snapshot's: /workspace leads to .cs-workspace.)
  if (parts[1] === ".cs-snapshot" || parts[1] === ".cs-workspace")
    return { why: "not the session's own: the snapshot's handover or the workspaces" };
  return [root, ...parts.slice(1)].join("/");
}

// Makes the folders down to dir that are not there yet; why an entry cannot go in dir: a link,
// a file or another file system on the way.
function makeFolders(dir, dev, checked) {
  if (checked.has(dir)) return null;
  const parent = dir.slice(0, dir.lastIndexOf("/")) || "/";
  const why = makeFolders(parent, dev, checked);
  if (why) return why;
  const st = lstatOrNull(dir);
  if (!st) fs.mkdirSync(dir, { mode: 0o755 });
  else if (st.isSymbolicLink()) return "its folder is a link";
  else if (!st.isDirectory()) return "its folder is a file";
  else if (st.dev !== dev) return "its folder is another file system (a mount)";
  checked.add(dir);
  return null;
}

// Writes the data of the archive's entry to a new file (never through a link).
function writeEntry(fd, entry, where, mode, mtime) {
  const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW } = fs.constants;
  const out = fs.openSync(where, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600);
  try {
    const chunk = Buffer.allocUnsafe(Math.max(1, Math.min(entry.size, 1 << 20)));
    for (let done = 0; done < entry.size; ) {
      const length = Math.min(chunk.length, entry.size - done);
      const n = fs.readSync(fd, chunk, 0, length, entry.data + done);
      if (n <= 0) throw new Error("files.tar is cut short");
      for (let put = 0; put < n; ) put += fs.writeSync(out, chunk, put, n - put);
      done += n;
    }
    fs.fchmodSync(out, mode);
    fs.futimesSync(out, mtime, mtime);
  } finally {
    fs.closeSync(out);
  }
}

// Removes what dir holds but other file systems mounted in it (and what leads to them).
function clearFolder(dir, dev, skip) {
  let names;
  try {
    names = fs.readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const where = dir + "/" + name;
    // (the handover, see SNAPSHOT, and the workspaces, see workdirPath)
    if (where === "/sandbox/.cs-snapshot" || where === "/sandbox/.cs-workspace") continue;
    const st = lstatOrNull(where);
    if (!st || st.dev !== dev) continue;
    try {
      if (st.isDirectory()) {
        if ((st.mode & 0o700) !== 0o700) fs.chmodSync(where, 0o700);
        clearFolder(where, dev, skip);
        fs.rmdirSync(where);
      } else {
        fs.unlinkSync(where);
      }
    } catch (e) {
      if (e.code !== "ENOTEMPTY") skip(where, `could not be removed (${e.code || e.message})`);
    }
  }
}

// Whether the symbolic link leads somewhere in root, followed as the kernel would (the links on
// its way too, at most 40; a part that is not there is taken as it is written).
function leadsInto(link, root) {
  const path = require("path");
  let hops = 0;
  const follow = (dir, target) => {
    let at = target.startsWith("/") ? "/" : dir;
    for (const part of target.split("/")) {
      if (part === "" || part === ".") continue;
      if (part === "..") {
        at = path.dirname(at);
        continue;
      }
      const next = path.join(at, part);
      const st = lstatOrNull(next);
      if (!st || !st.isSymbolicLink()) at = next;
      else if (++hops > 40) throw new Error("too many links");
      else at = follow(at, fs.readlinkSync(next));
    }
    return at;
  };
  try {
    const to = follow(path.dirname(link), fs.readlinkSync(link));
    return to === root || to.startsWith(root + "/");
  } catch {
    return false;
  }
}

function lstatOrNull(where) {
  try {
    return fs.lstatSync(where);
  } catch {
    return null;
  }
}
})();
