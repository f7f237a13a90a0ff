"""The metric names a Grafana dashboard's PromQL reads, and the families a /metrics text exports: so a test can say
that every name the dashboard asks for exists (a renamed metric otherwise leaves a panel silently empty)."""
import re

# Words of PromQL that are not metric names when they stand without "(" after them.
KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "offset", "and", "or", "unless",
            "inf", "nan", "atan2", "start", "end"}
HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")
GRAFANA_VARIABLES = {"$__rate_interval": "5m", "$__interval": "1m", "$__range": "1h"}


def dashboard_expressions(dashboard):
    """Every PromQL expression in a dashboard: panel targets (rows' nested panels too) and query variables
    (`label_values(METRIC{...}, label)` gives its METRIC selector)."""
    exprs = []

    def walk(panels):
        for p in panels:
            for t in p.get("targets", []):
                if t.get("expr"):
                    exprs.append(t["expr"])
            walk(p.get("panels", []))

    walk(dashboard.get("panels", []))
    for v in dashboard.get("templating", {}).get("list", []):
        if v.get("type") != "query":
            continue
        q = v.get("query")
        q = q.get("query") if isinstance(q, dict) else q
        m = re.fullmatch(r"\s*label_values\((.*),\s*[A-Za-z_]\w*\s*\)\s*", q or "")
        exprs.append(m.group(1) if m else q)
    return exprs


def concrete(expr):
    """The expression with Grafana's variables replaced by values Prometheus accepts ($stream -> .*)."""
    for name, value in GRAFANA_VARIABLES.items():
        expr = expr.replace(name, value)
    return re.sub(r"\$\{?[A-Za-z_]\w*\}?", ".*", expr)


def metric_names(expr):
    """The metric names an expression selects."""
    e = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)                 # string literals
    e = re.sub(r"\{[^}]*\}", "", e)                              # label matchers
    e = re.sub(r"\[[^\]]*\]", "", e)                             # range and subquery durations
    e = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", r"\1", e)   # label lists
    names = set()
    # A word followed by "(" is a function; by "by"/"without", an aggregation ("sum by (le) (...)").
    for m in re.finditer(r"(?<![\w.$])([A-Za-z_:][\w:]*)\s*(\(|(?:by|without)\b)?", e):
        word, call = m.group(1), m.group(2)
        if call or word.lower() in KEYWORDS:
            continue
        names.add(word)
    return names


def exported_families(metrics_text):
    """Sample names and `# TYPE` names of a Prometheus text exposition, with each histogram's/summary's series."""
    names, types = set(), {}
    for line in metrics_text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(None, 3)
            types[name] = kind.strip()
            names.add(name)
        elif line and not line.startswith("#"):
            names.add(re.match(r"[A-Za-z_:][\w:]*", line).group(0))
    for name, kind in types.items():
        if kind in ("histogram", "summary"):
            names.update(name + s for s in HISTOGRAM_SUFFIXES)
    return names


def unknown_names(exprs, families):
    """{name: [expressions]} for every name some expression reads that `families` does not have."""
    unknown = {}
    for expr in exprs:
        for name in metric_names(expr):
            if name not in families:
                unknown.setdefault(name, []).append(expr)
    return unknown
