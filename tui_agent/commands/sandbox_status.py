"""`describe(sandbox)`: what `tuiagent sandbox status` says each protection covers and misses, and the host doors."""

from __future__ import annotations

import ipaddress
import os
from typing import TYPE_CHECKING, Any

from tui_agent.core import projectfs
from tui_agent.core.sandbox import REFUSED, TIER_BUBBLEWRAP, Sandbox, protected_paths

if TYPE_CHECKING:
    from tui_agent.core.sandbox import SandboxPolicy

FALLBACK_MISSES = (
    "filesystem: code can write anywhere the user can, not only the project (no mount namespace)",
    "protected paths (.git, .agent/ with the catalog, journal, state.db and config, the hooks folder, editor and shell "
    "files) are not read-only for agent code: existing ones can be changed (tuiagent still re-checks the catalog, "
    "validates the journal and hashes of cached copies, and scrubs secrets from hook runs); new ones are quarantined "
    "after the run",
    "home directory: ~/.ssh and other files of the user are readable",
    "/proc: no pid namespace, so other same-user processes are visible; their /proc/<pid>/environ is readable and, "
    "where the kernel allows ptrace between them (Yama ptrace_scope 0 or absent), their memory is writable through "
    "/proc/<pid>/mem unless non-dumpable (only the tuiagent process is made non-dumpable): a dumpable program of "
    "yours (a shell, an editor, a tmux server) can be made to run code outside the sandbox",
    "the project's virtualenv is not read-only during runs that may write the project (no mount namespace): a "
    ".pth or sitecustomize planted in it is flagged after the run, not prevented",
    "host socket folders (/run, /var/run, /var/tmp, /tmp, $XDG_RUNTIME_DIR) are visible (no mount namespace); "
    "their unix sockets stay unreachable only through seccomp's refusal of socket(AF_UNIX)",
    "read-only runs (project_writable=False: a tool's import and its own tests during validation, startup and "
    "drift checks) are not enforced: that code can change the user's project files",
    "daemons that double-fork, change session and re-exec with a cleared environment after the worker died "
    "can escape the cleanup",
    "delayed effects: a git config or hook rewritten by agent code runs (without secrets in its environment) when "
    "tuiagent next calls git or commits; a rewritten .agent/config.toml applies to the next session "
    "(tests/hostile/delayed.py lists each case)",
)

SWEPT_AFTER_THE_RUN = (
    "protected paths that do not exist yet are moved to .agent/quarantine/ right after a run that may write the "
    "project without an overlay (the rlimits tier, or bubblewrap where none can be mounted), not blocked during it: "
    "a program of yours reading them while the run lasts (direnv, an editor) sees what agent code wrote")

BOTH_TIERS_MISSES = (
    "MCP servers you trusted (`tuiagent mcp trust`) run outside the sandbox, as in Claude Code (with HOME, PATH, USER, "
    "SHELL, TERM and what its config lists in its environment, no API key): their approval pins the project files "
    "they can load (see host doors), not what they load from node_modules, a virtualenv, a hidden folder, a folder a "
    "symlink leads to, or a root-level module a `python -m` package imports; agent code that changes those runs "
    "when a later session starts the server",
)


def describe(sandbox: Sandbox) -> dict[str, Any]:
    """The tier in force and what each protection covers and misses (for `sandbox status`), from `sandbox.facts()`."""
    facts, strong = sandbox.facts(), sandbox.tier == TIER_BUBBLEWRAP
    overlay = strong and sandbox.runs.overlay_problem is None
    protections = _protections(sandbox.tier, sandbox.policy, facts)
    protections.update(_bubblewrap_protections(overlay) if strong
                       else _fallback_protections(facts["seccomp"], sandbox.parent_undumpable))
    misses = [*([] if strong else FALLBACK_MISSES), *([] if overlay else [SWEPT_AFTER_THE_RUN]), *BOTH_TIERS_MISSES]
    if not strong and not facts["cgroup_kill"]:
        misses.append("stopping: without a cgroup a run's processes are found in /proc (its session, process group, "
                      "marker variable and the worker's descendants); one that leaves all four outlives the run")
    if facts["pids_cgroup"]:
        protections["processes"] = "a pids cgroup per run caps its processes"
    elif not process_cap_enforced():
        protections["processes"] = "NOT capped: RLIMIT_NPROC does not apply to root and no pids cgroup is available"
        misses.append("processes: no cap as root without a pids cgroup; a fork bomb is bounded only by the timeout")
    info: dict[str, Any] = {
        "tier": sandbox.tier, "level": facts["tier_levels"][sandbox.tier], "strong": strong, "protections": protections,
        "expected_misses": misses, "host_doors": host_doors(strong, overlay), "warning": sandbox.warning,
        "bubblewrap_problem": sandbox.bubblewrap_problem, "warm_workers": sandbox.warm_workers,
        "run_attribution": ("exact: writable runs see the project through an overlay, and only what they wrote is "
                            "applied and undone" if sandbox.runs.overlay_problem is None else sandbox.runs.overlay_problem),
        "protected_paths": protected_paths(sandbox.project.root),
    }
    if sandbox.toolchain is not None:
        info["toolchain"] = sandbox.toolchain.describe(paths_hidden=strong)
    return info


def _protections(tier: str, policy: SandboxPolicy, facts: dict[str, Any]) -> dict[str, str]:
    """What each protection both tiers have covers on `tier` under `policy`."""
    strong, seccomp = tier == TIER_BUBBLEWRAP, facts["seccomp"]
    protections: dict[str, str] = {
        "process": "a separate process per run (never the tuiagent process); warm workers are pre-started",
        "limits": (f"CPU {policy.cpu_s} s, memory {policy.memory_mb} MiB, file size {policy.file_size_mb} MiB, "
                   f"open files {policy.open_files}, processes {policy.processes} (hard = soft)"),
        "timeout": f"wall clock {policy.timeout_s:g} s, then SIGKILL of every process of the run: "
                   + stop_mechanism(tier, facts),
        "output": f"stdout and stderr capped at {policy.output_bytes} bytes each, with a note when cut",
        "environment": "allow-listed variables only (" + ", ".join(facts["allowed_env"])
                       + ", PATH, HOME, TMPDIR, and the build variables listed under toolchain); API keys and every "
                       "*_TOKEN, *_KEY, *_SECRET or password variable never reach agent code, even when configured",
        "seccomp": (f"filter ({seccomp}, built by libseccomp): no socket() when the network is off (IPv4/IPv6 only when on), no ptrace, no raising rlimits, "
                    "no mount/unshare/new user namespace, no kernel module, bpf, keyctl or io_uring")
                   if seccomp else "not available: libseccomp2 is not installed",
        "host_sockets": ("no unix socket can be created, with or without the network (socket(AF_UNIX) refused by "
                         "seccomp; socket pairs inside still work, datagram pairs are refused): D-Bus, Docker, "
                         "ssh-agent, gpg-agent and tmux sockets, by path or abstract name, are unreachable"
                         + ("; /run, /var/run, /var/tmp, /tmp and $XDG_RUNTIME_DIR are hidden" if strong else ""))
                        if seccomp else "NOT protected: no seccomp (libseccomp2 is not installed)",
        "ignored_files": ("after a run that may write the project, every change to a file git ignores (caches such as "
                          "__pycache__ and .pytest_cache aside) is told to you and the model, and a .pth, "
                          "sitecustomize.py or usercustomize.py created or changed in the project, its virtualenv or "
                          "your user site-packages is flagged; /undo removes the files a turn created and puts back those it "
                          "changed whose bytes it kept (up to 256 KiB each), and lists every other one as not undone"
                          + ("; the project's virtualenv is read-only in such runs unless the call says it changes "
                             "it (run_shell changes_venv: true, its own approval)" if strong else "")),
        "capabilities": "none held when agent code runs (effective, permitted, inheritable and ambient sets empty)"
                        + (" and no_new_privs set, so no program it starts can gain one (the bounding set is emptied "
                           "where the kernel allows it; inside bubblewrap's user namespace it cannot be)" if seccomp else ""),
        "git_hooks": "catalog commits run your hooks without secrets in their environment; after agent code could write "
                     "the project (a run with the project writable, an unreviewed write_file or edit_file), a catalog "
                     "commit that would run a hook is deferred, nothing lost, until you run `tuiagent tools commit` "
                     "or /commit: a hook may run project files (./scripts/check.sh, lint-staged) agent code changed",
    }
    return protections


def _bubblewrap_protections(overlay: bool) -> dict[str, str]:
    """What the bubblewrap tier adds: namespaces, a read-only root, a hidden home, its own network and /proc; where a
    protected path a run creates ends (`overlay`: runs that may write the project see it through an overlay)."""
    created = ("never reaches the project: the apply step refuses it and copies it to .agent/quarantine/" if overlay
               else "is moved to .agent/quarantine/ right after the run (no overlay can be mounted here; not blocked "
                    "during it: that would need a file in your project)")
    return dict(
        namespaces="new pid, ipc, uts and network namespaces; the process tree dies with its sandbox",
        filesystem="/ read-only; the project is the only writable place; a private /tmp",
        read_only_in_project="the protected paths below (bound read-only, `.agent/` as a whole); a protected path a "
                             f"run creates or replaces (a symlink, a new match of your globs) {created}",
        read_only_runs="runs with project_writable=False (a tool's import and its own tests during validation, "
                       "startup and drift checks) see the whole project read-only, with a private /tmp",
        home="the user's home (and /root, /home) hidden behind an empty tmpfs, except the toolchain folders listed "
             "under toolchain, bound read-only with the secrets inside them (e.g. ~/.cargo/credentials) masked; "
             "~/.ssh, ~/.aws, ~/.gnupg, ~/.netrc, ~/.git-credentials, ~/.config/gh, ~/.docker/config.json, ~/.kube, "
             "password stores and browser profiles are never bound",
        network="always its own network namespace with only loopback; a grant (a tool's NETWORK = True or list of "
                "names, a run_shell or run_python call's network: true, limited to `[sandbox] network` when set; "
                "shown in its approval) adds one way out: a proxy on the host (HTTP CONNECT, HTTP, SOCKS5; HTTP_PROXY and "
                "ALL_PROXY point at it; what it refuses: the network host door below)",
        proc="own /proc: ancestors and their environment are invisible",
        processes_inside="the worker is process 1 of its pid namespace (no bubblewrap init); bubblewrap installs "
                         "a seccomp filter and no_new_privs before it starts, so every process inside is "
                         "filtered; a batch's process is non-dumpable, so no call of the batch can write its "
                         "memory (/proc/<pid>/mem, ptrace) nor the other calls' answers",
    )


def _fallback_protections(seccomp: str | None, parent_undumpable: bool) -> dict[str, str]:
    """What the rlimits tier can say of the network and /proc without namespaces."""
    return dict(
        network=("off through seccomp (socket() refused); a run granted the network is refused, not run: without a "
                 "network namespace it would reach services on this machine's loopback (127.0.0.1, ::1) and LAN "
                 "past the proxy (the bubblewrap tier serves grants)")
                if seccomp else "NOT isolated: no namespace and no seccomp on this machine (network grants are refused)",
        proc="tuiagent's own /proc/<pid>/environ is unreadable (non-dumpable)" if parent_undumpable
             else "ancestors' /proc/<pid>/environ may be readable",
    )


def stop_mechanism(tier: str, facts: dict[str, Any]) -> str:
    """How a run is stopped here: the strongest of cgroup.kill, the PID namespace, the session."""
    if facts["cgroup_kill"]:
        return "its own cgroup's cgroup.kill (nothing can leave a cgroup)"
    if tier == TIER_BUBBLEWRAP:
        return "its PID namespace's init (nothing can leave the namespace)"
    return ("its session, process group, marked environment and descendants, found in /proc (a process that left "
            "the session, cleared its environment and was orphaned escapes this)")


def process_cap_enforced() -> bool:
    """True when a per-run process cap really holds: a pids cgroup, or RLIMIT_NPROC for a non-root user."""
    return bool(Sandbox.facts()["pids_cgroup"]) or os.geteuid() != 0


def git_neutralised_keys() -> list[str]:
    """The repository config keys the git door neutralises until trust (`filter.*.clean` for a subsection's)."""
    from tui_agent.core.versioning import gitconfigscan

    # The scanner's own tables (no public name for them yet): never a copy of them here.
    plain: dict[str, str] = getattr(gitconfigscan, "_PLAIN", {})
    sub: dict[tuple[str, str], str] = getattr(gitconfigscan, "_SUBSECTION", {})
    return sorted({*plain, *(f"{section}.*.{name}" for section, name in sub), "pager.*", "submodule.*.update"})


def _git_door() -> str:
    from tui_agent.core.versioning.gitdoor import SAFE_CONFIG

    keys = git_neutralised_keys()
    sections = sorted({key.split(".", 1)[0] for key in keys})
    fixed = ", ".join(key for key, _value in SAFE_CONFIG if key.startswith("core."))
    return (f"every git process tuiagent starts (GitPython's too) runs with hooks off and {fixed} pinned; until you "
            f"trust the project, the repository's {len(keys)} command-running keys (in {', '.join(sections)}) are "
            f"neutralised; an untracked folder with a .git of its own is left out of checkpoints, never entered")


def _apply_step(strong: bool, overlay: bool) -> str:
    refuses = Sandbox.facts()["apply_refuses"]  # the apply step's own rules (protected.py)
    git = refuses["git"]
    nested = f"a nested repository (sub/{git})" if refuses["nested_repository"] else ""
    where = ("" if overlay else " (bubblewrap tier only: on this one runs write the project directly)" if not strong
             else " (through an overlay only: none can be mounted here, so runs write the project directly)")
    return (f"a run's writes reach the project only through it{where}; it refuses {nested}, any change to "
            f"{', '.join(f'{git}/{name}' for name in refuses['git_read_only'])} (only what commits write "
            f"is applied), {refuses['setid']} bits, special files ({', '.join(refuses['special_files'])}) and hard "
            f"links to a file outside the run; each refusal is said in a '{REFUSED.strip()}' note, with a copy in "
            f".agent/quarantine/ when there is something to look at (never a special file or a hard link)")


NETWORK_PROBES = ("127.0.0.1", "::1", "0.0.0.0", "10.0.0.1", "192.168.1.1", "fd00::1", "169.254.169.254",
                  "100.64.0.1", "224.0.0.1")
"""Addresses of each kind the proxy is asked about: the line says what its own policy answers for them."""


def _network(strong: bool) -> str:
    from tui_agent.core.network.policy import NetPolicy
    from tui_agent.core.network.proxy import PROXY_PORT

    policy = NetPolicy(True)
    reasons = list(dict.fromkeys(reason for probe in NETWORK_PROBES
                                 if (reason := policy.address_refusal(ipaddress.ip_address(probe))) is not None))
    where = "" if strong else " (bubblewrap tier only: on this one a run granted the network is refused)"
    return (f"a run's only way out, a proxy on 127.0.0.1:{PROXY_PORT} inside its sandbox{where}: it resolves names "
            f"itself and refuses names outside the grant and any destination that is or resolves to "
            f"{', '.join(reasons)} or an address of this machine")


def _mcp_servers() -> str:
    from tui_agent.core.mcp import coverage

    return (f"a project MCP server (it runs outside the sandbox) starts only once approved (`tuiagent mcp trust`) "
            f"with every project file it can load: its script's folder tree, its `python -m` package and the "
            f"modules importable from the root, the virtualenv or node_modules it runs from; a change to any of them "
            f"asks again, with the diff; a folder over {coverage.MAX_FILES} files or "
            f"{coverage.MAX_BYTES // 1_000_000} MB (dependencies: {coverage.MAX_DEPENDENCY_FILES} files) or a linked "
            f"folder leading out of the project is refused; its bytecode is kept outside the project")


def host_doors(strong: bool, overlay: bool) -> dict[str, str]:
    """The doors of tuiagent's host-side code -> what each refuses on this tier (read from its constants); `overlay`:
    runs that may write the project see it through an overlay."""
    return {"git processes": _git_door(), "project files": projectfs.REFUSES,
            "apply step": _apply_step(strong, overlay),
            "network": _network(strong), "mcp servers": _mcp_servers()}
