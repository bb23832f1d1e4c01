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

// The preinstalled libraries, one row each: [language, library, program, stdout pattern, PNG images
// that must come back]. Each program uses its library the way assistants' programs do, without
// network; each failed (ModuleNotFoundError, Cannot find module) before the images had them,
// except sympy, lxml, python-dateutil and pytz, which came with pandas and matplotlib already.
const LIBRARIES = [
    ['python', 'scipy', `import numpy as np
from scipy import interpolate, optimize, signal, stats
from scipy.sparse import diags
from scipy.sparse.linalg import spsolve
r = optimize.minimize(lambda v: (v[0] - 3) ** 2 + (v[1] + 1) ** 2, [0, 0])
print("min", np.round(r.x, 3).tolist())
print("root", round(optimize.brentq(lambda x: x ** 3 - 2, 0, 2), 4))
t = stats.ttest_ind([1.1, 2.0, 2.9, 4.2], [5.0, 6.1, 7.2, 8.1])
print("p<0.01", t.pvalue < 0.01, "norm", round(stats.norm.cdf(1.96), 3))
print("spline", round(float(interpolate.CubicSpline([0, 1, 2, 3], [0, 1, 8, 27])(1.5)), 3))
b, a = signal.butter(3, 0.2)
y = signal.filtfilt(b, a, np.sin(np.linspace(0, 10, 200)))
print("filtered", y.shape, "peaks", len(signal.find_peaks(np.sin(np.linspace(0, 20, 400)))[0]))
A = diags([-1, 2, -1], [-1, 0, 1], shape=(5, 5), format="csc")
print("spsolve", np.round(spsolve(A, np.ones(5)), 2).tolist())`,
    /^min \[3\.0, -1\.0\]\nroot 1\.2599\np<0\.01 True norm 0\.975\nspline 3\.375\nfiltered \(200,\) peaks 3\nspsolve \[2\.5, 4\.0, 4\.5, 4\.0, 2\.5\]\n$/, 0],
    ['python', 'scikit-learn', `from sklearn.datasets import load_iris
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
X, y = load_iris(return_X_y=True)
Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
lr = make_pipeline(StandardScaler(), LogisticRegression(max_iter=500)).fit(Xtr, ytr)
rf = RandomForestClassifier(n_estimators=50, random_state=0).fit(Xtr, ytr)
print("logistic", lr.score(Xte, yte) > 0.85, "forest", rf.score(Xte, yte) > 0.85)`,
    /^logistic True forest True\n$/, 0],
    ['python', 'statsmodels', `import numpy as np, pandas as pd
import statsmodels.api as sm
import statsmodels.formula.api as smf
rng = np.random.default_rng(0)
x = np.arange(50.0)
y = 2.0 + 0.5 * x + rng.normal(0, 0.1, 50)
fit = sm.OLS(y, sm.add_constant(x)).fit()
print("slope", round(fit.params[1], 2), "r2>0.99", fit.rsquared > 0.99)
print("formula", round(smf.ols("y ~ x", pd.DataFrame({"x": x, "y": y})).fit().params["x"], 2))`,
    /^slope 0\.5 r2>0\.99 True\nformula 0\.5\n$/, 0],
    ['python', 'seaborn', `import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns
df = pd.DataFrame({"g": list("aabbcc"), "v": [1, 2, 3, 4, 5, 6]})
sns.set_theme()
sns.barplot(data=df, x="g", y="v")
plt.figure()
sns.heatmap(df.pivot_table(index="g", values="v"), annot=True)
plt.show()
print("seaborn", sns.__version__.split(".")[0])`,
    /^seaborn 0\n$/, 2],
    ['python', 'sympy', `import sympy as sp
x = sp.symbols("x")
print(sp.integrate(x * sp.exp(x), x), sp.solve(x**2 - 4, x))`,
    /^\(x - 1\)\*exp\(x\) \[-2, 2\]\n$/, 0],
    ['python', 'networkx', `import networkx as nx
g = nx.Graph([("a", "b", {"weight": 1}), ("b", "c", {"weight": 2}), ("a", "c", {"weight": 5})])
print(nx.shortest_path(g, "a", "c", weight="weight"), nx.is_connected(g))`,
    /^\['a', 'b', 'c'\] True\n$/, 0],
    ['python', 'requests', `import requests
req = requests.Request("GET", "https://example.com/search", params={"q": "sandbox", "n": 2}).prepare()
print(req.url, requests.codes.ok)`,
    /^https:\/\/example\.com\/search\?q=sandbox&n=2 200\n$/, 0],
    ['python', 'beautifulsoup4 with lxml', `from bs4 import BeautifulSoup
html = "<ul><li class='x'>one</li><li class='x'>two</li><li>three</li></ul>"
print([li.get_text() for li in BeautifulSoup(html, "lxml").select("li.x")])`,
    /^\['one', 'two'\]\n$/, 0],
    ['python', 'openpyxl (pandas Excel)', `import pandas as pd
pd.DataFrame({"a": [1, 2], "b": ["x", "y"]}).to_excel("t.xlsx", index=False)
print(pd.read_excel("t.xlsx").to_dict("list"))
import openpyxl
print(openpyxl.load_workbook("t.xlsx").active["B3"].value)`,
    /^\{'a': \[1, 2\], 'b': \['x', 'y'\]\}\ny\n$/, 0],
    ['python', 'xlsxwriter', `import pandas as pd
with pd.ExcelWriter("w.xlsx", engine="xlsxwriter") as w:
    pd.DataFrame({"n": [1, 2, 3]}).to_excel(w, sheet_name="data", index=False)
print(pd.read_excel("w.xlsx", sheet_name="data")["n"].sum())`,
    /^6\n$/, 0],
    ['python', 'tabulate (DataFrame.to_markdown)', `import pandas as pd
from tabulate import tabulate
print(pd.DataFrame({"a": [1], "b": [2]}).to_markdown(index=False))
print(tabulate([[1, 2]], headers=["x", "y"], tablefmt="github"))`,
    /^\|\s+a \|\s+b \|\n\|-+:\|-+:\|\n\|\s+1 \|\s+2 \|\n\|\s+x \|\s+y \|\n\|-+\|-+\|\n\|\s+1 \|\s+2 \|\n$/, 0],
    ['python', 'pyyaml', `import yaml
print(yaml.safe_load("a: 1\\nb: [x, y]\\n"), yaml.safe_dump({"k": [1, 2]}).strip())`,
    /^\{'a': 1, 'b': \['x', 'y'\]\} k:\n- 1\n- 2\n$/, 0],
    ['python', 'python-dateutil and pytz', `from datetime import datetime
import pytz
from dateutil import parser
from dateutil.relativedelta import relativedelta
d = parser.parse("2024-01-31 10:00") + relativedelta(months=1)
print(d.date(), pytz.timezone("Europe/Paris").localize(d).strftime("%z"))`,
    /^2024-02-29 \+0100\n$/, 0],
    ['python', 'tqdm', `from tqdm import tqdm
print(sum(i for i in tqdm(range(100))))`,
    /^4950\n$/, 0],
    ['python', 'jinja2 (DataFrame.style)', `import pandas as pd
from jinja2 import Template
print(Template("Hello {{ name }}!").render(name="sandbox"))
print("<table" in pd.DataFrame({"a": [1]}).style.to_html())`,
    /^Hello sandbox!\nTrue\n$/, 0],
    ['python', 'python-docx', `from docx import Document
doc = Document()
doc.add_heading("Report", level=1)
doc.add_paragraph("Made in a sandbox.")
doc.save("r.docx")
print([p.text for p in Document("r.docx").paragraphs])`,
    /^\['Report', 'Made in a sandbox\.'\]\n$/, 0],
    ['python', 'reportlab and pypdf', `from reportlab.lib.pagesizes import A4
from reportlab.pdfgen import canvas
c = canvas.Canvas("r.pdf", pagesize=A4)
c.drawString(72, 720, "Hello PDF")
c.showPage()
c.save()
from pypdf import PdfReader
r = PdfReader("r.pdf")
print(len(r.pages), r.pages[0].extract_text().strip())`,
    /^1 Hello PDF\n$/, 0],
    ['javascript', 'lodash', `const _ = require('lodash');
console.log(JSON.stringify(_.groupBy([1, 2, 3, 4], (n) => (n % 2 ? 'odd' : 'even'))), _.chunk([1, 2, 3], 2).length);`,
    /^\{"odd":\[1,3\],"even":\[2,4\]\} 2\n$/, 0],
    ['javascript', 'axios', `const axios = require('axios');
const api = axios.create({ baseURL: 'https://example.com/api' });
console.log(typeof axios.get, api.getUri({ url: '/items', params: { q: 'x' } }));`,
    /^function https:\/\/example\.com\/api\/items\?q=x\n$/, 0],
    ['javascript', 'moment', `const moment = require('moment');
console.log(moment.utc('2024-01-31').add(1, 'month').format('YYYY-MM-DD dddd'));`,
    /^2024-02-29 Thursday\n$/, 0],
    ['javascript', 'uuid', `const { v4: uuidv4, validate } = require('uuid');
console.log(validate(uuidv4()));`,
    /^true\n$/, 0],
    ['javascript', 'js-yaml and yaml', `const jsyaml = require('js-yaml');
const YAML = require('yaml');
console.log(JSON.stringify(jsyaml.load('a: [1, 2]')), YAML.stringify({ b: 1 }).trim());`,
    /^\{"a":\[1,2\]\} b: 1\n$/, 0],
    ['javascript', 'cheerio', `const cheerio = require('cheerio');
const $ = cheerio.load('<ul><li class="x">one</li><li class="x">two</li><li>three</li></ul>');
console.log($('li.x').map((i, el) => $(el).text()).get().join(','));`,
    /^one,two\n$/, 0],
    ['javascript', 'marked', `const { marked } = require('marked');
console.log(marked.parse('# Title').trim());`,
    /^<h1 id="title">Title<\/h1>\n$/, 0],
    ['javascript', 'xml2js', `const xml2js = require('xml2js');
xml2js.parseString('<r><i>1</i><i>2</i></r>', (err, out) => console.log(err, JSON.stringify(out)));`,
    /^null \{"r":\{"i":\["1","2"\]\}\}\n$/, 0],
    ['typescript', 'lodash and moment through import', `import _ from 'lodash';
import moment from 'moment';
const xs: number[] = [3, 1, 2];
console.log(_.sortBy(xs).join(','), moment.utc('2024-03-01').subtract(1, 'day').format('MM-DD'));`,
    /^1,2,3 02-29\n$/, 0],
];

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

for (const [language, library, code, stdout, figures] of LIBRARIES) {
    test(`${language}: ${library} is preinstalled and works`, { timeout: 120_000 }, async () => {
        const r = await run(language, code);
        const sc = r.structuredContent;
        assert.notEqual(r.isError, true, `${library}: ${JSON.stringify(sc)}`);
        assert.equal(sc.exit_code, 0);
        assert.match(sc.stdout, stdout, `${library} stderr: ${sc.stderr}`);
        const pngs = r.content.filter((c) => c.type === 'image' && c.mimeType === 'image/png');
        assert.equal(pngs.length, figures, `${library}: figures that came back`);
    });
}

for (const language of ['python', 'javascript', 'typescript']) {
    test(`${language}: get_language_details gives every preinstalled library's version in the image`,
        { timeout: 120_000 }, async () => {
            const resource = await shared.client.readResource({ uri: 'sandbox://environments' });
            const declared = JSON.parse(resource.contents[0].text)[language].libraries;
            assert.ok(declared.length > 0, `${language} declares its libraries`);
            const r = await shared.client.callTool({ name: 'get_language_details', arguments: { language } });
            assert.notEqual(r.isError, true, textOf(r));
            assert.deepEqual(r.structuredContent.preinstalled_libraries.map((l) => l.split(' ')[0]), declared);
            for (const l of r.structuredContent.preinstalled_libraries)
                assert.match(l, /^\S+ \d+\.\d+/, `${language}: ${l}`);
        });
}

test('the python image has no C compiler (scipy\'s pythran is a stand-in)', { timeout: 60_000 }, async () => {
    const r = await run('python', `import shutil, subprocess
print([c for c in ("gcc", "g++", "cc", "c++", "clang") if shutil.which(c)])
out = subprocess.run(["dpkg-query", "-W", "-f", "\${Package} \${Status}\\n", "python3-pythran", "code-sandbox-stubs"],
                     capture_output=True, text=True).stdout
print([line.split()[0] for line in out.splitlines() if line.endswith(" installed")])`);
    assert.equal(r.structuredContent.stdout, "[]\n['code-sandbox-stubs']\n", JSON.stringify(r.structuredContent));
});

test('a compile error is reported as such in the text a model reads', { timeout: 60_000 }, async () => {
    const r = await shared.client.callTool({ name: 'execute_code', arguments: { language: 'c', code: 'int main(void) { return x; }' } });
    assert.equal(r.isError, true);
    const result = JSON.parse(textOf(r));
    assert.equal(result.compile_error, true);
    assert.match(result.stderr, /x. undeclared/);
});

testNoContainersLeft(shared.close);
