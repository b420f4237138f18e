"""Applying a real overlay run's writes: what changed before the run started is the run's to change, what changed
while it ran is kept (told apart by the project's stamps at the start, not by file times)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from tui_agent.core.project import Project
from tui_agent.core.sandbox import Sandbox, SandboxPolicy, ignored, launch, writable_runs
from tui_agent.core.sandbox.harvest import Harvest, harvest
from tui_agent.core.sandbox.launch import probe_bubblewrap
from tui_agent.core.sandbox import Snippet
from tui_agent.core.sandbox.protected import LowerState
from tui_agent.core.sandbox.launch import OverlayDirs, prepare


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    folder = tmp_path / "scratch"
    folder.mkdir()
    problem = launch.probe_overlay(folder)
    if problem is not None:
        pytest.skip(problem)
    return folder


def overlay_run(project: Path, scratch: Path, shell: str) -> OverlayDirs:
    """Run `shell` in `project` mounted as an overlay (as writable bubblewrap runs see it); its writes stay upper."""
    dirs = prepare(scratch)
    subprocess.run([*launch.overlay_prefix(dirs, project), "/bin/sh", "-c", f'cd "{project}" && {shell}'], check=True,
                   env={"PATH": "/usr/bin:/bin"})
    return dirs


def apply(dirs: OverlayDirs, project: Path, start: LowerState, since: int,
          aside: Path) -> Harvest:
    return harvest(dirs.upper, project, since_ns=since, aside=aside, rootless=dirs.rootless, start=start)


def test_files_written_just_before_the_run_are_the_runs_to_delete_and_change(tmp_path: Path, scratch: Path) -> None:
    project = tmp_path / "project"
    (project / "build").mkdir(parents=True)
    (project / "build" / "old.txt").write_text("the previous call's output\n")  # a moment before the run
    (project / "src.txt").write_text("the person's edit, saved just before\n")
    start, since = LowerState.take(project), time.time_ns()
    dirs = overlay_run(project, scratch, "rm build/old.txt && echo run > src.txt")
    found = apply(dirs, project, start, since, tmp_path / "aside")
    assert (found.kept, found.notes, found.paths) == ([], [], ["build/old.txt", "src.txt"])
    assert not (project / "build" / "old.txt").exists() and (project / "src.txt").read_text() == "run\n"


def test_what_someone_changes_while_the_run_runs_is_kept_and_the_runs_version_set_aside(tmp_path: Path,
                                                                                      scratch: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    for name in ("deleted-by-run.txt", "changed-by-both.txt", "deleted-by-person.txt", "untouched.txt"):
        (project / name).write_text("before\n")
    start, since = LowerState.take(project), time.time_ns()
    dirs = overlay_run(project, scratch, "rm deleted-by-run.txt && echo run > changed-by-both.txt && "
                                         "echo run > deleted-by-person.txt && echo run > created-by-both.txt && "
                                         "echo run > created-by-run.txt")
    (project / "deleted-by-run.txt").write_text("person\n")  # all during the run: after its start, before the harvest
    (project / "changed-by-both.txt").write_text("person\n")
    (project / "deleted-by-person.txt").unlink()
    (project / "created-by-both.txt").write_text("person\n")
    aside = tmp_path / "aside"
    found = apply(dirs, project, start, since, aside)
    assert sorted(found.kept) == ["changed-by-both.txt", "created-by-both.txt", "deleted-by-person.txt",
                                  "deleted-by-run.txt"]
    assert found.paths == ["created-by-run.txt"]
    assert {path.name: path.read_text() for path in project.iterdir()} == {
        "deleted-by-run.txt": "person\n", "changed-by-both.txt": "person\n", "created-by-both.txt": "person\n",
        "untouched.txt": "before\n", "created-by-run.txt": "run\n"}
    assert {path.name: path.read_text() for path in aside.iterdir()} == {
        "changed-by-both.txt": "run\n", "created-by-both.txt": "run\n", "deleted-by-person.txt": "run\n"}


def test_a_path_the_start_stamps_do_not_cover_is_judged_by_its_change_time(tmp_path: Path, scratch: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "a.txt").write_text("before\n")
    (project / "b.txt").write_text("before\n")
    time.sleep(0.1)  # past the slack a change time is given without stamps (see protected.CHANGE_SLACK_NS)
    start, since = LowerState.take(project, limit=1), time.time_ns()  # only the project folder itself is stamped
    assert not start.complete and not start.knows("a.txt")
    dirs = overlay_run(project, scratch, "rm a.txt b.txt")
    (project / "b.txt").write_text("person\n")
    found = apply(dirs, project, start, since, tmp_path / "aside")
    assert found.paths == ["a.txt"] and found.kept == ["b.txt"] and (project / "b.txt").read_text() == "person\n"


def test_ignored_files_are_judged_by_the_stamps_and_reported_from_the_harvest(tmp_path: Path, scratch: Path) -> None:
    """The ignored files (a virtualenv, build output) are stamped with the rest, in the one walk the run's start takes,
    and what the run changed among them comes from the harvest, with the bytes it replaced (no walk after the run)."""
    project = tmp_path / "project"
    (project / "build").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / ".gitignore").write_text("build/\n")
    (project / "build" / "old.txt").write_text("the previous call's output\n")
    (project / "build" / "mine.txt").write_text("before\n")
    start, since = LowerState.take(project), time.time_ns()
    assert start.knows("build/old.txt") and start.knows(".gitignore") and start.knows("build/new.txt")
    dirs = overlay_run(project, scratch, "rm build/old.txt build/mine.txt && echo x > build/new.txt && echo y > a.txt")
    (project / "build" / "mine.txt").write_text("the person's, during the run\n")
    found = apply(dirs, project, start, since, tmp_path / "aside")
    assert (found.paths, found.kept) == (["a.txt", "build/new.txt", "build/old.txt"], ["build/mine.txt"])
    assert sorted(path.name for path in (project / "build").iterdir()) == ["mine.txt", "new.txt"]
    notes, changes = ignored.report(project, found.written, found.before, None)
    assert [(change.path, change.change, change.before) for change in changes] == [
        ("build/new.txt", "created", None), ("build/old.txt", "removed", b"the previous call's output\n")]
    assert notes == ["the run changed files git ignores (git status does not show them; /undo puts back what it can "
                     "and lists the rest): build/new.txt (created), build/old.txt (removed)"]


FSMONITOR = """printf '[core]\\n\\trepositoryformatversion = 0\\n\\tbare = false\\n\\tworktree = .\\n\\tfsmonitor = "touch %s; false"\\n' > %s"""
HOST_GIT = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "GIT_CONFIG_NOSYSTEM": "1"}


def test_a_folder_the_run_makes_into_a_repository_is_refused_whatever_its_name(tmp_path: Path, scratch: Path) -> None:
    """git takes a folder with a HEAD and objects/ and refs/ (or a `commondir`) for a repository: the run may neither
    complete one the person's folder starts (data/), nor make one (wt/); one short of it is applied (docs/)."""
    project, canary = tmp_path / "project", tmp_path / "fsmonitor-ran"
    for folder in ("data/objects", "data/refs", "docs/refs"):
        (project / folder).mkdir(parents=True)
    start, since = LowerState.take(project), time.time_ns()
    dirs = overlay_run(project, scratch, "printf 'ref: refs/heads/main\\n' > data/HEAD && "
                       f"{FSMONITOR % (canary, 'data/config')} && echo x > docs/HEAD && mkdir wt && "
                       "printf 'ref: refs/heads/main\\n' > wt/HEAD && echo /elsewhere > wt/commondir")
    found = apply(dirs, project, start, since, tmp_path / "aside")
    assert found.paths == ["docs/HEAD"]
    assert [note.split(":", 1)[0] for note in found.notes if "refused: a git repository" in note] == ["data", "wt"]
    assert sorted(os.listdir(project / "data")) == ["objects", "refs"] and not (project / "wt").exists()
    copies = list((project / ".agent" / "quarantine").glob("*/data"))
    assert len(copies) == 1 and sorted(os.listdir(copies[0])) == ["HEAD.quarantined", "config"]
    for folder in (project / "data", copies[0]):
        subprocess.run(["git", "-C", str(folder), "status"], capture_output=True, env=HOST_GIT, check=False)
    assert not canary.exists()


def test_the_root_of_a_project_without_git_is_never_made_a_repository(tmp_path: Path, scratch: Path) -> None:
    """The root cannot be refused: the entries the run adds that give it git's layout are (its config is a file)."""
    project, canary = tmp_path / "project", tmp_path / "fsmonitor-ran"
    project.mkdir()
    start, since = LowerState.take(project), time.time_ns()
    dirs = overlay_run(project, scratch, f"mkdir objects refs && echo 'ref: refs/heads/main' > HEAD && "
                       f"{FSMONITOR % (canary, 'config')}")
    found = apply(dirs, project, start, since, tmp_path / "aside")
    assert found.paths == ["config"] and sorted(os.listdir(project)) == [".agent", "config"]
    assert sorted(note.split(":", 1)[0] for note in found.notes) == ["HEAD", "objects", "refs"]
    subprocess.run(["git", "-C", str(project), "status"], capture_output=True, env=HOST_GIT, check=False)
    assert not canary.exists()


@pytest.mark.parametrize("name", ["objects", "refs", "HEAD"])
def test_a_repository_named_like_a_mark_of_gits_layout_at_the_root_is_refused(tmp_path: Path, scratch: Path,
                                                                                name: str) -> None:
    """A folder at the root named `objects`, `refs` or `HEAD` is judged as a repository itself, not only as a mark
    of the root's layout: the run's bare repository there is refused whole."""
    project, canary = tmp_path / "project", tmp_path / "fsmonitor-ran"
    project.mkdir()
    start, since = LowerState.take(project), time.time_ns()
    dirs = overlay_run(project, scratch, f"mkdir -p {name}/objects {name}/refs && echo 'ref: refs/heads/main' > "
                       f"{name}/HEAD && {FSMONITOR % (canary, name + '/config')} && echo x > a.txt")
    found = apply(dirs, project, start, since, tmp_path / "aside")
    assert found.paths == ["a.txt"] and not os.path.lexists(project / name), found.notes
    assert [note.split(":", 1)[0] for note in found.notes if "refused: a git repository" in note] == [name]


def test_a_link_on_the_way_to_a_protected_glob_is_refused(tmp_path: Path, scratch: Path) -> None:
    """`secrets/*` protects what lies in secrets/: a symlink the run leaves at `secrets` would put it elsewhere."""
    project = tmp_path / "project"
    (project / ".agent").mkdir(parents=True)
    (project / ".agent" / "config.toml").write_text('[sandbox]\nprotected = ["secrets/*"]\n')
    start, since = LowerState.take(project), time.time_ns()
    dirs = overlay_run(project, scratch, f"mkdir {tmp_path}/out && ln -s {tmp_path}/out secrets && echo x > a.txt")
    found = apply(dirs, project, start, since, tmp_path / "aside")
    assert found.paths == ["a.txt"] and not os.path.lexists(project / "secrets")
    assert [note for note in found.notes if "the protected path secrets;" in note], found.notes


@pytest.mark.skipif(probe_bubblewrap() is not None, reason="needs bubblewrap")
async def test_warm_overlay_workers_closed_unused_leave_no_record_for_the_next_start(tmp_path: Path,
                                                                                 scratch: Path) -> None:
    """A record outliving its process is what the next start applies (and what a read-only project cannot remove)."""
    project = Project.at(tmp_path / "project")
    project.root.mkdir()
    box = await Sandbox.start(project, tier="bubblewrap", warm_workers=2)
    try:
        assert box.runs.overlay_problem is None
        assert len(list((project.cache_dir / "overlays").glob("*.json"))) == 2  # the two warm writable workers'
        assert (await box.run(Snippet("open('f.txt', 'w').write('x')"), SandboxPolicy())).ok
    finally:
        await box.aclose()
    assert list((project.cache_dir / "overlays").glob("*.json")) == []
    assert (project.root / "f.txt").read_text() == "x"


@pytest.mark.skipif(probe_bubblewrap() is not None, reason="needs bubblewrap")
async def test_a_run_whose_overlay_cannot_be_recorded_says_so_once(tmp_path: Path, scratch: Path) -> None:
    """No record, no crash recovery for that run: the person is told (the run's notes), not left to find out."""
    project = Project.at(tmp_path / "project")
    project.cache_dir.mkdir(parents=True)
    (project.cache_dir / "overlays").write_text("a file where the records folder should be\n")
    box = await Sandbox.start(project, tier="bubblewrap", warm_workers=0)
    try:
        assert box.runs.overlay_problem is None
        first = await box.run(Snippet("open('f.txt', 'w').write('x')"), SandboxPolicy())
        second = await box.run(Snippet("open('g.txt', 'w').write('y')"), SandboxPolicy())
    finally:
        await box.aclose()
    assert first.ok and second.ok
    assert (project.root / "f.txt").read_text() == "x" and (project.root / "g.txt").read_text() == "y"
    told = [note for note in box.notices if "cannot be recorded for crash recovery" in note]
    assert len(told) == 1 and "File exists" in told[0] and ".agent/cache/overlays" in told[0]
    assert told[0] in first.stderr and "crash recovery" not in second.stderr


def test_a_forged_overlay_record_applies_nothing_and_only_a_real_overlay_of_this_user_is_applied(tmp_path: Path) -> None:
    """The records in `.agent/cache/overlays/` are files in the project (hostile): a folder outside the temporary
    folder, a link to one, a malformed or unreadable record, a path no file system takes are each dropped, unapplied;
    the one record naming a real overlay folder of this user is applied (then every record is gone)."""
    project = Project.at(tmp_path / "project")
    records = project.cache_dir / writable_runs.RECORDS
    records.mkdir(parents=True)
    sandbox_temp = Path(tempfile.mkdtemp(prefix="tuiagent-sandbox-"))
    try:
        outside = tmp_path / "tuiagent-sandbox-x" / "overlay-x"
        real = sandbox_temp / "overlay-real"
        for folder in (outside, real, sandbox_temp / "overlay-bad", sandbox_temp / "overlay-linked"):
            (folder / "upper").mkdir(parents=True)
            (folder / "upper" / f"{folder.name}.txt").write_text("from a run\n")
        (sandbox_temp / "overlay-link").symlink_to(sandbox_temp / "overlay-linked")
        forged: dict[str, object] = {
            "outside": {"folder": str(outside), "rootless": True},
            "link": {"folder": str(sandbox_temp / "overlay-link"), "rootless": True},
            "not-bool": {"folder": str(sandbox_temp / "overlay-bad"), "rootless": "yes"},
            "nul": {"folder": f"{sandbox_temp}/overlay-\0", "rootless": True},
            "list": [str(real)],
        }
        for name, data in forged.items():
            (records / f"x-{name}.json").write_text(json.dumps(data))
        (records / "x-broken.json").write_text("{not json")
        (records / "x-to-folder.json").symlink_to(real / "upper" / "overlay-real.txt")
        (records / "x-real.json").write_text(json.dumps({"folder": str(real), "rootless": real.stat().st_uid != 0}))
        notes = writable_runs.recover(project.root, project.cache_dir)
        assert sorted(path.name for path in project.root.iterdir() if path.name != ".agent") == ["overlay-real.txt"]
        assert notes == ["overlay-real.txt: written by a run interrupted earlier; applied"]
        assert list(records.iterdir()) == [] and not real.exists() and (outside / "upper" / "overlay-x.txt").exists()
    finally:
        shutil.rmtree(sandbox_temp)


def test_a_run_never_leaves_write_access_for_other_accounts_it_added(tmp_path: Path, scratch: Path) -> None:
    """Not for a folder, a file it made nor one it changed; write access the person's own files had stays."""
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    project.chmod(0o755)
    (project / "src").chmod(0o755)
    (project / "shared.txt").write_text("the person's, group-writable\n")
    (project / "shared.txt").chmod(0o664)
    (project / "mine.txt").write_text("the person's\n")
    (project / "mine.txt").chmod(0o644)
    start, since = LowerState.take(project), time.time_ns()
    dirs = overlay_run(project, scratch, "chmod 777 src && echo x > src/new.sh && chmod 666 src/new.sh && "
                                         "echo run >> shared.txt && echo run >> mine.txt && chmod 666 mine.txt && "
                                         "mkdir -m 777 made")
    found = apply(dirs, project, start, since, tmp_path / "aside")
    assert found.kept == [] and (project / "src" / "new.sh").read_text() == "x\n"
    modes = {name: (project / name).stat().st_mode & 0o777 for name in ("src", "src/new.sh", "shared.txt",
                                                                        "mine.txt", "made")}
    assert not modes.pop("made") & 0o002  # made by the harvest, under the person's umask
    assert modes == {"src": 0o755, "src/new.sh": 0o644, "shared.txt": 0o664, "mine.txt": 0o644}
