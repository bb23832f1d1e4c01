// Every language end to end through the SDK client: a one-line program prints 42, an error is
// reported as an error (compile errors flagged as such), and get_language_details reads the
// version from the image.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { sharedClient, testNoContainersLeft, textOf } from './helpers.mjs';

// language → [program printing 42, failing program, compiled?, version pattern]
const LANGUAGES = {
    python: ['print(42)', 'raise ValueError("boom")', false, /^Python 3\.\d+/],
    javascript: ['console.log(42)', 'throw new Error("boom")', false, /^v\d+\./],
    typescript: ['const n: number = 42; console.log(n)', 'let x: = ;', true, /^TypeScript \d+\.\d+.*Node\.js v\d+/],
    bash: ['echo $((6 * 7))', 'echo boom >&2; exit 3', false, /^GNU bash, version 5\./],
    c: ['#include <stdio.h>\nint main(void) { printf("%d\\n", 42); return 0; }',
        'int main(void) { return undefined_name; }', true, /^gcc .*12\./],
    cpp: ['#include <iostream>\nint main() { std::cout << 42 << std::endl; }',
          'int main() { std::vector<int> v; }', true, /^g\+\+ .*12\./],
    go: ['package main\nimport "fmt"\nfunc main() { fmt.Println(42) }',
         'package main\nfunc main() { x := 1 }', true, /^go version go1\.\d+/],
    java: ['public class Main { public static void main(String[] a) { System.out.println(42); } }',
           'class Main { public static void main(String[] a) { int x = "s"; } }', true, /^openjdk version "17/],
    ruby: ['puts 42', 'raise "boom"', false, /^ruby 3\./],
    r: ['cat(42, "\\n", sep = "")', 'stop("boom")', false, /^R version 4\./],
    rust: ['fn main() { println!("{}", 42); }', 'fn main() { let x: i32 = "s"; }', true, /^rustc 1\.\d+/],
};

const shared = sharedClient();

const run = (language, code) => shared.client.callTool({ name: 'execute_code', arguments: { language, code } });

test('get_supported_languages lists at least ten languages, these among them', async () => {
    const r = await shared.client.callTool({ name: 'get_supported_languages', arguments: {} });
    assert.ok(r.structuredContent.languages.length >= 10);
    for (const name of Object.keys(LANGUAGES)) assert.ok(r.structuredContent.languages.includes(name), name);
});

for (const [language, [hello, failing, compiled, version]] of Object.entries(LANGUAGES)) {
    test(`${language}: a one-line program prints 42`, { timeout: 120_000 }, async () => {
        const r = await run(language, hello);
        const sc = r.structuredContent;
        assert.notEqual(r.isError, true, `${language}: ${JSON.stringify(sc)}`);
        assert.equal(sc.stdout, '42\n', `${language} stderr: ${sc.stderr}`);
        assert.equal(sc.exit_code, 0);
        assert.equal(sc.compile_error, false);
        assert.equal(sc.language, language);
    });

    test(`${language}: a failing program is an error${compiled ? ' flagged as a compile error' : ''}`,
        { timeout: 120_000 }, async () => {
            const r = await run(language, failing);
            const sc = r.structuredContent;
            assert.equal(r.isError, true, `${language}: ${JSON.stringify(sc)}`);
            assert.notEqual(sc.exit_code, 0);
            assert.equal(sc.compile_error, compiled, `${language}: ${JSON.stringify(sc)}`);
            assert.ok(sc.stderr.length > 0, `${language}: the message is in stderr`);
            // gcc, g++, javac, rustc and tsc say "error"; go names what is wrong.
            if (compiled) assert.match(sc.stderr, /error|declared but not used/i, `${language}: the compiler's message`);
            else assert.match(sc.stderr, /boom/, `${language}: the program's message`);
            assert.equal(sc.stdout, '');
        });

    test(`${language}: get_language_details reads the version from the image`, { timeout: 120_000 }, async () => {
        const r = await shared.client.callTool({ name: 'get_language_details', arguments: { language } });
        assert.notEqual(r.isError, true, textOf(r));
        const d = r.structuredContent;
        assert.equal(d.name, language);
        assert.match(d.version, version);
        // TypeScript reports syntax errors as compile errors but has no separate build step.
        assert.equal(d.compiled, compiled && language !== 'typescript');
        assert.ok(Array.isArray(d.examples) && d.examples.length > 0);
        assert.equal(typeof d.package_manager, 'string');
    });
}

test('the documented example of every language runs', { timeout: 300_000 }, async () => {
    for (const language of Object.keys(LANGUAGES)) {
        const r = await shared.client.callTool({ name: 'get_language_details', arguments: { language } });
        const example = r.structuredContent.examples[0];
        const out = await run(language, example);
        assert.notEqual(out.isError, true, `${language} example ${JSON.stringify(example)}: ${JSON.stringify(out.structuredContent)}`);
        assert.ok(out.structuredContent.stdout.length > 0, `${language} example prints something`);
    }
});

test('a compile error is reported as such in the text a model reads', { timeout: 60_000 }, async () => {
    const r = await shared.client.callTool({ name: 'execute_code', arguments: { language: 'c', code: 'int main(void) { return x; }' } });
    assert.equal(r.isError, true);
    const result = JSON.parse(textOf(r));
    assert.equal(result.compile_error, true);
    assert.match(result.stderr, /x. undeclared/);
});

testNoContainersLeft(shared.close);
