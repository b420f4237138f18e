"""The one door to git: versioned catalog files (tools, recipes), commits from a temporary index, history and diffs."""
