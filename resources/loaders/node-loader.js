// Node.js entry point of a sandbox container (see containers/cs-run, "preload" mode), for
// JavaScript and, with the argument "typescript", TypeScript.
//
// Node starts (and, for TypeScript, loads the compiler) while the container waits in the pool;
// the program then arrives on stdin as "<nonce> <size>\n<source>" and runs as the main module
// /sandbox/main.js or /sandbox/main.ts. cs-run reports the exit status after node exits; the
// nonce (and " compile" when TypeScript could not parse the program) goes through the file
// named by CS_PRELOAD.
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

const byte = Buffer.alloc(1);
let head = "";
while (fs.readSync(0, byte, 0, 1, null) === 1 && byte[0] !== 10) head += String.fromCharCode(byte[0]);
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
const statusFile = process.env.CS_PRELOAD;
delete process.env.CS_PRELOAD; // for cs-run, not for the program
const main = typescript ? "/sandbox/main.ts" : "/sandbox/main.js";
fs.writeFileSync(main, src);

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
    fs.writeFileSync(statusFile, nonce + " compile\n");
    process.exit(1);
  }
}
fs.writeFileSync(statusFile, nonce + "\n");

// The lowest free descriptor is reused: this puts /dev/null on stdin, as for other programs.
// cs-run keeps its own copy of the attached stdin.
fs.closeSync(0);
fs.openSync("/dev/null", "r");
process.argv[1] = main;
Module.runMain();
