"""The engine: catalog, sandbox, agent loop and recipes, with no Textual import anywhere below."""
