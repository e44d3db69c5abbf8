"""The repository carries its own design reading: nothing in it links outside it, and the
README, the report and --help send a reader to docs/design.md and docs/glossary.md."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# (the SVG namespace is a name, not a link: written once, pipeline/reports/svg.py SVG_NS)
OUTSIDE = re.compile(r"\.\./shared|shared/(design|seeds)|SPEC\.md|"
                     r"https?://(?!127\.0\.0\.1|www\.w3\.org/2000/svg\")[\w.-]")


def tracked() -> list[Path]:
    out = subprocess.run(["git", "-C", str(REPO), "ls-files"], capture_output=True, text=True)
    files = [REPO / f for f in out.stdout.split()] if out.returncode == 0 else []
    return files or [p for p in REPO.rglob("*") if p.is_file() and ".venv" not in p.parts
                     and ".git" not in p.parts]


def test_no_file_links_outside_the_repository():
    hits = []
    for path in tracked():
        if path.suffix not in (".py", ".md", ".toml", ".txt", ".cfg", ".sh", "") or \
                not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        for m in OUTSIDE.finditer(text):
            if path.name == "test_docs.py":
                continue
            hits.append(f"{path.relative_to(REPO)}: {m.group(0)}")
    assert hits == []


FENCED = re.compile(r"^```.*?^```", re.M | re.S)  # a code block: its text is not a link
CONSOLE = re.compile(r"^```console\n", re.M)
TRANSCRIPT = re.compile(r"<!-- begin (transcript-[\w-]+) -->.*?<!-- end \1 -->", re.S)


def test_markdown_links_inside_the_repository_resolve():
    broken = []
    for path in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")),
                 *sorted((REPO / "docs" / "decisions").glob("*.md"))]:
        text = FENCED.sub("", path.read_text(encoding="utf-8"))
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
            if not (path.parent / target).exists():
                broken.append(f"{path.relative_to(REPO)} -> {target}")
    assert broken == []


def test_every_console_transcript_in_the_docs_is_written_by_the_script():
    """No command output in the docs is typed by hand (issue 42): every ``console`` block
    lies in a section ``scripts/transcripts.py`` writes, and the script finds its sections."""
    typed = []
    for path in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        text = TRANSCRIPT.sub("", path.read_text(encoding="utf-8"))
        typed += [f"{path.relative_to(REPO)}:{text[:m.start()].count(chr(10)) + 1}"
                  for m in CONSOLE.finditer(text)]
    assert typed == []
    p = subprocess.run([sys.executable, str(REPO / "scripts" / "transcripts.py"), "--check"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr


def test_readme_report_and_help_point_at_the_docs(tmp_path):
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "docs/design.md" in readme and "docs/glossary.md" in readme
    helptext = subprocess.run([sys.executable, "-m", "minegen.cli", "--help"],
                              capture_output=True, text=True).stdout
    assert "docs/glossary.md" in helptext and "docs/design.md" in helptext
    from pipeline.reports import render

    page = render.html("t", [])
    assert "docs/glossary.md" in page and "docs/design.md" in page


def test_the_glossary_explains_every_line_and_exit_of_the_report():
    from minegen.audit.generator import GENERATOR

    glossary = (REPO / "docs" / "glossary.md").read_text(encoding="utf-8")
    terms = {ln.name for ln in GENERATOR.lines} | {"met", "accept_best", "accept_least_bad",
                                                   "mine drift", "retry rate", "LATEST"}
    missing = [t for t in sorted(terms) if not re.search(rf"\*\*{re.escape(t)}\*\*|^#+ .*"
                                                         rf"{re.escape(t)}", glossary, re.M)
               and f"`{t}`" not in glossary]
    assert missing == []


PACKAGES = ("boardcore", "minegen", "tilegen", "pipeline")
MODULE_NAMED = re.compile(r"`((?:boardcore|minegen|tilegen|pipeline)/[\w/]+\.py)`")


def test_architecture_names_every_module_and_only_modules_that_exist():
    text = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    named = set(MODULE_NAMED.findall(text))
    tree = {p.relative_to(REPO).as_posix() for pkg in PACKAGES for p in (REPO / pkg).rglob("*.py")
            if p.name != "__init__.py"}
    assert sorted(tree - named) == [] and sorted(named - tree) == []


DECISIONS = REPO / "docs" / "decisions"
SCRIPT = REPO / "scripts" / "decisions.py"


def _decisions() -> tuple[dict[int, str], dict[int, str], dict[str, list[int]], set[int]]:
    """docs/decisions/ read: (decision -> the area its file names, decision -> status,
    area -> the decisions its index section lists, decisions the index marks superseded)."""
    sits, status = {}, {}
    for path in sorted(DECISIONS.glob("[0-9]*.md")):
        lines = path.read_text(encoding="utf-8").splitlines()
        m = re.match(r"^# (\d+)\. \S", lines[0])
        assert m, f"{path.name}: no '# N. Title' line"
        n = int(m.group(1))
        assert path.name.startswith(f"{n:04d}-"), path.name
        assert n not in sits, f"decision {n} appears twice"
        sits[n] = next((ln[6:].strip() for ln in lines if ln.startswith("Area: ")), "")
        status[n] = next((ln[8:].strip() for ln in lines if ln.startswith("Status: ")), "")
    area, index, marked = None, {}, set()
    for line in (DECISIONS / "README.md").read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            area = line[3:].strip()
            index[area] = []
        elif area and (m := re.match(r"^- \[(\d+)(†?)\. .+?\]\((\d{4}-[\w-]+\.md)\)", line)):
            n = int(m.group(1))
            assert (DECISIONS / m.group(3)).is_file() and m.group(3).startswith(f"{n:04d}-"), line
            index[area].append(n)
            if m.group(2):
                marked.add(n)
    return sits, status, index, marked


def test_the_decisions_index_lists_every_entry_under_its_area():
    sits, status, index, marked = _decisions()
    assert sorted(sits) == list(range(1, max(sits) + 1)), "decision numbers have a gap"
    assert {n: a for n, a in sits.items() if a not in index} == {}  # an area of the index
    listed = {n: area for area, nums in index.items() for n in nums}
    assert sum(len(v) for v in index.values()) == len(listed), "an entry is indexed twice"
    assert set(listed) == set(sits), f"not indexed: {sorted(set(sits) - set(listed))}"
    assert {n: a for n, a in listed.items() if sits[n] != a} == {}  # listed where it sits
    for area, nums in index.items():
        assert nums == sorted(nums), area
    assert all(status.values()), [n for n, s in status.items() if not s]
    superseded = {n for n, s in status.items() if s.startswith("superseded by")}
    assert marked == superseded
    for n in superseded:  # "superseded by N" names an entry that exists
        assert int(re.match(r"superseded by (\d+)", status[n]).group(1)) in sits, n


def test_the_decisions_index_is_the_one_the_script_generates():
    done = subprocess.run([sys.executable, str(SCRIPT), "--check"], capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_decisions_check_fails_on_a_decision_added_without_its_index(tmp_path):
    root = tmp_path / "decisions"
    shutil.copytree(DECISIONS, root)
    check = [sys.executable, str(SCRIPT), "--check", "--root", str(root)]
    assert subprocess.run(check, capture_output=True, text=True).returncode == 0
    n = max(int(p.name[:4]) for p in root.glob("[0-9]*.md")) + 1
    (root / f"{n:04d}-a-new-decision.md").write_text(
        f"# {n}. A new decision\n\nStatus: current.\n\nArea: Records\n\nWhat was chosen.\n",
        encoding="utf-8")
    done = subprocess.run(check, capture_output=True, text=True)
    assert done.returncode == 1 and len(done.stdout.strip().splitlines()) == 1, done.stdout
    assert "not current" in done.stdout
    write = subprocess.run([sys.executable, str(SCRIPT), "--root", str(root)],
                           capture_output=True, text=True)
    assert write.returncode == 0, write.stdout + write.stderr
    assert subprocess.run(check, capture_output=True, text=True).returncode == 0
    assert f"({n:04d}-a-new-decision.md)" in (root / "README.md").read_text(encoding="utf-8")


# ------------------------------------------- every path and command a newcomer reads

GUIDES = ("README.md", "docs/architecture.md")
FENCE = re.compile(r"```(\w*)\n(.*?)```", re.S)
PLACEHOLDER = re.compile(r"<[^>]+>")


TOP = {p.name for p in REPO.iterdir()} - {".git", ".venv", "reports"}


def _guide_paths(text: str) -> set[str]:
    """Paths from the repository's top in code spans and fences (a bare file name, an
    output folder, a placeholder or a URL is not one)."""
    found = set()
    spans = re.findall(r"`([^`\n]+)`", text) + [b for _, b in FENCE.findall(text)]
    for span in spans:
        for tok in span.split():
            tok = tok.strip(",;:()").split("#")[0]
            if tok.split("/")[0] in TOP and not re.search(r"[<>*…$~=]|://", tok):
                found.add(tok)
    return found


def _guide_commands(text: str) -> list[tuple[str, bool]]:
    """(command, whole): the lines of sh blocks are whole commands; a code span in the prose
    that starts with a command may be only its name (`minegen sweep`)."""
    out = []
    for lang, block in FENCE.findall(text):
        if lang == "sh":
            out += [(line.split("  #")[0].split(" # ")[0].strip(), True)
                    for line in block.splitlines()]
    out += [(c, False) for c in
            re.findall(r"`((?:make|minegen|tilegen|\.venv/bin/\w+) [^`\n]*)`", text)]
    return [(c, whole) for c, whole in out if c and not c.startswith("echo")]


def test_every_path_the_guides_name_exists():
    missing = []
    for guide in GUIDES:
        for path in _guide_paths((REPO / guide).read_text(encoding="utf-8")):
            if not (REPO / path).exists():
                missing.append(f"{guide}: {path}")
    assert missing == []


def test_every_command_the_guides_name_runs(tmp_path):
    """make targets exist; each minegen / tilegen command line is one its parser accepts
    (placeholders such as <run id> filled in); the board and table commands and the Python
    examples run for real (in a temporary folder); the benchmarks answer --help."""
    import shlex

    from cli_harness import run_cli
    from minegen.cli import build_parser as minegen_parser
    from tilegen.cli import build_parser as tilegen_parser

    targets = set(re.findall(r"^([\w-]+):", (REPO / "Makefile").read_text(), re.M))
    parsers = {"minegen": minegen_parser(), "tilegen": tilegen_parser()}
    checked = {"make": 0, "cli": 0, "ran": 0, "bench": 0}
    for guide in GUIDES:
        text = (REPO / guide).read_text(encoding="utf-8")
        for cmd, whole in _guide_commands(text):
            argv = shlex.split(PLACEHOLDER.sub("x", cmd))
            prog = argv[0].removeprefix(".venv/bin/")
            if prog == "make":
                assert argv[1] in targets, (guide, cmd)
                checked["make"] += 1
            elif prog in parsers and not whole:  # a name in prose: the command exists
                assert argv[1] in parsers[prog]._subparsers._group_actions[0].choices, cmd
            elif prog in parsers:
                parsers[prog].parse_args(argv[1:])  # argparse exits on a bad line
                checked["cli"] += 1
                if argv[1] in ("generate", "validate") and "x" not in argv:
                    p = run_cli(prog, *argv[1:], cwd=tmp_path)
                    assert p.returncode == 0, (guide, cmd, p.stderr)
                    checked["ran"] += 1
            elif prog == "python" and argv[1].startswith("benchmarks/"):
                p = subprocess.run([sys.executable, str(REPO / argv[1]), "--help"],
                                   capture_output=True, text=True, timeout=120, cwd=REPO)
                assert p.returncode == 0, (guide, cmd, p.stderr)
                checked["bench"] += 1
            elif prog == "python":
                assert (REPO / argv[-2 if argv[-1] == "-q" else -1]).exists(), (guide, cmd)
            else:
                raise AssertionError(f"{guide}: a command this test does not know: {cmd}")
        for lang, block in FENCE.findall(text):
            if lang == "python":
                exec(compile(block, guide, "exec"), {})
                checked["ran"] += 1
    assert checked["make"] and checked["cli"] and checked["ran"], checked
