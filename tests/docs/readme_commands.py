#!/usr/bin/env python3
"""The README's commands work as written.

Checked against the built binary and dev.sh, without an engine, in a second or two:

- the set-up commands: the README's fenced blocks hold exactly two dev.sh command lines,
  `./dev.sh run` and then `./dev.sh test`, and dev.sh has both as commands (its `case` labels;
  they are not run); any other `./dev.sh X` the README names is a dev.sh command too;
- every `code-sandbox` (or `code-sandbox-mcp`) command line in the README, in fenced blocks, in
  inline code and in `claude mcp add ... -- PROGRAM ARGS`, names only options that
  `code-sandbox --help` lists, with a value where the option takes one; the lines that only print
  (`--help`, `--version`, `--print-token`) are run with the built binary and must exit 0;
- every inline option the README names (`--egress HOST`) is one `--help` lists;
- every JSON block parses; each client configuration (`mcpServers`) names `code-sandbox` or
  `code-sandbox-mcp` as its command with arguments as above, or the default HTTP endpoint
  (`http://127.0.0.1:8765/mcp`, the defaults `--help` gives for `--host` and `--port`);
- the README quotes no benchmark figure (p50, p95, calls/s, milliseconds, ratios): those live in
  docs/benchmarks.md, which a benchmark run rewrites;
- the `code-sandbox` command lines and client configurations in the shell and JSON blocks of
  docs/*.md hold to the same rules;
- docs/options.md names only options `--help` lists, and every option `--help` lists;
- the relative links of the README and of docs/*.md lead to files that exist, and their
  `#anchors` to headings there.

Then it checks itself: a README naming an option the binary does not have (on a command line,
inline, or in a client configuration), a third set-up command, a client configuration starting
another program, or a link to a page that does not exist must each be reported.

Usage: readme_commands.py --bin BUILD/bin/code-sandbox [--root SOURCE_DIR] [--readme FILE]
Exit status 0 when everything holds, 1 when something does not (each problem on its own line).
"""

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import unicodedata

PROGRAMS = {"code-sandbox", "code-sandbox-mcp"}
SETUP = ["./dev.sh run", "./dev.sh test"]
HTTP_ENDPOINT = "http://127.0.0.1:8765/mcp"
# Lines run with the built binary: they print and exit, and need no engine.
RUNNABLE = {("--help",), ("--version",), ("--print-token",)}
SHELL_LANGS = {"sh", "bash", "shell", "console", ""}


# --- Markdown ------------------------------------------------------------------------------

FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([\w+-]*)\s*$")


def split_markdown(text):
    """Returns (blocks, prose): the fenced blocks as (language, [lines], first line number), and
    the text outside them with the blocks' lines blanked (line numbers kept)."""
    blocks, prose, block = [], [], None
    for number, line in enumerate(text.split("\n"), 1):
        m = FENCE.match(line)
        if block is None:
            if m:
                block = (m.group(3).lower(), [], number + 1, m.group(2))
                prose.append("")
            else:
                prose.append(line)
        else:
            if m and m.group(2).startswith(block[3][0]) and len(m.group(2)) >= len(block[3]) \
                    and not m.group(3):
                blocks.append(block[:3])
                block = None
            else:
                block[1].append(line)
            prose.append("")
    if block is not None:
        blocks.append(block[:3])
    return blocks, "\n".join(prose)


def inline_spans(prose):
    """Inline code spans of the prose, as (text, line number)."""
    spans = []
    for number, line in enumerate(prose.split("\n"), 1):
        for m in re.finditer(r"(`+)(.+?)\1", line):
            spans.append((m.group(2).strip(), number))
    return spans


def github_slug(heading):
    """The anchor GitHub gives a heading (before duplicates get -1, -2, ...)."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links: their text
    text = text.replace("`", "").strip().lower()
    kept = []
    for ch in text:
        if ch in " -_" or ch.isalnum() or unicodedata.category(ch).startswith("M"):
            kept.append(ch)
    return "".join(kept).replace(" ", "-")


def anchors_of(text):
    _, prose = split_markdown(text)
    seen, anchors = {}, set()
    for line in prose.split("\n"):
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        slug = github_slug(m.group(1))
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        anchors.add(slug if n == 0 else f"{slug}-{n}")
    return anchors


# --- The binary and dev.sh -----------------------------------------------------------------

def run_binary(binary, args, home):
    env = dict(os.environ)
    env.update({"HOME": home, "XDG_CONFIG_HOME": os.path.join(home, ".config"),
                "XDG_DATA_HOME": os.path.join(home, ".local/share"),
                "XDG_RUNTIME_DIR": home, "QT_QPA_PLATFORM": "offscreen"})
    for name in ("CODE_SANDBOX_TOKEN", "DISPLAY", "WAYLAND_DISPLAY"):
        env.pop(name, None)
    return subprocess.run([binary] + list(args), env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=30)


def help_options(help_text):
    """{option: takes a value} for every option of --help, long and short."""
    options = {}
    for line in help_text.split("\n"):
        m = re.match(r"^\s{1,4}((?:-\w, )?--[a-z0-9][a-z0-9-]*)(?: <([^>]+)>)?\s", line + " ")
        if not m:
            continue
        for name in m.group(1).split(", "):
            options[name] = bool(m.group(2))
    return options


def dev_sh_commands(dev_sh_text):
    m = re.search(r"^case \$cmd in\n(.*?)^esac", dev_sh_text, re.S | re.M)
    if not m:
        return set()
    labels = set()
    for line in m.group(1).split("\n"):
        lm = re.match(r"^    ([a-z][a-z|-]*)\)", line)
        if lm:
            labels.update(lm.group(1).split("|"))
    return labels


# --- Command lines -------------------------------------------------------------------------

def is_program(token):
    return os.path.basename(token) in PROGRAMS


def shell_lines(lines):
    """Joins continued lines; yields (command line, offset of its first line)."""
    current, start = "", None
    for i, line in enumerate(lines):
        if start is None:
            start = i
        if line.rstrip().endswith("\\"):
            current += line.rstrip()[:-1] + " "
            continue
        current += line
        yield current, start
        current, start = "", None
    if current.strip():
        yield current, start


def split_commands(line):
    """The commands of a shell line: each $(...) on its own, then the line itself. Returns lists
    of words, split at pipes and separators; comments dropped."""
    inner = re.findall(r"\$\(([^()]*)\)", line)
    outer = re.sub(r"\$\([^()]*\)", "SUBSTITUTED", line)
    commands = []
    for text in inner + [outer]:
        lexer = shlex.shlex(text, posix=True, punctuation_chars=";&|<>()")
        lexer.whitespace_split = True
        lexer.commenters = "#"
        try:
            words = list(lexer)
        except ValueError as e:
            return None, str(e)
        command = []
        for w in words:
            if set(w) <= set(";&|<>()"):
                if command:
                    commands.append(command)
                command = []
            else:
                command.append(w)
        if command:
            commands.append(command)
    return commands, None


def program_args(words):
    """The arguments given to code-sandbox in one command (a list of words), or None when the
    command does not run it. `claude mcp add NAME -- PROGRAM ARGS` runs PROGRAM with ARGS."""
    if not words:
        return None
    if words[0] == "claude":
        if "--" in words:
            rest = words[words.index("--") + 1:]
            if rest and is_program(rest[0]):
                return rest[1:]
        return None
    i = 0
    while i < len(words) and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[i]):
        i += 1  # VAR=value before the program
    if i < len(words) and words[i] in ("sudo", "exec", "env"):
        i += 1
    if i < len(words) and is_program(words[i]):
        return words[i + 1:]
    return None


def check_args(args, options, where):
    """Problems with ARGS given to code-sandbox: unknown options, missing values, stray words."""
    problems = []
    i = 0
    while i < len(args):
        word = args[i]
        if word.startswith("-"):
            name, _, value = word.partition("=")
            if name not in options:
                problems.append(f"{where}: {name} is not an option of code-sandbox (--help)")
            elif options[name] and not value:
                if i + 1 >= len(args) or args[i + 1].startswith("--"):
                    problems.append(f"{where}: {name} takes a value, and none is given")
                else:
                    i += 1
            elif not options[name] and value:
                problems.append(f"{where}: {name} takes no value")
        else:
            problems.append(f"{where}: '{word}' is not an option, nor the value of one")
        i += 1
    return problems


def check_claude_http(words, where):
    """`claude mcp add --transport http NAME URL ...`: the URL is the default endpoint."""
    if words[:3] != ["claude", "mcp", "add"] or "--transport" not in words:
        return []
    urls = [w for w in words if w.startswith("http://") or w.startswith("https://")]
    if urls != [HTTP_ENDPOINT]:
        return [f"{where}: the HTTP endpoint is {urls}, not the default {HTTP_ENDPOINT}"]
    return []


# --- The checks ------------------------------------------------------------------------------

class Checker:
    def __init__(self, binary, root):
        self.binary = binary
        self.root = root
        self.home = tempfile.mkdtemp(prefix="cs-readme-")
        result = run_binary(binary, ["--help"], self.home)
        if result.returncode != 0:
            raise SystemExit(f"{binary} --help exited {result.returncode}: {result.stderr}")
        self.help_text = result.stdout
        self.options = help_options(self.help_text)
        if "--stdio" not in self.options or "--help" not in self.options:
            raise SystemExit(f"could not read the options of {binary} --help")
        with open(os.path.join(root, "dev.sh"), encoding="utf-8") as f:
            self.dev_commands = dev_sh_commands(f.read())
        self.ran = set()

    def run_line(self, args, where):
        key = tuple(args)
        if key in self.ran:
            return []
        self.ran.add(key)
        result = run_binary(self.binary, args, self.home)
        out = result.stdout.strip()
        if result.returncode != 0:
            return [f"{where}: code-sandbox {' '.join(args)} exited {result.returncode}: "
                    f"{result.stderr.strip()[:300]}"]
        if args == ["--version"] and not out.startswith("code-sandbox "):
            return [f"{where}: code-sandbox --version printed {out!r}"]
        if args == ["--print-token"] and (not out or "\n" in out):
            return [f"{where}: code-sandbox --print-token printed {out!r}, not one token"]
        return []

    def command_problems(self, words, where):
        problems = check_claude_http(words, where)
        args = program_args(words)
        if args is None:
            return problems
        problems += check_args(args, self.options, where)
        if not problems and tuple(args) in RUNNABLE:
            problems += self.run_line(args, where)
        return problems

    def readme(self, text, name="README.md"):
        problems = []
        blocks, prose = split_markdown(text)

        # The two set-up commands, in blocks of their own, and dev.sh has them.
        setup = []
        for lang, lines, first in blocks:
            if lang not in SHELL_LANGS:
                continue
            for line, offset in shell_lines(lines):
                stripped = line.split("#")[0].strip()
                if stripped.startswith("./dev.sh") or stripped.startswith("dev.sh"):
                    setup.append((stripped, first + offset, len(lines)))
        if [s for s, _, _ in setup] != SETUP:
            problems.append(f"{name}: the set-up commands are {[s for s, _, _ in setup]}, "
                            f"not exactly {SETUP}")
        for command, line, size in setup:
            if size != 1:
                problems.append(f"{name}:{line}: '{command}' is not alone in its block")
        for command in SETUP:
            if command.split()[1] not in self.dev_commands:
                problems.append(f"dev.sh has no command '{command.split()[1]}' "
                                f"(its commands: {sorted(self.dev_commands)})")
        for span, line in inline_spans(prose):
            m = re.match(r"^\./dev\.sh\s+([a-z][a-z-]*)", span)
            if m and m.group(1) not in self.dev_commands:
                problems.append(f"{name}:{line}: dev.sh has no command '{m.group(1)}'")

        # Command lines and client configurations in fenced blocks.
        problems += self.fenced(blocks, name)

        # Inline code: command lines, and options named on their own.
        for span, line in inline_spans(prose):
            where = f"{name}:{line}"
            if span.startswith("-"):
                option = span.split()[0].partition("=")[0]
                if option not in self.options:
                    problems.append(f"{where}: {option} is not an option of code-sandbox (--help)")
                continue
            commands, _ = split_commands(span)
            for words in commands or []:
                problems += self.command_problems(words, where)

        if HTTP_ENDPOINT in text:
            port = re.search(r"--port <n>\s+HTTP port \((\d+)", self.help_text)
            host = re.search(r"--host <addr>\s+HTTP address to bind \(([\d.]+)\)", self.help_text)
            if not port or not host or f"http://{host.group(1)}:{port.group(1)}/mcp" != HTTP_ENDPOINT:
                problems.append(f"{name}: {HTTP_ENDPOINT} is not the default of --host and "
                                f"--port in --help")

        # No benchmark figure: docs/benchmarks.md has them, and a bench run changes them.
        for number, line in enumerate(prose.split("\n"), 1):
            m = re.search(r"\bp50\b|\bp95\b|calls/s|\b\d+(?:\.\d+)?\s?ms\b|\d(?:\.\d+)?\s?×", line)
            if m:
                problems.append(f"{name}:{number}: a benchmark figure ('{m.group(0)}'): quote "
                                f"none here, link docs/benchmarks.md")
        return problems

    def fenced(self, blocks, name, langs=SHELL_LANGS):
        """Problems of the command lines and JSON blocks of a page's fenced blocks (the shell
        blocks among them: those whose language is in LANGS)."""
        problems = []
        for lang, lines, first in blocks:
            if lang not in langs:
                continue
            for line, offset in shell_lines(lines):
                where = f"{name}:{first + offset}"
                commands, error = split_commands(line)
                if commands is None:
                    problems.append(f"{where}: cannot split '{line}': {error}")
                    continue
                for words in commands:
                    problems += self.command_problems(words, where)
        # JSON blocks parse; client configurations start this program or reach its endpoint.
        for lang, lines, first in blocks:
            if lang != "json":
                continue
            where = f"{name}:{first}"
            try:
                data = json.loads("\n".join(lines))
            except ValueError as e:
                problems.append(f"{where}: the JSON block does not parse: {e}")
                continue
            if not isinstance(data, dict) or "mcpServers" not in data:
                continue
            for server, config in data["mcpServers"].items():
                here = f"{where} ({server})"
                if "command" in config:
                    if not is_program(config["command"]):
                        problems.append(f"{here}: the command {config['command']!r} is not "
                                        f"code-sandbox or code-sandbox-mcp")
                    args = config.get("args", [])
                    if os.path.basename(config["command"]) == "code-sandbox" and \
                            "--stdio" not in args:
                        problems.append(f"{here}: code-sandbox without --stdio opens the window")
                    problems += check_args(args, self.options, here)
                else:
                    url = config.get("url") or config.get("httpUrl")
                    if url != HTTP_ENDPOINT:
                        problems.append(f"{here}: the URL {url!r} is not {HTTP_ENDPOINT}")
                    if "url" in config and config.get("type") != "http":
                        problems.append(f"{here}: a URL without \"type\": \"http\"")
        return problems

    def options_page(self, text, name="docs/options.md"):
        problems = []
        _, prose = split_markdown(text)
        for span, line in inline_spans(prose):
            if span.startswith("-"):
                option = span.split()[0].partition("=")[0].rstrip(",")
                if option not in self.options:
                    problems.append(f"{name}:{line}: {option} is not an option of code-sandbox")
        named = set(re.findall(r"(?<![\w-])(--[a-z0-9][a-z0-9-]*|-[a-z])\b", prose))
        for option in sorted(self.options):
            if option not in named:
                problems.append(f"{name}: {option} (in --help) is not documented")
        return problems

    def links(self, path, text):
        problems = []
        _, prose = split_markdown(text)
        prose = re.sub(r"(`+).+?\1", "", prose)  # links inside code are not links
        base = os.path.dirname(path)
        rel = os.path.relpath(path, self.root)
        for number, line in enumerate(prose.split("\n"), 1):
            for m in re.finditer(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)", line):
                target = m.group(1)
                if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                    continue  # http:, https:, mailto:
                file_part, _, anchor = target.partition("#")
                target_path = os.path.normpath(os.path.join(base, file_part)) if file_part else path
                if not os.path.exists(target_path):
                    problems.append(f"{rel}:{number}: the link {target} leads to no file")
                    continue
                if anchor and target_path.endswith(".md"):
                    with open(target_path, encoding="utf-8") as f:
                        if anchor not in anchors_of(f.read()):
                            problems.append(f"{rel}:{number}: the link {target}: no heading "
                                            f"#{anchor} in {os.path.relpath(target_path, self.root)}")
        return problems


def self_test(checker, readme_text, readme_path):
    """Each broken README must be reported, with the problem named."""
    broken = {
        "an unknown option on a command line":
            (readme_text + "\n```sh\ncode-sandbox --stdio --no-such-option\n```\n",
             "--no-such-option is not an option"),
        "an unknown option named inline":
            (readme_text + "\nSee `--no-such-option N`.\n", "--no-such-option is not an option"),
        "an unknown option after claude mcp add":
            (readme_text + "\n```sh\nclaude mcp add cs -- /opt/code-sandbox --stdio --no-such-option\n```\n",
             "--no-such-option is not an option"),
        "an option without its value":
            (readme_text + "\n```sh\ncode-sandbox --stdio --egress\n```\n", "--egress takes a value"),
        "an unknown option in a client configuration":
            (readme_text + '\n```json\n{"mcpServers": {"cs": {"command": "/x/code-sandbox-mcp", '
                           '"args": ["--no-such-option"]}}}\n```\n',
             "--no-such-option is not an option"),
        "a client configuration starting another program":
            (readme_text + '\n```json\n{"mcpServers": {"cs": {"command": "/usr/bin/python3", '
                           '"args": ["--stdio"]}}}\n```\n', "is not code-sandbox"),
        "a JSON block that does not parse":
            (readme_text + '\n```json\n{"mcpServers": }\n```\n', "does not parse"),
        "a third set-up command":
            (readme_text + "\n```sh\n./dev.sh deploy\n```\n", "the set-up commands are"),
        "a benchmark figure":
            (readme_text + "\nA call takes 6.2 ms.\n", "a benchmark figure"),
    }
    problems = []
    for what, (text, expected) in broken.items():
        found = checker.readme(text)
        if not any(expected in p for p in found):
            problems.append(f"self-test: a README with {what} passed ({found})")
    found = checker.links(readme_path, readme_text + "\n[gone](docs/no-such-page.md)\n")
    if not any("leads to no file" in p for p in found):
        problems.append("self-test: a link to a page that does not exist passed")
    found = checker.links(readme_path, readme_text + "\n[gone](docs/options.md#no-such-heading)\n")
    if not any("no heading" in p for p in found):
        problems.append("self-test: a link to a heading that does not exist passed")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--bin", required=True, help="the built code-sandbox")
    parser.add_argument("--root", default=os.path.normpath(os.path.join(here, "..", "..")))
    parser.add_argument("--readme", help="another README to check (default ROOT/README.md)")
    parser.add_argument("--no-self-test", action="store_true")
    opts = parser.parse_args()

    checker = Checker(os.path.abspath(opts.bin), os.path.abspath(opts.root))
    readme_path = os.path.abspath(opts.readme or os.path.join(opts.root, "README.md"))
    with open(readme_path, encoding="utf-8") as f:
        readme_text = f.read()
    problems = checker.readme(readme_text, os.path.relpath(readme_path, checker.root))
    problems += checker.links(readme_path, readme_text)
    docs = os.path.join(checker.root, "docs")
    for page in sorted(os.listdir(docs)):
        if page.endswith(".md"):
            path = os.path.join(docs, page)
            with open(path, encoding="utf-8") as f:
                text = f.read()
            problems += checker.links(path, text)
            # Unlabelled blocks there are diagrams and logs, not shell.
            problems += checker.fenced(split_markdown(text)[0], f"docs/{page}", SHELL_LANGS - {""})
            if page == "options.md":
                problems += checker.options_page(text)
    if not opts.no_self_test:
        problems += self_test(checker, readme_text, readme_path)
    shutil.rmtree(checker.home, ignore_errors=True)

    for p in problems:
        print(p)
    ran = ", ".join("code-sandbox " + " ".join(a) for a in sorted(checker.ran)) or "nothing"
    print(f"{'FAILED' if problems else 'ok'}: {len(problems)} problem(s); "
          f"{len(checker.options)} options in --help; ran {ran}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
