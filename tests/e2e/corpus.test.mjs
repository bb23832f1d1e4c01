// A corpus of programs written the way assistants write them (issue 54), each run through the
// official SDK client with the server's defaults (no network, no installs), and checked for its
// output and for the figures it should return: data analysis, plots through every path a
// program picks its backend by, statistics, machine-learning fits, symbolic maths, Excel, CSV and
// JSON, HTML parsing, text processing, and JavaScript, TypeScript and bash utilities.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { sharedClient, testNoContainersLeft, textOf } from './helpers.mjs';

const shared = sharedClient();

const images = (r) => r.content.filter((c) => c.type === 'image');

/** Width and height from a PNG's IHDR chunk; null when the image is not a PNG. */
function pngSize(image) {
    const bytes = Buffer.from(image.data, 'base64');
    if (image.mimeType !== 'image/png' || bytes.length < 24 || bytes.readUInt32BE(0) !== 0x89504e47) return null;
    return [bytes.readUInt32BE(16), bytes.readUInt32BE(20)];
}

// [name, language, code, stdout pattern, figures (PNG images) that must come back]
const CORPUS = [
    // Data analysis.
    ['pandas groupby summary', 'python', `import pandas as pd
import numpy as np
np.random.seed(0)
df = pd.DataFrame({"region": np.random.choice(["north", "south", "east"], 300),
                   "sales": np.random.gamma(2.0, 50.0, 300).round(2)})
summary = df.groupby("region")["sales"].agg(["count", "mean", "sum"]).round(1)
print(summary.to_string())
print("total", round(df["sales"].sum(), 2))`, /region[\s\S]*east[\s\S]*north[\s\S]*south[\s\S]*total \d+/, 0],
    ['pandas time series resample', 'python', `import pandas as pd
import numpy as np
idx = pd.date_range("2024-01-01", periods=90, freq="D")
s = pd.Series(np.arange(90, dtype=float), index=idx)
monthly = s.resample("M").mean()
print(monthly.round(1).to_dict())`, /2024-01-31.*15\.0.*2024-02-29.*45\.0/, 0],
    ['pandas pivot and describe', 'python', `import pandas as pd
data = {"product": ["A", "A", "B", "B", "C"], "quarter": ["Q1", "Q2", "Q1", "Q2", "Q1"], "revenue": [100, 150, 200, 50, 75]}
df = pd.DataFrame(data)
print(df.pivot_table(index="product", columns="quarter", values="revenue", fill_value=0))
print(df["revenue"].describe()["mean"])`, /quarter\s+Q1\s+Q2[\s\S]*115\.0/, 0],
    ['numpy linear algebra', 'python', `import numpy as np
A = np.array([[3, 1], [1, 2]], dtype=float)
b = np.array([9, 8], dtype=float)
x = np.linalg.solve(A, b)
print("solution:", x)
print("eigenvalues:", np.round(np.linalg.eigvals(A), 3))`, /solution: \[2\. 3\.\]/, 0],
    ['csv round trip with pandas', 'python', `import pandas as pd, io
csv = """name,age,city
Alice,30,Paris
Bob,25,Berlin
Carol,35,Paris
"""
df = pd.read_csv(io.StringIO(csv))
df.to_csv("people.csv", index=False)
back = pd.read_csv("people.csv")
print(back[back.city == "Paris"].age.mean())`, /^32\.5$/m, 0],
    ['json processing', 'python', `import json
from collections import Counter
records = json.loads('[{"user": "a", "tags": ["x", "y"]}, {"user": "b", "tags": ["y"]}, {"user": "c", "tags": ["y", "z"]}]')
counts = Counter(t for r in records for t in r["tags"])
print(json.dumps(dict(counts.most_common()), sort_keys=True))`, /\{"x": 1, "y": 3, "z": 1\}/, 0],
    ['excel with openpyxl through pandas', 'python', `import pandas as pd
df = pd.DataFrame({"item": ["pen", "book"], "price": [1.5, 12.0]})
df.to_excel("prices.xlsx", index=False)
back = pd.read_excel("prices.xlsx")
print(back.to_dict(orient="records"))`, /\[\{'item': 'pen', 'price': 1\.5\}, \{'item': 'book', 'price': 12\.0\}\]/, 0],
    ['openpyxl workbook directly', 'python', `from openpyxl import Workbook, load_workbook
wb = Workbook()
ws = wb.active
ws.title = "Data"
for row in [("a", 1), ("b", 2), ("c", 3)]:
    ws.append(row)
ws["C1"] = "=SUM(B1:B3)"
wb.save("book.xlsx")
wb2 = load_workbook("book.xlsx")
print(wb2["Data"]["C1"].value, wb2["Data"].max_row)`, /=SUM\(B1:B3\) 3/, 0],

    // Plots, through every way a program picks its backend.
    ['matplotlib Agg and show', 'python', `import matplotlib
matplotlib.use('Agg')
import matplotlib.pyplot as plt
import numpy as np
x = np.linspace(0, 10, 100)
plt.figure(figsize=(6, 4))
plt.plot(x, np.sin(x), label="sin")
plt.legend()
plt.title("Sine")
plt.show()
print("plotted")`, /plotted/, 1],
    ['matplotlib Agg and savefig to a file', 'python', `import matplotlib
matplotlib.use('Agg')
import matplotlib.pyplot as plt
fig, ax = plt.subplots()
ax.bar(["a", "b", "c"], [3, 7, 2])
ax.set_ylabel("count")
plt.savefig('chart.png', dpi=100, bbox_inches='tight')
plt.close(fig)
print("saved chart.png")`, /saved chart\.png/, 1],
    ['pyplot without show', 'python', `import matplotlib.pyplot as plt
plt.scatter([1, 2, 3, 4], [4, 1, 3, 2])
plt.xlabel("x")`, /^$/, 1],
    ['switch_backend', 'python', `import matplotlib.pyplot as plt
plt.switch_backend('agg')
plt.hist([1, 2, 2, 3, 3, 3, 4], bins=4)
plt.savefig('hist.png')
print("ok")`, /ok/, 1],
    ['MPLBACKEND set by the program', 'python', `import os
os.environ["MPLBACKEND"] = "Agg"
import matplotlib.pyplot as plt
fig = plt.figure()
plt.pie([30, 50, 20], labels=["a", "b", "c"])
fig.savefig("pie.png")
print("pie")`, /pie/, 1],
    ['two subplots figure', 'python', `import matplotlib.pyplot as plt
import numpy as np
fig, (a1, a2) = plt.subplots(1, 2, figsize=(8, 3))
a1.plot(np.arange(10), np.arange(10) ** 2)
a2.plot(np.arange(10), np.sqrt(np.arange(10)))
fig.tight_layout()
plt.show()`, /^$/, 1],
    ['pandas DataFrame plot', 'python', `import matplotlib
matplotlib.use("Agg")
import pandas as pd
import matplotlib.pyplot as plt
df = pd.DataFrame({"year": [2020, 2021, 2022, 2023], "users": [10, 25, 40, 70]})
ax = df.plot(x="year", y="users", kind="line", marker="o", title="Users")
plt.savefig("users.png")
print(df.users.pct_change().dropna().round(2).tolist())`, /\[1\.5, 0\.6, 0\.75\]/, 1],
    ['seaborn histogram', 'python', `import seaborn as sns
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
np.random.seed(1)
df = pd.DataFrame({"value": np.random.normal(size=200), "group": np.repeat(["a", "b"], 100)})
sns.histplot(data=df, x="value", hue="group", kde=True)
plt.title("Distribution")
plt.savefig("dist.png")
print("groups", df.group.nunique())`, /groups 2/, 1],
    ['seaborn heatmap of correlations', 'python', `import seaborn as sns
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd
import numpy as np
rng = np.random.default_rng(0)
df = pd.DataFrame(rng.normal(size=(50, 4)), columns=list("ABCD"))
df["E"] = df["A"] * 2 + rng.normal(scale=0.1, size=50)
corr = df.corr()
sns.heatmap(corr, annot=True, fmt=".2f", cmap="coolwarm")
plt.tight_layout()
plt.show()
print(round(corr.loc["A", "E"], 2) > 0.9)`, /True/, 1],
    ['PIL image saved in the working directory', 'python', `from PIL import Image, ImageDraw
img = Image.new("RGB", (120, 80), "white")
d = ImageDraw.Draw(img)
d.rectangle([10, 10, 110, 70], outline="blue", width=3)
img.save("box.png")
print(img.size)`, /\(120, 80\)/, 1],

    // Statistics.
    ['scipy t-test', 'python', `from scipy import stats
import numpy as np
rng = np.random.default_rng(42)
a = rng.normal(0, 1, 100)
b = rng.normal(0.5, 1, 100)
t, p = stats.ttest_ind(a, b)
print(f"t={t:.2f} p<0.05: {p < 0.05}")`, /t=-?\d+\.\d\d p<0\.05: True/, 0],
    ['scipy optimize', 'python', `from scipy.optimize import minimize
import numpy as np
f = lambda v: (v[0] - 3) ** 2 + (v[1] + 1) ** 2 + 2
res = minimize(f, x0=[0, 0])
print(np.round(res.x, 3), round(res.fun, 3))`, /\[ ?3\.? +-1\.?\] 2\.0/, 0],
    ['scipy curve fit and interpolation', 'python', `import numpy as np
from scipy.optimize import curve_fit
from scipy.interpolate import interp1d
x = np.linspace(0, 4, 50)
y = 2.5 * np.exp(-1.3 * x) + 0.5
popt, _ = curve_fit(lambda x, a, b, c: a * np.exp(-b * x) + c, x, y, p0=(1, 1, 1))
print(np.round(popt, 2))
print(float(interp1d([0, 1, 2], [0, 10, 20])(1.5)))`, /\[2\.5 +1\.3 +0\.5 *\][\s\S]*15\.0/, 0],
    ['statsmodels OLS', 'python', `import numpy as np
import statsmodels.api as sm
rng = np.random.default_rng(0)
x = rng.uniform(0, 10, 100)
y = 3 * x + 5 + rng.normal(0, 1, 100)
model = sm.OLS(y, sm.add_constant(x)).fit()
print(np.round(model.params, 1), model.rsquared > 0.95)`, /^\[ ?[45]\.\d* +3\.\d*\] True$/m, 0],
    ['scipy stats describe and correlation', 'python', `from scipy import stats
import numpy as np
x = np.arange(20)
y = x * 2 + 1
r, p = stats.pearsonr(x, y)
print(round(r, 4), stats.describe(x).mean)`, /^1\.0 9\.5$/m, 0],

    // Machine learning.
    ['sklearn logistic regression', 'python', `from sklearn.datasets import load_iris
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.metrics import accuracy_score
X, y = load_iris(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=42)
clf = LogisticRegression(max_iter=200).fit(X_train, y_train)
print("accuracy:", round(accuracy_score(y_test, clf.predict(X_test)), 2))`, /accuracy: (0\.9\d|1\.0)/, 0],
    ['sklearn random forest with a pipeline', 'python', `from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.model_selection import cross_val_score
X, y = make_classification(n_samples=300, n_features=8, random_state=0)
pipe = make_pipeline(StandardScaler(), RandomForestClassifier(n_estimators=30, random_state=0))
scores = cross_val_score(pipe, X, y, cv=3)
print("cv mean > 0.8:", scores.mean() > 0.8)`, /cv mean > 0\.8: True/, 0],
    ['sklearn kmeans with a plot', 'python', `import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
from sklearn.cluster import KMeans
from sklearn.datasets import make_blobs
X, _ = make_blobs(n_samples=150, centers=3, random_state=7)
km = KMeans(n_clusters=3, n_init=10, random_state=7).fit(X)
plt.scatter(X[:, 0], X[:, 1], c=km.labels_, s=10)
plt.scatter(*km.cluster_centers_.T, marker="x", color="red")
plt.savefig("clusters.png")
print(sorted(int(n) for n in __import__("numpy").bincount(km.labels_)))`, /\[50, 50, 50\]/, 1],
    ['sklearn linear regression metrics', 'python', `import numpy as np
from sklearn.linear_model import LinearRegression
from sklearn.metrics import r2_score, mean_absolute_error
X = np.arange(1, 21).reshape(-1, 1)
y = 4 * X.ravel() - 3
m = LinearRegression().fit(X, y)
print(round(m.coef_[0], 3), round(m.intercept_, 3), r2_score(y, m.predict(X)))`, /^4\.0 -3\.0 1\.0$/m, 0],

    // Symbolic maths.
    ['sympy solve and simplify', 'python', `import sympy as sp
x = sp.symbols("x")
print(sp.solve(sp.Eq(x**2 - 5*x + 6, 0), x))
print(sp.simplify((x**2 - 1) / (x - 1)))`, /\[2, 3\]\nx \+ 1/, 0],
    ['sympy calculus', 'python', `from sympy import symbols, diff, integrate, sin, exp, limit, oo, series
x = symbols('x')
print(diff(sin(x) * exp(x), x))
print(integrate(x**2, (x, 0, 3)))
print(limit(sin(x) / x, x, 0))`, /exp\(x\)\*sin\(x\) \+ exp\(x\)\*cos\(x\)\n9\n1/, 0],

    // HTML and web-shaped data (no network: parsed from strings).
    ['beautifulsoup with lxml', 'python', `from bs4 import BeautifulSoup
html = """<html><body><table id="t"><tr><th>name</th><th>qty</th></tr>
<tr><td>apple</td><td>3</td></tr><tr><td>pear</td><td>5</td></tr></table>
<a href="/x">x</a><a href="https://example.com/y">y</a></body></html>"""
soup = BeautifulSoup(html, "lxml")
rows = [[td.text for td in tr.find_all("td")] for tr in soup.select("#t tr")[1:]]
print(rows, [a["href"] for a in soup.find_all("a")])`, /\[\['apple', '3'\], \['pear', '5'\]\] \['\/x', 'https:\/\/example\.com\/y'\]/, 0],
    ['pandas read_html', 'python', `import pandas as pd, io
html = "<table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr><tr><td>3</td><td>4</td></tr></table>"
df = pd.read_html(io.StringIO(html))[0]
print(df.sum().tolist())`, /\[4, 6\]/, 0],
    ['requests is importable and offline requests fail cleanly', 'python', `import requests
try:
    requests.get("https://example.com", timeout=3)
    print("reached")
except requests.exceptions.RequestException as e:
    print("no network:", type(e).__name__)`, /no network: \w+/, 0],

    // Text processing.
    ['regex log parsing', 'python', `import re
from collections import Counter
log = """2024-05-01 10:00:01 ERROR db timeout
2024-05-01 10:00:02 INFO ok
2024-05-01 10:01:00 ERROR db timeout
2024-05-01 10:02:00 WARN slow"""
levels = Counter(re.findall(r"\\b(ERROR|INFO|WARN)\\b", log))
print(dict(sorted(levels.items())))`, /\{'ERROR': 2, 'INFO': 1, 'WARN': 1\}/, 0],
    ['word frequencies', 'python', `text = "the quick brown fox jumps over the lazy dog the end"
from collections import Counter
import string
words = [w.strip(string.punctuation).lower() for w in text.split()]
print(Counter(words).most_common(2))`, /\[\('the', 3\), \('quick', 1\)\]/, 0],
    ['dataclasses and datetime', 'python', `from dataclasses import dataclass, asdict
from datetime import date, timedelta
@dataclass
class Task:
    name: str
    due: date
tasks = [Task("a", date(2024, 1, 10)), Task("b", date(2024, 1, 3))]
tasks.sort(key=lambda t: t.due)
print([asdict(t)["name"] for t in tasks], (tasks[1].due - tasks[0].due) == timedelta(days=7))`, /\['b', 'a'\] True/, 0],
    ['output file for the user', 'python', `import os, csv
path = os.path.join(os.environ["OUTPUT_DIR"], "report.csv")
with open(path, "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["k", "v"])
    w.writerows([["a", 1], ["b", 2]])
print("wrote", os.path.basename(path))`, /wrote report\.csv/, 0],

    // JavaScript and TypeScript.
    ['javascript array statistics', 'javascript', `const data = [12, 7, 3, 18, 5, 9];
const mean = data.reduce((a, b) => a + b, 0) / data.length;
const sorted = [...data].sort((a, b) => a - b);
const median = (sorted[2] + sorted[3]) / 2;
console.log(JSON.stringify({ mean, median, max: Math.max(...data) }));`, /\{"mean":9,"median":8,"max":18\}/, 0],
    ['javascript JSON transform', 'javascript', `const users = [{ name: "ann", age: 31 }, { name: "bob", age: 17 }, { name: "cy", age: 45 }];
const adults = users.filter(u => u.age >= 18).map(u => ({ ...u, name: u.name.toUpperCase() }));
console.log(adults.map(u => u.name).join(","));`, /ANN,CY/, 0],
    ['javascript async and dates', 'javascript', `const sleep = (ms) => new Promise(r => setTimeout(r, ms));
(async () => {
  const start = Date.now();
  await Promise.all([sleep(20), sleep(30)]);
  const d = new Date(Date.UTC(2024, 0, 31));
  d.setUTCDate(d.getUTCDate() + 1);
  console.log(Date.now() - start >= 25, d.toISOString().slice(0, 10));
})();`, /true 2024-02-01/, 0],
    ['javascript file output with fs', 'javascript', `const fs = require("fs");
const path = require("path");
const rows = [["id", "score"], [1, 90], [2, 85]];
fs.writeFileSync(path.join(process.env.OUTPUT_DIR, "scores.csv"), rows.map(r => r.join(",")).join("\\n"));
console.log("rows", rows.length - 1);`, /rows 2/, 0],
    ['typescript interfaces and generics', 'typescript', `interface Item { name: string; price: number }
function total<T extends { price: number }>(items: T[]): number {
  return items.reduce((s, i) => s + i.price, 0);
}
const cart: Item[] = [{ name: "a", price: 2.5 }, { name: "b", price: 4 }];
console.log(total(cart).toFixed(2));`, /^6\.50$/m, 0],
    ['typescript class and enum', 'typescript', `enum Level { Low = 1, High = 3 }
class Counter {
  private n = 0;
  add(l: Level): this { this.n += l; return this; }
  get value(): number { return this.n; }
}
console.log(new Counter().add(Level.Low).add(Level.High).value);`, /^4$/m, 0],

    // Bash utilities.
    ['bash text pipeline', 'bash', `cat > data.txt <<'EOF'
apple 3
banana 5
apple 2
cherry 1
EOF
awk '{s[$1]+=$2} END {for (k in s) print k, s[k]}' data.txt | sort`, /apple 5\nbanana 5\ncherry 1/, 0],
    ['bash jq on JSON', 'bash', `echo '{"items":[{"n":"a","v":2},{"n":"b","v":5}]}' | jq -r '.items | map(.v) | add'`, /^7$/m, 0],
    ['bash loops and arithmetic', 'bash', `total=0
for i in $(seq 1 10); do
  if (( i % 2 == 0 )); then total=$((total + i)); fi
done
echo "sum of evens: $total"
printf '%s\\n' one two three | wc -l`, /sum of evens: 30\n3/, 0],
];

for (const [name, language, code, stdout, figures] of CORPUS) {
    test(`${language}: ${name}`, { timeout: 120_000 }, async () => {
        const r = await shared.client.callTool({ name: 'execute_code', arguments: { language, code } });
        const sc = r.structuredContent;
        assert.notEqual(r.isError, true, `${name}: ${textOf(r)}`);
        assert.equal(sc.exit_code, 0, `${name}: ${sc.stderr}`);
        assert.match(sc.stdout.trimEnd(), stdout, `${name} printed ${JSON.stringify(sc.stdout)} (stderr ${JSON.stringify(sc.stderr)})`);
        const pngs = images(r).map(pngSize);
        assert.equal(pngs.length, figures, `${name}: ${pngs.length} images came back, ${figures} expected (files ${JSON.stringify(sc.files)})`);
        for (const size of pngs) assert.ok(size && size[0] > 50 && size[1] > 50, `${name}: a PNG of a figure's size, not ${size}`);
    });
}

test('the corpus is at least 40 programs, in every kind the issue names', () => {
    assert.ok(CORPUS.length >= 40, `${CORPUS.length} programs`);
    for (const language of ['python', 'javascript', 'typescript', 'bash'])
        assert.ok(CORPUS.some(([, l]) => l === language), language);
});

testNoContainersLeft(() => shared.close());
