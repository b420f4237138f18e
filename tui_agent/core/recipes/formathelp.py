"""FORMAT_HELP: the recipe file format in a few lines, for the `create_recipe` tool description and `--help` texts."""

FORMAT_HELP = """\
A recipe is `.agent/recipes/<name>.toml`:
  description = "one line"        # required
  enabled = true                  # optional (default true)
  priority = 0                    # optional: lower runs first when several recipes fire on one event (ties: by name)
  requires = ["tool_name"]        # optional: catalog tools it needs (the action's tool is implied)
  [trigger]
  on = "file_changed"             # or "command" (/<name> args in the TUI), "session_start", "tool_authored",
                                  # "tool_drifted" (a dependency file of a tool changed and its tests fail)
  paths = ["src/**/*.py", "*.md"] # file_changed only: globs (no "/" = in any folder)
  debounce_ms = 200               # file_changed only, optional: wait for this much quiet
  [action]
  tool = "tool_name"              # with args = { path = "{path}" }
  # or: prompt = "Review {path}"  # handed to the agent as a user turn
Placeholders: {path} (one changed file; one run per file), {paths} (all of them; a whole-value "{paths}" is a list)
for file_changed; {args} (text after /<name>) for command; {name} (the new tool) for tool_authored;
{name} and {repair} (the repair prompt: drift diff, failing tests, source) for tool_drifted; {{ }} for braces.
A change a recipe makes to files matching its own trigger never re-triggers it; runaway recipes are paused."""
